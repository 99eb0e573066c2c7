"""The ``goalfit`` command line."""
