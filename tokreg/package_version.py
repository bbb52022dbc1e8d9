"""tokreg's own version, recorded with every training run."""

from __future__ import annotations

# Imported before the `try`: a Ctrl-C that lands inside this import must reach the command as
# itself, not as a NameError raised by the `except` clause naming a class never bound.
from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("tokreg")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+source"
