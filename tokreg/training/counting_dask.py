"""Counting on a Dask cluster (`tokreg count --dask ADDRESS`, `tokreg train --dask ADDRESS`,
`engine=` in the API): one task per corpus file, each counting its file with tokreg's core
on a worker and sending back the binary counts; the client sums them in input order and the
run goes on here (the budget rule, training, recording).

Counts are sums of 64-bit integers and the corpus record is the same per-file record as a
local run's, in the same order, so a cluster gives the same counts, fingerprint and trained
hash here. Workers read the files by their paths: the corpus must be at the same
path on every worker (a shared or copied file system), and tokreg must be installed there.
Dask is an optional extra: `pip install 'tokreg[dask]'`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Optional

from .. import _core
from ..errors import InputError
from . import budget, counting_local
from .corpus import Source, fingerprint, read_into


def _client(address: Any) -> Any:
    try:
        from distributed import Client  # the optional extra, needed only here
    except ImportError:
        raise InputError("counting on Dask needs the dask extra: pip install 'tokreg[dask]'") from None
    if isinstance(address, Client):
        return address
    try:
        return Client(address, timeout="20s")  # type: ignore[no-untyped-call]
    except (OSError, TimeoutError) as e:
        raise InputError(f"cannot reach the Dask scheduler at {address!r} ({e}); check the address") from None


def count_file(
    path: str,
    name: str,
    fmt: str,
    field: Optional[str],
    spec: dict[str, Any],
    table_budget: int,
    require_utf8: bool,
    utf8_hint: str,
) -> tuple[bytes, dict[str, Any]]:
    """One task, run on a worker: (binary counts, corpus record) of one file."""
    src = Source(name=name, path=path, format=fmt, field=field)
    counter = counting_local.new_counter(spec, table_budget=table_budget)
    read = read_into(counter, [src], require_utf8=require_utf8, utf8_hint=utf8_hint)
    return counter.finish(None).to_bytes(), read.records[0]


def count(
    address: Any,
    sources: Sequence[Source],
    spec: dict[str, Any],
    options: Any,
    *,
    require_utf8: bool = False,
    utf8_hint: str = "",
) -> counting_local.Counted:
    """Counts `sources` on the cluster at `address` (or a `distributed.Client`)."""
    t0 = time.perf_counter()
    for s in sources:
        if s.path is None:
            raise InputError(f"{s.name} cannot be counted on a cluster (workers read files); save it to a file first")
    if options.sample_bytes:
        raise InputError("--sample-bytes is for local runs; sample the corpus first, then count it on the cluster")
    limit = budget.effective(options.memory_limit)
    table_budget, _ = budget.shares(limit)
    client = _client(address)
    try:
        return _count_on(client, sources, spec, limit, table_budget, require_utf8, utf8_hint, t0)
    finally:
        if client is not address:  # made here: closed here
            client.close()


def _count_on(
    client: Any,
    sources: Sequence[Source],
    spec: dict[str, Any],
    limit: int,
    table_budget: int,
    require_utf8: bool,
    utf8_hint: str,
    t0: float,
) -> counting_local.Counted:
    futures = [
        client.submit(
            count_file, s.path, s.name, s.format, s.field, spec, table_budget, require_utf8, utf8_hint, pure=False
        )
        for s in sources
    ]
    try:
        results = client.gather(futures)
    except InputError:
        raise
    except Exception as e:  # a worker's failure arrives as the worker's exception
        raise InputError(f"counting on the Dask cluster failed: {e}") from None
    parts = [_core.Counts.from_bytes(raw) for raw, _ in results]
    records = [rec for _, rec in results]
    counts = _core.Counts.sum(parts)
    info = {**counting_local.stats_info(counts, limit), "engine": f"dask {client.scheduler.address}"}
    info.update(sample_bytes=0, sampled=False)
    corpus = {"fingerprint": fingerprint(records), "files": records}
    return counting_local.Counted(counts, corpus, time.perf_counter() - t0, info)
