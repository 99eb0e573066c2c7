"""Methods: algorithms that turn a compiled problem into a classifier."""
