"""Reading a version back. `read_version` is the one way from the database to a version's
content: it returns canonical content (content.py) checked against the version's recorded hash,
so load, verify, export, diff and reproduce all see either the recorded tokenizer or an
IntegrityError naming both hashes. A load reads the content stored once per version
(`version_contents`: one value); export, diff, verify and reproduce also read the token and
merge rows and check what they serialize to. The rest are the summaries `show` and `log` print.
"""

from __future__ import annotations

from typing import Any, Optional

from sqlalchemy import ColumnElement, Connection, LargeBinary, cast, func, or_, select

from .. import content
from ..data import (
    FirstMerge,
    MergeRow,
    MergeStages,
    RoundRow,
    StoredVersion,
    TokenRow,
    TopPiece,
    VersionInfo,
    VersionSummary,
)
from .schema import Alias, Merge, Sample, Token, TrainingRound, TrainingRun, VersionContent, table


def stored_content(conn: Connection, v: VersionInfo) -> Optional[bytes]:
    """The canonical content stored when `v` was written (None for a version whose rows did not
    hash to its hash when the registry was upgraded to store contents)."""
    if conn.dialect.name == "postgresql":
        # psycopg's binary format: half the bytes of bytea's hex text, and no decoding (o200k's
        # content is 7 MB, the bulk of a load that finds no cache).
        dbapi: Any = conn.connection.driver_connection
        with dbapi.cursor(binary=True) as cur:
            cur.execute("SELECT content FROM version_contents WHERE version_id = %s", (v.id,))
            row = cur.fetchone()
        return None if row is None else bytes(row[0])
    t = table(VersionContent)
    # CAST: a value edited by hand can come back as text (SQLite's || makes text); read it as bytes
    # all the same, so it fails its hash check instead of failing to decode.
    raw = conn.execute(select(cast(t.c.content, LargeBinary)).where(t.c.version_id == v.id)).scalar()
    return None if raw is None else bytes(raw)


def _merge_columns(mt: Any) -> tuple[Any, ...]:
    """The columns of a merge row, in the order `_merge_row` reads them."""
    c = mt.c
    return (c.rank, c.left_id, c.right_id, c.result_id, c.count, c.score, c.left_count, c.right_count, c.stage)


def _merge_row(r: Any) -> MergeRow:
    return MergeRow(
        rank=r[0],
        left=r[1],
        right=r[2],
        result=r[3],
        count=r[4],
        score=r[5],
        left_count=r[6],
        right_count=r[7],
        stage=r[8],
    )


def _rows(conn: Connection, v: VersionInfo) -> tuple[list[TokenRow], list[MergeRow], bytes]:
    tt, mt = table(Token), table(Merge)
    tokens = [
        TokenRow(id=r[0], bytes=bytes(r[1]), kind=r[2], score=r[3], count=r[4])
        for r in conn.execute(
            select(tt.c.id, cast(tt.c.bytes, LargeBinary), tt.c.kind, tt.c.score, tt.c.count)
            .where(tt.c.version_id == v.id)
            .order_by(tt.c.id)
        )
    ]
    merges = [
        _merge_row(r)
        for r in conn.execute(select(*_merge_columns(mt)).where(mt.c.version_id == v.id).order_by(mt.c.rank))
    ]
    raw = content.serialize(
        v.algorithm,
        v.config,
        ((t.id, t.kind, t.bytes, t.score) for t in tokens),
        [(m.left, m.right, m.result) for m in merges],
    )
    return tokens, merges, raw


def read_version(conn: Connection, v: VersionInfo, *, rows: bool = True, check: bool = True) -> StoredVersion:
    """A version's canonical content, and with `rows` its token and merge rows (whose
    serialization is then the content). Without `rows`, the content stored with the version is
    read (one value), falling back to the rows when none is stored. With `check` (always, except
    for `verify`, which reports instead of raising), content that does not hash to the recorded
    hash raises IntegrityError naming both, and so does a version row whose algorithm or config
    is not the one in the hashed content."""
    stored = stored_content(conn, v)
    if not rows and stored is not None:
        actual = content.check(stored, v.content_hash, v.ref) if check else content.content_hash(stored)
        if check:
            content.check_header(stored, v.algorithm, v.config, v.content_hash, v.ref)
        return StoredVersion(info=v, content=stored, hash=actual, stored=stored)
    tokens, merges, raw = _rows(conn, v)
    actual = content.check(raw, v.content_hash, v.ref) if check else content.content_hash(raw)
    return StoredVersion(info=v, content=raw, hash=actual, tokens=tokens, merges=merges, stored=stored)


