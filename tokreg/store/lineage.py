"""Lineage rows: the parent of each version and how it was derived from it (see the `Lineage`
model). Written by the writer in the version's own transaction; read by `show`, `log` and
`diff` to display the chain from a version back to its first ancestor.

Derivations: `trained` and `imported` (no parent), `reimported` (an import whose content is
that of a version already in the registry: that version is its parent), `extended` (continued
training on a new corpus), `added_tokens` (user tokens appended), `dropped_residues` (residues
split into their parents, versions/no_residues.py).
"""

from __future__ import annotations

from typing import Optional

from sqlalchemy import Connection, insert, select

from ..data import Lineage, LineageEntry, TokenizerData, VersionInfo
from ..errors import InputError
from .refs import all_versions, by_id
from .schema import Lineage as LineageTable
from .schema import Version, table


def write(conn: Connection, version_id: int, data: TokenizerData, content_hash: str) -> None:
    """The lineage row of a version being written: the one its data carries (an extension),
    else `trained`, `imported`, or `reimported` when a version with the same content exists."""
    line = data.lineage or {}
    derivation = line.get("derivation") or ("trained" if data.source == "train" else "imported")
    parent_id: Optional[int] = None
    parent_ref, parent_hash = line.get("parent_ref"), line.get("parent_hash")
    vt = table(Version)
    if parent_hash is not None:
        name, _, number = str(parent_ref).rpartition("@")
        parent_id = conn.execute(
            select(vt.c.id).where(vt.c.name == name, vt.c.number == int(number), vt.c.content_hash == parent_hash)
        ).scalar()
        parent = by_id(conn, parent_id) if parent_id is not None else None
        if parent is not None:
            # Again inside the write's lock: another writer may have used the name meanwhile.
            own = by_id(conn, version_id)
            assert own is not None
            check_derived_name(conn, own.name, parent, exclude=version_id)
    elif derivation == "imported":
        # An exported version imported back: same content, so the same tokenizer; say whose.
        same = conn.execute(
            select(vt.c.id, vt.c.name, vt.c.number)
            .where(vt.c.content_hash == content_hash, vt.c.id != version_id)
            .order_by(vt.c.id)
            .limit(1)
        ).first()
        if same is not None:
            derivation, parent_id = "reimported", same.id
            parent_ref, parent_hash = f"{same.name}@{same.number}", content_hash
    conn.execute(
        insert(table(LineageTable)).values(
            version_id=version_id,
            parent_id=parent_id,
            parent_ref=parent_ref,
            parent_hash=parent_hash,
            derivation=derivation,
            details=line.get("details"),
        )
    )


def of(conn: Connection, v: VersionInfo) -> Lineage:
    """A version's lineage; versions written before lineage was kept read as their source."""
    lt = table(LineageTable)
    row = conn.execute(select(lt).where(lt.c.version_id == v.id)).mappings().first()
    if row is None:
        return Lineage("trained" if v.source == "train" else "imported", None, recorded=False)
    parent = by_id(conn, row["parent_id"]) if row["parent_id"] is not None else None
    return Lineage(
        derivation=row["derivation"],
        parent=parent.ref if parent is not None else row["parent_ref"],
        parent_hash=row["parent_hash"],
        parent_exists=parent is not None,
        parent_id=row["parent_id"],
        details=row["details"],
    )


def chain(conn: Connection, v: VersionInfo, *, limit: int = 100) -> list[LineageEntry]:
    """`v` and its ancestors, nearest first. A removed ancestor ends the chain with its
    recorded ref and hash."""
    out: list[LineageEntry] = []
    seen: set[int] = set()
    cur: Optional[VersionInfo] = v
    while cur is not None and cur.id not in seen and len(out) < limit:
        seen.add(cur.id)
        line = of(conn, cur)
        out.append(LineageEntry(cur.ref, cur.content_hash, line))
        cur = by_id(conn, line.parent_id) if line.parent_id is not None else None
    return out


def children(conn: Connection, v: VersionInfo) -> list[str]:
    """Refs of the versions whose parent is `v`, oldest first."""
    lt = table(LineageTable)
    ids = conn.execute(select(lt.c.version_id).where(lt.c.parent_id == v.id).order_by(lt.c.version_id)).scalars()
    return [c.ref for c in (by_id(conn, i) for i in ids) if c is not None]


def check_derived_name(conn: Connection, name: str, base: VersionInfo, *, exclude: Optional[int] = None) -> None:
    """Refuses to write a version derived from `base` under a `name` whose versions come from
    another base (or from none): a name's versions would otherwise mix unrelated id spaces.
    The base's own name is always fine (`gpt@3` extended as `gpt@4`)."""
    if name == base.name:
        return
    versions = {v.id: v for v in all_versions(conn, name) if v.id != exclude}
    if not versions:
        return
    lt = table(LineageTable)
    rows = conn.execute(select(lt.c.version_id, lt.c.parent_id, lt.c.parent_ref).where(lt.c.version_id.in_(versions)))
    parents = {r.version_id: (r.parent_id, r.parent_ref) for r in rows}
    for vid in sorted(versions):
        parent_id, parent_ref = parents.get(vid, (None, None))
        if parent_id == base.id or parent_id in versions:
            continue
        other = f"from {parent_ref}" if parent_ref else "trained or imported, with no base"
        raise InputError(
            f"{name} already exists and {versions[vid].ref} is {other}, not from {base.ref}; "
            "choose another name for this extension (nothing was written)"
        )
