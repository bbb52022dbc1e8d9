"""A pinned name, loaded or synced by its hash: the sources a pin is looked for in, in order,
and what `tokreg.load` and `tokreg sync` do with them.

Order (sources.py says what each is): the vendored folder beside the lockfile; the local cache;
the registry named by `db` (`--db`) or `TOKREG_DB`; the registry recorded in the pin; then, for
`sync`, each `--from SOURCE` in the order given, and for `load` the default registry. The first
that has content hashing to the pin wins, and is put in the local cache. The tokenizer is
labelled with the pin's `name@version`, whatever source gave it, so warm and cold loads are the
same tokenizer (lockfile.py has the rule).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Union

from ..encoding import content_cache
from ..encoding.tokenizer import Tokenizer
from ..errors import InputError, NotFoundError
from . import sources, vendor
from .lockfile import Lock, Pin

PathLike = Union[str, os.PathLike[str]]  # not a string: typing would compile it at import


def _registry_sources(pin: Pin, db: Optional[PathLike]) -> list[sources.Source]:
    out: list[sources.Source] = []
    named = os.fspath(db) if db is not None else os.environ.get("TOKREG_DB") or None
    if named is not None:
        out.append(
            sources.of(named) if named.startswith(("http://", "https://")) else sources.RegistrySource(named, pin)
        )
    if pin.registry and not _same_place(pin.registry, named):
        out.append(
            sources.of(pin.registry) if pin.registry.startswith("http") else sources.RegistrySource(pin.registry, pin)
        )
    return out


def _same_place(a: str, b: Optional[str]) -> bool:
    """Whether two registry locations name the same place (a SQLite path and its sqlite:/// URL)."""
    if b is None:
        return False

    def plain(x: str) -> str:
        path = x.removeprefix("sqlite:///") if x.startswith("sqlite:///") else x
        return str(Path(path).resolve()) if "://" not in path else path

    return plain(a) == plain(b)


def sources_for(lock: Lock, pin: Pin, db: Optional[PathLike], extra: Sequence[str] = ()) -> list[sources.Source]:
    """The sources tried for `pin`, in order (see the module docstring); `extra` as typed."""
    found: list[sources.Source] = [sources.Vendored(lock.folder), sources.Cache()]
    return found + _registry_sources(pin, db) + [sources.of(s) for s in extra]


def load(lock: Lock, pin: Pin, db: Optional[PathLike]) -> Tokenizer:
    """The pinned tokenizer, from the first source holding its hash (then cached, with its built
    encoder: encoding/built_cache.py; `tokreg.load` takes that before calling this)."""
    tried = sources_for(lock, pin, db)
    if db is None and not os.environ.get("TOKREG_DB"):
        tried.append(sources.RegistrySource(None, pin))  # the default location, last
    raw, source = sources.first(lock, pin, tried)
    if source != sources.Cache.NAME:
        content_cache.put(pin.hash, raw)
    return Tokenizer(raw, ref=pin.ref, expect_hash=pin.hash, _cache=True)


@dataclass(frozen=True)
class Synced:
    """One pin after `sync`: where its content came from (`cached` when it already was)."""

    name: str
    ref: str
    hash: str
    source: str

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "ref": self.ref, "hash": self.hash, "source": self.source}


def sync(
    lock: Lock, *, db: Optional[PathLike] = None, extra: Sequence[str] = (), vendor_too: bool = False
) -> list[Synced]:
    """Brings every pin's content into the local cache (and, with `vendor_too`, into the
    vendored folder), each from the first source holding it, checked against its hash. Raises
    on the first pin no source has (the pins before it stay synced)."""
    if not lock.pins:
        raise InputError(f"{lock.path} pins nothing; pin a version with `tokreg pin REF`")
    for spec in extra:  # a source typed wrong is named even when every pin is already cached
        why = sources.of(spec).unusable()
        if why is not None:
            raise NotFoundError(
                f"--from {spec}: {why}; nothing was synced. "
                "Name a registry, an exported file or folder, or a tokreg serve URL"
            )
    advice = sources.ADVICE_FROM if extra else sources.ADVICE
    out = []
    for pin in sorted(lock.pins.values(), key=lambda p: p.name):
        tried = sources_for(lock, pin, db, extra)
        raw, source = sources.first(lock, pin, tried, advice)
        content_cache.put(pin.hash, raw)
        if content_cache.get(pin.hash) is None:
            raise InputError(f"cannot write the local cache {content_cache.cache_dir()}; check its permissions")
        if vendor_too:
            vendor.put(lock.folder, pin.hash, raw)
        out.append(Synced(pin.name, pin.ref, pin.hash, "cached" if source == sources.Cache.NAME else source))
    return out
