"""Checking a stored version: its rows must hash to its recorded hash (xxh3-128 and sha256),
so must the content stored with it (what loads read) and its version row's algorithm and config
must be the hashed ones, an encoder must build from it, its sample strings must encode to the
ids stored when it was created, and a copy in the on-disk compiled cache must hash right (a bad
one is removed; the next load rebuilds it, and anything there that is not a regular file is
reported as a note and left alone).

    >>> reg.verify()            # every version
    [Verification(ref='gpt-mini@1', hash='xxh3-128:…', ok=True, samples=6, problems=(), …), …]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection

from ..content import check_header, content_hash, digest
from ..data import JsonValue, StoredVersion, VersionInfo
from ..encoding import content_cache
from ..encoding.tokenizer import Tokenizer
from ..errors import IntegrityError, TokregError
from ..store import reads


@dataclass(frozen=True)
class Verification(JsonValue):
    """What `Registry.verify` found for one version: `ok` when there are no `problems`."""

    ref: str
    hash: str  # the recorded content hash
    recomputed: str  # what its rows hash to
    ok: bool
    samples: int  # sample strings re-encoded
    problems: tuple[str, ...]
    notes: tuple[str, ...]  # about the machine, not the version (a cache entry that is no file)


def _short(ids: list[int]) -> str:
    return str(ids) if len(ids) <= 8 else "[" + ", ".join(map(str, ids[:8])) + ", …]"


def check_all(conn: Connection, versions: Sequence[VersionInfo]) -> list[Verification]:
    """`check` for each of `versions` (resolved by the caller), its rows read as they are."""
    return [check(reads.read_version(conn, v, check=False), reads.samples(conn, v)) for v in versions]


def check(stored: StoredVersion, samples: Sequence[tuple[str, list[int]]]) -> Verification:
    """Verifies one version read with `read_version(..., check=False)` (rows included);
    reports, never raises."""
    v = stored.info
    problems: list[str] = []
    if stored.hash != v.content_hash:
        problems.append(f"rows hash to {stored.hash}, but the version records {v.content_hash}")
    else:
        sha = digest(stored.content)[1]
        if sha != v.sha256:
            problems.append(f"rows hash to {sha}, but the version records {v.sha256}")
    if stored.stored is None:
        problems.append("no content is stored with it (its rows did not match its hash when the registry was upgraded)")
    elif (stored_hash := content_hash(stored.stored)) != v.content_hash:
        problems.append(f"its stored content hashes to {stored_hash}, but the version records {v.content_hash}")
    else:
        try:
            check_header(stored.stored, v.algorithm, v.config, v.content_hash, v.ref)
        except IntegrityError as e:
            problems.append(
                f"its version row's algorithm or config is not the hashed one: with it, it hashes to {e.actual}"
            )
    cached = content_cache.check(v.content_hash)
    where = content_cache.path_of(v.content_hash)
    if cached == content_cache.REMOVED:
        problems.append(
            f"its compiled-cache file {where} did not hash to {v.content_hash}; removed (the next load rebuilds it)"
        )
    elif cached == content_cache.KEPT:
        problems.append(
            f"its compiled-cache file {where} does not hash to {v.content_hash} and could not be removed; delete it "
            "(loads never use it)"
        )
    # Not a problem of the version: loads skip anything in the cache that is not a regular file.
    notes: list[str] = []
    if cached == content_cache.NOT_A_FILE:
        notes.append(
            f"{where} in the compiled cache is not a regular file; loads skip it (remove it to let them cache)"
        )
    checked = 0
    usable = stored.content if stored.hash == v.content_hash else stored.stored
    if usable is not None and content_hash(usable) == v.content_hash:
        try:
            tok = Tokenizer(usable, ref=v.ref, expect_hash=v.content_hash)
        except TokregError as e:
            problems.append(f"cannot build its encoder: {e}")
        else:
            for n, (text, want) in enumerate(samples):
                got = tok.encode_ordinary(text)
                checked += 1
                if got != want:
                    problems.append(f"sample {n} ({text[:30]!r}) encodes to {_short(got)}, stored {_short(want)}")
    return Verification(
        ref=v.ref,
        hash=v.content_hash,
        recomputed=stored.hash,
        ok=not problems,
        samples=checked,
        problems=tuple(problems),
        notes=tuple(notes),
    )
