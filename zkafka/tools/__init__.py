"""Command-line tools of the 0.7 bin/ directory, as functions the CLI calls."""
