"""The one true line for an interruption around a version's write, once the database has been
asked whether it happened: written and complete, nothing written, or (when it could not be
asked) that it is one or the other and how to tell. writer.py and the lean write
(sqlite_write.py) ask each in their own way and say it with this."""

from __future__ import annotations

from typing import Optional

from ..errors import Interrupted


def interrupted_line(name: str, done: Optional[tuple[str, str]], *, asked: bool = True) -> Interrupted:
    """`done`: the (ref, content hash) written, None when nothing was; `asked`: False when the
    registry could not be asked."""
    if not asked:
        return Interrupted(
            f"interrupted while writing the next version of {name}; either it was written whole or not at all "
            f"(a write is all-or-nothing): `tokreg list {name}` shows which"
        )
    if done is not None:
        return Interrupted(f"interrupted after {done[0]} ({done[1]}) was written to the registry; it is complete")
    return Interrupted(
        f"interrupted before {name}'s new version was written; nothing was written, the registry is unchanged"
    )
