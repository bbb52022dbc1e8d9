"""Module attributes imported on first use (PEP 562), for packages whose parts a fresh process
should not pay for until it uses them (`tokreg`, and each algorithm family: loading a version
imports its model module alone).

    >>> __getattr__ = lazy.attributes(__name__, {"BpeOptions": "training"}, globals())
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any, Callable


def attributes(package: str, where: Mapping[str, str], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """A module `__getattr__` that imports `name` from the submodule `where[name]` of `package`
    on first use and keeps it in the module's `namespace`, so the next use is a plain lookup."""

    def __getattr__(name: str) -> Any:
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{where[name]}", package), name)
        namespace[name] = value
        return value

    return __getattr__
