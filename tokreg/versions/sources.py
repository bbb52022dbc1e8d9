"""Where a pinned hash's content can come from, in the order they are tried, and the one rule
for "offline". A source answers `fetch(hash)`: the content, checked against the hash, or a
`Miss` saying in a few words why not (not there, no registry there, unreachable, damaged,
skipped offline). `first` tries them in order and, when none has it, raises one error naming
the lockfile, the pin and every source tried with its answer.

Kinds of source (`of` tells them apart from what the user typed):

- the vendored folder beside the lockfile (vendor.py) and the local cache (content_cache.py);
- a registry: a SQLite path or an SQLAlchemy URL (`Registry.content`);
- a `tokreg serve` URL, `http://` or `https://` (remote.py);
- a file written by `tokreg export --format tokreg`, or a folder of them (or of vendored files).

`TOKREG_OFFLINE=1` (or `true`, `yes`) means no connection is attempted: a `tokreg serve` URL and
any registry URL that is not a local SQLite file are skipped, with the reason, before anything
is opened. Nothing here imports SQLAlchemy until a registry is actually asked.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Protocol, Union

from ..content import content_hash
from ..encoding import content_cache
from ..errors import IntegrityError, NotFoundError, TokregError
from . import vendor
from .lockfile import Lock, Pin

PathLike = Union[str, os.PathLike[str]]  # not a string: typing would compile it at import


def offline() -> bool:
    """Whether `TOKREG_OFFLINE` forbids every connection."""
    return os.environ.get("TOKREG_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


class Miss(Exception):
    """A source that does not give the content; `damaged` when it gave other content."""

    def __init__(self, why: str, *, damaged: Optional[str] = None):
        super().__init__(why)
        self.damaged = damaged  # the hash the source's content had, when it had the wrong one


class Source(Protocol):
    @property
    def name(self) -> str: ...

    def fetch(self, hash_label: str) -> bytes: ...

    def unusable(self) -> Optional[str]:
        """Why this source, as typed, cannot be read at all (None when it can): asked of each
        `sync --from` source before any pin, so a typo is named even when every pin is cached."""
        ...


def _checked(data: bytes, hash_label: str, what: str) -> bytes:
    actual = content_hash(data)
    if actual != hash_label:
        raise Miss(f"{what} hashes to {actual}", damaged=actual)
    return data


@dataclass
class Vendored:
    project: Path

    @property
    def name(self) -> str:
        return f"vendored folder {vendor.folder(self.project)}"

    def fetch(self, hash_label: str) -> bytes:
        try:
            data = vendor.get(self.project, hash_label)
        except IntegrityError as e:
            raise Miss(str(e), damaged=e.actual or "?") from None
        if data is None:
            raise Miss("not there")
        return data

    def unusable(self) -> Optional[str]:
        return None


class Cache:
    NAME = "local cache"

    @property
    def name(self) -> str:
        return self.NAME

    def fetch(self, hash_label: str) -> bytes:
        data = content_cache.get(hash_label)  # checked; a bad file is removed
        if data is None:
            raise Miss(f"not in {content_cache.cache_dir()}")
        return data

    def unusable(self) -> Optional[str]:
        return None


@dataclass
class RegistrySource:
    #: A path or URL; None for the default location (found only when asked: it needs the store).
    location: Optional[str]
    #: The pin being fetched, to say when the registry holds its `name@N` with other content.
    pin: Optional[Pin] = None

    @property
    def name(self) -> str:
        return f"registry {_shown(self.location)}" if self.location is not None else "the default registry"

    def _open(self) -> tuple[Any, Any]:
        """(where, read-only engine) of this registry; Miss when it cannot be opened."""
        if self.location is None:
            from ..store.sqlite_files import default_path  # the store only once a registry is asked

            self.location = str(default_path())
        if not _local_sqlite(self.location):
            if offline():
                raise Miss("skipped: TOKREG_OFFLINE=1")
            if ":***@" in self.location:
                raise Miss("its password is not recorded; name it with --db or TOKREG_DB")
        # SQLAlchemy only when a registry is asked: the vendored and cached paths never need it.
        from ..store import engine
        from ..store.readonly_engine import open_read_only

        try:
            where = engine.locate(self.location)
            return where, open_read_only(where.url)  # never creates, upgrades or writes a source
        except NotFoundError as e:
            raise Miss(str(e).split(";")[0]) from None
        except TokregError as e:
            raise Miss(f"unreachable ({e})") from None

    def fetch(self, hash_label: str) -> bytes:
        from ..store import by_hash, engine  # SQLAlchemy only when a registry is asked

        where, db = self._open()
        try:
            with engine.database_errors(where), db.connect() as conn:
                data = by_hash.content(conn, hash_label)
                if data is not None:
                    return data
                held = by_hash.labelled(conn, self.pin.name, self.pin.version) if self.pin is not None else None
        except IntegrityError as e:
            raise Miss(str(e), damaged=e.actual or "?") from None
        except TokregError as e:
            raise Miss(f"unreachable ({e})") from None
        finally:
            db.dispose()
        if held is not None:
            raise Miss(f"holds {held.ref} as {held.content_hash}, not the pinned content", damaged=held.content_hash)
        raise Miss("no version with that content")

    def unusable(self) -> Optional[str]:
        from ..store import engine  # SQLAlchemy only when a registry is asked

        try:
            where, db = self._open()
        except Miss as m:
            return None if str(m).startswith("skipped") else str(m)
        try:
            with engine.database_errors(where), db.connect():
                return None
        except TokregError as e:
            return f"unreachable ({e})"
        finally:
            db.dispose()


@dataclass
class Served:
    url: str

    @property
    def name(self) -> str:
        return f"tokreg serve {self.url}"

    def fetch(self, hash_label: str) -> bytes:
        if offline():
            raise Miss("skipped: TOKREG_OFFLINE=1")
        from . import remote  # urllib and its http stack only when a server is asked

        try:
            data = remote.content(self.url, hash_label)
        except IntegrityError as e:
            raise Miss(str(e), damaged=e.actual or "?") from None
        except TokregError as e:
            raise Miss(str(e)) from None
        if data is None:
            raise Miss("no version with that content")
        return data

    def unusable(self) -> Optional[str]:
        if offline():
            return None  # skipped, as every fetch from it is
        from . import remote  # urllib only when a server is asked

        try:
            remote.index(self.url)
        except TokregError as e:
            return str(e)
        return None


@dataclass
class Files:
    """An exported `.tokreg` file, or a folder of them (vendored `.content.xz` files too)."""

    path: Path

    @property
    def name(self) -> str:
        return f"{'folder' if self.path.is_dir() else 'file'} {self.path}"

    def fetch(self, hash_label: str) -> bytes:
        if not self.path.exists():
            raise Miss("does not exist")
        files = sorted(p for p in self.path.iterdir() if p.is_file()) if self.path.is_dir() else [self.path]
        seen: list[str] = []
        for f in files:
            if f.name.endswith(vendor.SUFFIX):
                if f.name == vendor.path_of(".", hash_label).name:
                    raw = content_cache.read_regular(f)
                    import lzma  # here: most loads read no vendored file

                    try:
                        return _checked(lzma.decompress(raw or b""), hash_label, str(f))
                    except (lzma.LZMAError, EOFError):
                        raise Miss(f"{f} is damaged (not xz)", damaged="?") from None
                continue
            got = _exported(f)
            if got is None:
                continue
            if got[0] == hash_label:
                return got[1]
            seen.append(got[0])
        if not self.path.is_dir():
            raise Miss(f"holds {seen[0]}" if seen else "not a file `tokreg export --format tokreg` wrote")
        raise Miss(f"{len(seen)} exported version(s), none with that content" if seen else "no exported versions")

    def unusable(self) -> Optional[str]:
        if not self.path.exists():
            return "does not exist"
        if self.path.is_file() and _exported(self.path) is None:
            return "not a file `tokreg export --format tokreg` wrote"
        return None


def _exported(path: Path) -> Optional[tuple[str, bytes]]:
    """(hash, content) of a tokreg export file; None for anything else (it is not one)."""
    from ..formats import tokreg_file  # an export's JSON reader only when a file is given

    try:
        f = tokreg_file.read(path)
    except TokregError:
        return None
    return f.hash, f.content


def of(spec: str) -> Source:
    """The source a user typed: an http(s) URL is a `tokreg serve`; a folder, or a file that is
    not a SQLite database, holds exported files; anything else is a registry."""
    if spec.startswith(("http://", "https://")):
        return Served(spec.rstrip("/"))
    p = Path(spec)
    if p.is_dir() or (p.is_file() and not _is_sqlite(p)):
        return Files(p)
    return RegistrySource(spec)


def _is_sqlite(p: Path) -> bool:
    try:
        with open(p, "rb") as fh:
            return fh.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


def _local_sqlite(location: str) -> bool:
    """Whether `location` is a SQLite path or sqlite:// URL (local: no connection needed)."""
    if "://" not in location:
        return True
    return location.startswith("sqlite:")


