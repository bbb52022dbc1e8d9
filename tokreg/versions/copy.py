"""`tokreg copy SRC DST [REF...]`: versions moved between registries (SQLite or PostgreSQL,
either way) with everything that describes them, keeping every hash.

    >>> Registry("laptop.db").copy_to(Registry("postgresql://team@db/tokreg"), ["gpt-mini@2"])

- What: the versions REFs name (every version when none is named), with their ancestors
  (parents first: the lineage still links them), unless `parents=False`, which records an
  absent parent as "not copied" (its `name@N` and hash are kept in the lineage row, as for a
  removed parent). Ordered by their id in the source, which puts every parent before its
  children. Aliases pointing at them are set in the destination only when asked (`aliases`).
- How: one destination transaction per version (store/copying.py), so an interruption leaves
  the versions before it copied and the one it was on either whole or absent.
- Idempotent: a version whose name already holds its content in the destination is not
  written again (reported as already there), so copying twice changes nothing.
- Numbers: `name@N` is kept when N was never used there; a taken number gives the next one,
  and the `origins` row records where it came from. Pins are by hash: they still resolve.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

from sqlalchemy import Connection, Engine

from ..errors import Interrupted
from ..store import aliases as alias_rows
from ..store import copying, engine, reads, refs
from ..store.copying import Copied
from ..store.engine import Location

__all__ = ["Copied", "copy"]


def _selected(conn: Connection, wanted: Sequence[str], parents: bool) -> list[int]:
    """Source version ids to copy, parents first (by id)."""
    if not wanted:
        return [v.id for v in refs.all_versions(conn)]
    ids = {refs.resolve(conn, r).id for r in wanted}
    todo = list(ids) if parents else []
    while todo:
        parent = copying.lineage_parent(conn, todo.pop())
        if parent is not None and parent not in ids:
            ids.add(parent)
            todo.append(parent)
    return sorted(ids)


def copy(
    src: Engine,
    src_location: str,
    dst: Engine,
    dst_where: Location,
    wanted: Sequence[str] = (),
    *,
    parents: bool = True,
    aliases: bool = False,
) -> list[Copied]:
    """Copies versions from the registry on `src` (named `src_location` in origins) into the one
    on `dst` (which exists, at `dst_where`); see the module docstring."""
    out: list[Copied] = []
    mapped: dict[int, int] = {}
    current: Optional[str] = None
    try:
        with engine.database_errors(dst_where), src.connect() as conn:
            for vid in _selected(conn, wanted, parents):
                v = refs.by_id(conn, vid)
                if v is None:  # removed from the source meanwhile
                    continue
                current = v.ref
                got, written, missing = copying.copy_version(conn, dst, v, src_location, mapped)
                mapped[vid] = got.id
                out.append(Copied(v.ref, got.ref, v.content_hash, written, missing))
                current = None
            if aliases:
                _aliases(conn, dst, mapped)
    except KeyboardInterrupt:
        done = ", ".join(c.ref for c in out if c.written) or "none"
        on = f"; {current} was being copied and is either whole or absent (one transaction)" if current else ""
        raise Interrupted(f"interrupted; versions copied into {dst_where.shown}: {done}{on}") from None
    return out


def _aliases(src_conn: Connection, dst: Engine, mapped: dict[int, int]) -> None:
    """Points each alias of the source at the copied version it names there (moves are kept in
    the destination's alias history, as `tokreg tag` keeps them)."""
    by_version = {vid: names for vid, names in reads.aliases_by_version(src_conn).items() if vid in mapped}
    with engine.write_transaction(dst) as conn:
        for vid, names in sorted(by_version.items()):
            v = refs.by_id(conn, mapped[vid])
            assert v is not None
            for alias in names:
                alias_rows.tag(conn, v, alias)
