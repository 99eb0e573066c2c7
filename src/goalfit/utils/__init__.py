"""Shared helpers that are no algorithm's own: input validation, quiet solvers."""