def _shown(location: str) -> str:
    if "://" in location and "@" in location and not location.startswith("sqlite:"):
        scheme, rest = location.split("://", 1)
        creds, _, host = rest.rpartition("@")
        user = creds.split(":", 1)[0]
        return f"{scheme}://{user}{':***' if ':' in creds else ''}@{host}"
    return location


#: What to do when no source has a pin's content, for `tokreg.load` and for `sync` without --from.
ADVICE = "Run `tokreg sync --from SOURCE` (a registry, an exported file or folder, a tokreg serve URL)"
#: The same, for a `sync` that named its sources with --from.
ADVICE_FROM = (
    "Name a source that holds this version with --from (a registry, an exported file or folder, a tokreg serve URL)"
)


def first(lock: Lock, pin: Pin, sources: Sequence[Source], advice: str = ADVICE) -> tuple[bytes, str]:
    """(content, name of the source that gave it): the first source holding `pin`'s content.
    None does: NotFoundError (IntegrityError if a source gave other content for it), one line
    naming the lockfile, the pin and each source tried with its answer, then `advice`."""
    tried: list[str] = []
    damaged: Optional[str] = None
    for s in sources:
        try:
            return s.fetch(pin.hash), s.name
        except Miss as m:
            tried.append(f"{s.name} ({m})")
            damaged = damaged or m.damaged
    line = (
        f"{lock.path} pins {pin.ref} ({pin.hash}), and no source has that content; tried: "
        + "; ".join(tried)
        + ". "
        + advice
    )
    if damaged is not None:
        raise IntegrityError(line, expected=pin.hash, actual=None if damaged == "?" else damaged)
    raise NotFoundError(line)
