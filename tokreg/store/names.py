"""What a tokenizer name may be: checked before anything is written, by the store (refs.py)
and by the lean write (sqlite_write.py), which must not import SQLAlchemy."""

from __future__ import annotations

import re

from ..errors import InputError

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")


def check_name(name: str) -> str:
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise InputError(
            f"tokenizer name {name!r} is not valid: use letters, digits, '.', '_' and '-', starting "
            "with a letter or digit (no '@', which separates the version)"
        )
    return name
