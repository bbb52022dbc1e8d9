"""`python -m tokreg` runs the CLI."""

from .cli import main

main()
