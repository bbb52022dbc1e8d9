"""Checking stored content: recompute each version's hash from its rows, re-encode its sample
strings, and hold a lockfile-pinned name to its pinned hash.

    >>> reg.verify()            # every version
    [{'ref': 'gpt-mini@1', 'ok': True, 'hash': 'xxh3-128:…', 'samples': 6, 'problems': []}, …]
"""

from __future__ import annotations

from typing import Any, Optional

from sqlalchemy import Connection

from . import lockfile, samples
from .errors import InputError, IntegrityError, NotFoundError
from .hashing import content_bytes, digest
from .versions import VersionInfo, all_versions, load_rows, resolve


def row_hashes(conn: Connection, v: VersionInfo) -> tuple[str, str]:
    """(xxh3-128, sha256) labels recomputed from the version's stored rows."""
    tokens, merges = load_rows(conn, v.id)
    return digest(content_bytes(v.algorithm, v.config, ((i, k, b, s) for i, b, k, s in tokens), merges))


def check(conn: Connection, v: VersionInfo) -> dict[str, Any]:
    """Verifies one version: its hash from its rows, then its samples re-encoded."""
    problems: list[str] = []
    xxh, sha = row_hashes(conn, v)
    if xxh != v.content_hash:
        problems.append(f"rows hash to {xxh}, but the version records {v.content_hash}")
    elif sha != v.sha256:
        problems.append(f"rows hash to {sha}, but the version records {v.sha256}")
    stored = samples.load(conn, v.id)
    checked = 0
    if stored and not problems:
        from .tokenizer import Tokenizer

        tokens, merges = load_rows(conn, v.id)
        try:
            # Cached under the hash just recomputed, so a tampered copy is never served.
            tok = Tokenizer.from_rows(v.ref, xxh, v.algorithm, v.config, tokens, merges)
        except InputError as e:
            problems.append(f"cannot encode its samples: {e}")
        else:
            for n, (text, want) in enumerate(stored):
                got = tok.encode_ordinary(text)
                checked += 1
                if got != want:
                    problems.append(
                        f"sample {n} ({text[:30]!r}) encodes to {_short(got)}, stored {_short(want)}"
                    )
    return {
        "ref": v.ref,
        "hash": v.content_hash,
        "recomputed": xxh,
        "ok": not problems,
        "samples": checked,
        "problems": problems,
    }


def verify(conn: Connection, ref: Optional[str] = None) -> list[dict[str, Any]]:
    """Verifies one version (`ref`) or every version in the registry."""
    versions = [resolve(conn, ref)] if ref is not None else all_versions(conn)
    return [check(conn, v) for v in versions]


def resolve_pinned(
    conn: Connection, name: str, versions: list[VersionInfo], lock: Any
) -> Optional[VersionInfo]:
    """The version the lockfile pins for `name` (None when it pins none), after checking that
    it still carries the pinned hash."""
    current = lockfile.current(lock)
    pin = current.pins.get(name) if current is not None else None
    if pin is None:
        return None
    assert current is not None
    where = f"{current.path} pins {pin.ref} ({pin.hash})"
    v = next((x for x in versions if x.number == pin.version), None)
    if v is None:
        have = ", ".join(str(x.number) for x in versions) or "none"
        raise NotFoundError(
            f"{where}, but this registry has no {pin.ref} (its versions of {name}: {have}); "
            f"it was pinned from {pin.registry or 'an unrecorded registry'}: point TOKREG_DB there, "
            f"or re-pin with `tokreg pin {name}@N`"
        )
    if v.content_hash != pin.hash:
        raise IntegrityError(
            f"{where}, but {v.ref} in this registry is {v.content_hash}; it is not the pinned "
            f"tokenizer (re-pin deliberately with `tokreg pin {v.ref}`)"
        )
    # The content itself is checked against this same hash wherever it is read (Tokenizer,
    # export), so rows changed behind tokreg's back are refused there, naming both hashes.
    return v


def _short(ids: list[int]) -> str:
    return str(ids) if len(ids) <= 8 else "[" + ", ".join(map(str, ids[:8])) + ", …]"
