"""`python -m tokreg` runs the CLI, with the console script's Ctrl-C handling."""

from .console import main

main()
