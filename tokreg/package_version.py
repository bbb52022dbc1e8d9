"""tokreg's own version, recorded with every training run.

Read from the installed distribution's METADATA, found on `sys.path` as `importlib.metadata`
finds it (the first `tokreg-*.dist-info` or `tokreg*.egg-info` folder in path order), without
importing `importlib.metadata`: that import (email, zipfile, csv, ...) cost a fresh `tokreg
train` process more CPU than counting a megabyte of text. Anything this does not read exactly
as `importlib.metadata.version` would (an egg-info file, a zip on the path, metadata without a
Version) is asked of it instead; tests/test_package_version.py compares the two.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Optional

NAME = "tokreg"


def _normalized(name: str) -> str:
    """A distribution name as `importlib.metadata` compares it (PEP 503, `-` as `_`)."""
    return re.sub(r"[-_.]+", "-", name).lower().replace("-", "_")


def _version_line(path: str) -> Optional[str]:
    """The first Version header of a metadata file (headers end at the first blank line), or
    None when it has none."""
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if not line.strip():
                break
            if line[:8].lower() == "version:":
                return line[8:].strip()
    return None


def _found() -> Optional[str]:
    """The Version of the first tokreg distribution on `sys.path`, or None when this cannot tell
    it the way `importlib.metadata` would (it is then asked)."""
    for entry in sys.path:
        where = entry or "."
        try:
            children = os.listdir(where)
        except OSError:  # not a folder (a zip, or gone): importlib.metadata reads those
            if os.path.exists(where):
                return None
            continue
        for child in children:
            low = child.lower()
            if not low.endswith((".dist-info", ".egg-info")):
                continue
            if _normalized(low.rpartition(".")[0].partition("-")[0]) != NAME:
                continue
            # The first one found is the one importlib.metadata takes: its METADATA, else its
            # PKG-INFO (an egg-info folder, as a source tree's `pip install -e` leaves).
            folder = os.path.join(where, child)
            for name in ("METADATA", "PKG-INFO"):
                try:
                    return _version_line(os.path.join(folder, name))
                except (OSError, UnicodeDecodeError):
                    continue
            return None
    return None


def _read() -> str:
    found = _found()
    if found is not None:
        return found
    # Imported before the `try`: a Ctrl-C that lands inside this import must reach the command
    # as itself, not as a NameError raised by the `except` clause naming a class never bound.
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(NAME)
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0.0.0+source"


__version__ = _read()
