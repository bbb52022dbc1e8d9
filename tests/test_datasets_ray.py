"""`tokreg tokenize --engine ray`: the same bytes as a local run, on a local Ray with 2 CPUs
started by the test. Ray starts in several seconds, so this is one slow test, on a corpus cut
into many small batches, so that several are in flight at once and come back out of order."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import tokreg
from tokreg import BpeOptions, Registry
from tokreg.datasets import documents
from tokreg.datasets.options import TokenizeOptions
from tokreg.datasets.writer import tokenize

from .conftest import head_lines

EOT = "<|endoftext|>"

# Imported when the module is collected, before any test of the session has run in this process:
# imported later in a pytest-xdist worker (after the other modules that worker ran), Ray's own
# `import tracemalloc` has failed with "OSError: [Errno 0]", a state no test of ours sets on purpose.
try:
    import ray as _ray
except ImportError:
    _ray = None


@pytest.fixture
def ray_2cpus() -> Iterator[Any]:
    if _ray is None:
        pytest.skip("ray is not installed (pip install 'tokreg[ray]'; .ci/run installs it)")
    ray = _ray
    ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()


@pytest.mark.slow
def test_ray_engine_writes_the_bytes_of_a_local_run(
    ray_2cpus: Any, registry: Registry, small_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry.train("mini", [small_corpus], BpeOptions(vocab_size=600, special=(EOT,)))
    tok = registry.load("mini@1")
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(head_lines("kjv.txt", 40_000) + b"\n" + head_lines("dr.zh-cn.txt", 40_000))
    opts = TokenizeOptions(document="line", eos=EOT, shard_tokens=5_000)
    local = tokenize(tok, [corpus], tmp_path / "local", opts, threads=2)
    monkeypatch.setattr(documents, "BATCH_BYTES", 3_000)  # some 25 batches, up to 4 in flight
    remote = tokenize(tok, [corpus], tmp_path / "ray", opts, engine="ray")
    assert local.manifest["totals"]["shards"] > 3
    assert remote.manifest["dataset_hash"] == local.manifest["dataset_hash"]
    a, b = (sorted(p.name for p in (tmp_path / d).iterdir()) for d in ("local", "ray"))
    assert a == b
    assert all((tmp_path / "local" / n).read_bytes() == (tmp_path / "ray" / n).read_bytes() for n in a)
    ds = tokreg.open_dataset(tmp_path / "ray", tokenizer=tok)
    first = next(x for x in corpus.read_text().split("\n") if x)
    assert ds.document(0).tolist() == [*tok.encode_ordinary(first), tok.special_tokens[EOT]]
    # A seeded stochastic encoding travels to the workers too: the same draws as a local run.
    drawn = TokenizeOptions(document="line", eos=EOT, shard_tokens=5_000, dropout=0.1, seed=7, method="bpe-dropout")
    local_d = tokenize(tok, [corpus], tmp_path / "local-d", drawn, threads=2)
    remote_d = tokenize(tok, [corpus], tmp_path / "ray-d", drawn, engine="ray")
    assert remote_d.manifest["dataset_hash"] == local_d.manifest["dataset_hash"] != local.manifest["dataset_hash"]