def samples(conn: Connection, v: VersionInfo) -> list[tuple[str, list[int]]]:
    """(text, expected ids) of a version's samples, in position order."""
    t = table(Sample)
    rows = conn.execute(select(t.c.text, t.c.ids).where(t.c.version_id == v.id).order_by(t.c.position))
    return [(r.text, list(r.ids)) for r in rows]


def training_run(conn: Connection, v: VersionInfo) -> Optional[dict[str, Any]]:
    """The recorded training run of a trained version, or None."""
    t = table(TrainingRun)
    run = conn.execute(select(t).where(t.c.version_id == v.id)).mappings().first()
    return None if run is None else {k: val for k, val in run.items() if k not in ("id", "version_id")}


def rounds(conn: Connection, v: VersionInfo) -> list[RoundRow]:
    """The recorded rounds of an iterative training run (Unigram), oldest first."""
    t = table(TrainingRound)
    rows = conn.execute(select(t).where(t.c.version_id == v.id).order_by(t.c.round)).mappings()
    return [
        RoundRow(round=r["round"], phase=r["phase"], vocab_size=r["vocab_size"], log_likelihood=r["log_likelihood"])
        for r in rows
    ]


def _readable(text: Optional[str], raw: bytes) -> str:
    return text if text is not None else repr(bytes(raw))


def summary(conn: Connection, v: VersionInfo, *, merges: int = 10, top_scored: bool = False) -> VersionSummary:
    """What `tokreg show` prints besides the version row: token counts by kind, the number of
    merges and the first `merges` of them readable, and (with `top_scored`) the `merges` tokens
    of highest score."""
    tt, mt = table(Token), table(Merge)
    kinds = {
        kind: n
        for kind, n in conn.execute(
            select(tt.c.kind, func.count()).where(tt.c.version_id == v.id).group_by(tt.c.kind).order_by(tt.c.kind)
        )
    }
    n_merges = conn.execute(select(func.count()).select_from(mt).where(mt.c.version_id == v.id)).scalar() or 0
    first = list(conn.execute(select(mt).where(mt.c.version_id == v.id).order_by(mt.c.rank).limit(merges)).mappings())
    by_stage: dict[int, int] = dict(
        conn.execute(
            select(mt.c.stage, func.count())
            .where(mt.c.version_id == v.id, mt.c.stage.is_not(None))
            .group_by(mt.c.stage)
        ).all()
    )
    second = (
        list(
            conn.execute(
                select(mt).where(mt.c.version_id == v.id, mt.c.stage == 2).order_by(mt.c.rank).limit(merges)
            ).mappings()
        )
        if by_stage
        else []
    )
    wanted = {i for m in first + second for i in (m["left_id"], m["right_id"], m["result_id"])}
    text = (
        {
            r.id: _readable(r.text, r.bytes)
            for r in conn.execute(
                select(tt.c.id, tt.c.text, tt.c.bytes).where(tt.c.version_id == v.id, tt.c.id.in_(wanted))
            )
        }
        if wanted
        else {}
    )

    def readable(rows: list[Any]) -> tuple[FirstMerge, ...]:
        return tuple(
            FirstMerge(
                rank=m["rank"],
                left=text.get(m["left_id"]),
                right=text.get(m["right_id"]),
                result=text.get(m["result_id"]),
                count=m["count"],
                score=m["score"],
            )
            for m in rows
        )

    first_merges = readable(first)
    stages = None
    if by_stage:
        t = v.config.get("transition")
        stages = MergeStages(
            transition=t if isinstance(t, int) else None,
            stage1_merges=by_stage.get(1, 0),
            stage2_merges=by_stage.get(2, 0),
            first_stage2=readable(second),
        )
    top_pieces = None
    if top_scored:
        top_pieces = tuple(
            TopPiece(id=r.id, text=r.text, score=r.score)
            for r in conn.execute(
                select(tt.c.id, tt.c.text, tt.c.score)
                .where(tt.c.version_id == v.id, tt.c.kind == "normal")
                .order_by(tt.c.score.desc(), tt.c.id)
                .limit(merges)
            )
        )
    return VersionSummary(
        tokens_by_kind=kinds, merges=n_merges, first_merges=first_merges, top_pieces=top_pieces, stages=stages
    )


