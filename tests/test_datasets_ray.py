"""`tokreg tokenize --engine ray`: the same bytes as a local run, on a local Ray with 2 CPUs
started by the test. Ray starts in several seconds, so this is one slow test, on a corpus cut
into many small batches, so that several are in flight at once and come back out of order.

The Ray run is made in a child process. Ray's driver keeps a thread that listens to the cluster
(`listen_error_messages`), and in one CI run that thread aborted the whole process minutes after
`ray.shutdown()`, in the middle of another test that pytest-xdist had given the same worker:
the worker died and took that test with it. In a child of its own, Ray can only end the child,
and the test checks the child's exit."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tokreg
from tokreg import BpeOptions, Registry
from tokreg.datasets.options import TokenizeOptions
from tokreg.datasets.writer import tokenize

from .conftest import head_lines

EOT = "<|endoftext|>"

# The child: a local Ray with 2 CPUs, the corpus cut into some 25 batches (up to 4 in flight),
# the dataset written with --engine ray, plainly and with a seeded BPE-dropout; it prints the two
# dataset hashes and leaves without running Ray's exit handlers a second time.
CHILD = """
import os, sys
import ray
from tokreg import Registry
from tokreg.datasets import documents
from tokreg.datasets.options import TokenizeOptions
from tokreg.datasets.writer import tokenize

db, corpus, out = sys.argv[1:4]
ray.init(num_cpus=2, include_dashboard=False, logging_level="ERROR", log_to_driver=False)
try:
    tok = Registry(db).load("mini@1")
    documents.BATCH_BYTES = 3_000
    opts = TokenizeOptions(document="line", eos="<|endoftext|>", shard_tokens=5_000)
    drawn = TokenizeOptions(
        document="line", eos="<|endoftext|>", shard_tokens=5_000, dropout=0.1, seed=7, method="bpe-dropout"
    )
    for o, where in ((opts, out), (drawn, out + "-d")):
        print(tokenize(tok, [corpus], where, o, engine="ray").manifest["dataset_hash"], flush=True)
finally:
    ray.shutdown()
os._exit(0)
"""


@pytest.mark.slow
def test_ray_engine_writes_the_bytes_of_a_local_run(
    registry: Registry, db_path: Path, small_corpus: Path, tmp_path: Path
) -> None:
    # Only asked whether Ray is there: importing it here would import it into the pytest worker
    # (a long-lived process that has run hundreds of tests), where `import tracemalloc`, which
    # Ray's import brings, failed once with "OSError: [Errno 0]" (the process had no thread-local
    # storage key left to give CPython). The child imports Ray in a fresh process.
    if importlib.util.find_spec("ray") is None:
        pytest.skip("ray is not installed (pip install 'tokreg[ray]'; .ci/run installs it)")
    registry.train("mini", [small_corpus], BpeOptions(vocab_size=600, special=(EOT,)))
    tok = registry.load("mini@1")
    corpus = tmp_path / "corpus.txt"
    corpus.write_bytes(head_lines("kjv.txt", 40_000) + b"\n" + head_lines("dr.zh-cn.txt", 40_000))
    opts = TokenizeOptions(document="line", eos=EOT, shard_tokens=5_000)
    local = tokenize(tok, [corpus], tmp_path / "local", opts, threads=2)
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(db_path), str(corpus), str(tmp_path / "ray")],
        capture_output=True,
        text=True,
        env={**os.environ, "RAY_USAGE_STATS_ENABLED": "0"},
        timeout=600,
    )
    assert child.returncode == 0, child.stderr[-2000:]
    assert local.manifest["totals"]["shards"] > 3
    remote_hash, remote_drawn_hash = child.stdout.split()[-2:]
    assert remote_hash == local.manifest["dataset_hash"]
    a, b = (sorted(p.name for p in (tmp_path / d).iterdir()) for d in ("local", "ray"))
    assert a == b
    assert all((tmp_path / "local" / n).read_bytes() == (tmp_path / "ray" / n).read_bytes() for n in a)
    ds = tokreg.open_dataset(tmp_path / "ray", tokenizer=tok)
    first = next(x for x in corpus.read_text().split("\n") if x)
    assert ds.document(0).tolist() == [*tok.encode_ordinary(first), tok.special_tokens[EOT]]
    # A seeded stochastic encoding travels to the workers too: the same draws as a local run.
    drawn = TokenizeOptions(document="line", eos=EOT, shard_tokens=5_000, dropout=0.1, seed=7, method="bpe-dropout")
    local_d = tokenize(tok, [corpus], tmp_path / "local-d", drawn, threads=2)
    assert remote_drawn_hash == local_d.manifest["dataset_hash"] != local.manifest["dataset_hash"]
