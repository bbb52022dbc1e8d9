"""tokreg's own version, recorded with every training run."""

from __future__ import annotations

try:
    from importlib.metadata import PackageNotFoundError, version

    __version__ = version("tokreg")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+source"