# -- tokreg serve's pages ----------------------------------------------------------------------------

#: How `token_page` can order tokens; ties always fall back to the id.
TOKEN_ORDERS = ("id", "count", "score", "length")


def aliases_by_version(conn: Connection) -> dict[int, list[str]]:
    """version id -> the aliases pointing at it, sorted."""
    a = table(Alias)
    out: dict[int, list[str]] = {}
    for vid, alias in conn.execute(select(a.c.version_id, a.c.alias).order_by(a.c.alias)):
        out.setdefault(vid, []).append(alias)
    return out


def _token_rows(rows: Any) -> list[TokenRow]:
    return [TokenRow(id=r[0], bytes=bytes(r[1]), kind=r[2], score=r[3], count=r[4]) for r in rows]


def _contains(conn: Connection, col: Any, needle: str) -> ColumnElement[bool]:
    # Case-sensitive substring test with no wildcard characters to escape (LIKE folds ASCII
    # case on SQLite but not on PostgreSQL, and tokens that differ only in case are different).
    if conn.dialect.name == "sqlite":
        return func.instr(col, needle) > 0
    return func.strpos(col, needle) > 0


def token_page(
    conn: Connection,
    v: VersionInfo,
    *,
    contains: Optional[str] = None,
    kind: Optional[str] = None,
    order: str = "id",
    offset: int = 0,
    limit: int = 100,
) -> tuple[int, list[TokenRow]]:
    """(number of matching tokens, the `limit` of them from `offset`) of version `v`: tokens whose
    text contains `contains` (or whose id it is, when it is a number), of `kind`, ordered by
    `order` (one of TOKEN_ORDERS; count, score and length highest first)."""
    tt = table(Token)
    where: list[ColumnElement[bool]] = [tt.c.version_id == v.id]
    if contains:
        match = _contains(conn, tt.c.text, contains)
        where.append(
            or_(match, tt.c.id == int(contains))
            if contains.isascii() and contains.isdigit() and len(contains) < 10
            else match
        )
    if kind:
        where.append(tt.c.kind == kind)
    total = conn.execute(select(func.count()).select_from(tt).where(*where)).scalar() or 0
    orders: dict[str, list[Any]] = {
        "id": [tt.c.id],
        "count": [tt.c.count.desc().nulls_last(), tt.c.id],
        "score": [tt.c.score.desc().nulls_last(), tt.c.id],
        "length": [func.length(tt.c.bytes).desc(), tt.c.id],
    }
    keys = orders[order]
    rows = conn.execute(
        select(tt.c.id, tt.c.bytes, tt.c.kind, tt.c.score, tt.c.count)
        .where(*where)
        .order_by(*keys)
        .offset(offset)
        .limit(limit)
    )
    return total, _token_rows(rows)


def tokens_by_id(conn: Connection, v: VersionInfo, ids: set[int]) -> dict[int, TokenRow]:
    """The tokens of `v` with these ids."""
    if not ids:
        return {}
    tt = table(Token)
    rows = conn.execute(
        select(tt.c.id, tt.c.bytes, tt.c.kind, tt.c.score, tt.c.count).where(
            tt.c.version_id == v.id, tt.c.id.in_(sorted(ids))
        )
    )
    return {t.id: t for t in _token_rows(rows)}


def merges_building(conn: Connection, v: VersionInfo, token_id: int, *, max_merges: int = 4096) -> dict[int, MergeRow]:
    """result id -> merge, for every merge in the tree that builds `token_id` from base tokens
    (read a level at a time; a cycle in damaged rows ends the walk instead of looping)."""
    mt = table(Merge)
    found: dict[int, MergeRow] = {}
    frontier = {token_id}
    while frontier and len(found) < max_merges:
        rows = conn.execute(
            select(*_merge_columns(mt)).where(mt.c.version_id == v.id, mt.c.result_id.in_(sorted(frontier)))
        )
        frontier = set()
        for r in rows:
            m = _merge_row(r)
            if m.result not in found:
                found[m.result] = m
                frontier |= {m.left, m.right} - found.keys()
    return found


def holders_of(conn: Connection, raw: bytes) -> list[tuple[int, int]]:
    """(version id, token id) of every token, in any version, whose bytes are `raw`."""
    tt = table(Token)
    rows = conn.execute(select(tt.c.version_id, tt.c.id).where(tt.c.bytes == raw).order_by(tt.c.version_id, tt.c.id))
    return [(r[0], r[1]) for r in rows]
