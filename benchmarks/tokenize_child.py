"""One contender of `just bench tokenize` in a fresh process: `python -m benchmarks.tokenize_child
NAME JSONL OUT THREADS`. Each writes every document's ids followed by <|endoftext|> as one
uint32 stream (cl100k_base's ids do not fit uint16), then prints one JSON line: seconds (wall),
bytes of document text, tokens, the xxh3-128 of the id stream (compared with tokreg's by the
parent), and peak memory: this process's, plus the largest of its worker processes'."""

from __future__ import annotations

import glob
import json
import os
import resource
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import xxhash

from benchmarks.common import peak_mb

EOT = "<|endoftext|>"
CHUNK = 2000


def _tok() -> Any:
    """cl100k_base loaded from the benchmark's registry by its ref, as `tokreg tokenize` loads."""
    import tokreg

    return tokreg.load("cl100k_base@1", db=os.environ["TOKREG_BENCH_TOKENIZE_DB"])


def _docs(path: str) -> list[str]:
    if path.endswith(".txt"):  # plain text: a document per non-empty line
        with open(path, encoding="utf-8", newline="\n") as fh:
            return [x for x in fh.read().split("\n") if x]
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line)["text"] for line in fh]


def tokreg_run(path: str, out: str, threads: int) -> tuple[int, str]:
    from tokreg.datasets.options import TokenizeOptions
    from tokreg.datasets.writer import tokenize

    tok = _tok()
    t0 = _start()
    opts = TokenizeOptions(format="bin", eos=EOT, shard_tokens=1 << 40)  # plain text: a document per line (auto)
    s = tokenize(tok, [path], out, opts, threads=threads)
    _mark(time.perf_counter() - t0)
    data = Path(out, s.manifest["shards"][0]["name"] + ".bin").read_bytes()
    return len(data) // 4, xxhash.xxh3_128_hexdigest(data)


def tokreg_megatron_run(path: str, out: str, threads: int) -> tuple[int, str]:
    """tokreg's Megatron layout (int32 ids: the same bytes as uint32 for cl100k's ids), for
    Megatron-Core's reader to read back (untimed)."""
    from tokreg.datasets.options import TokenizeOptions
    from tokreg.datasets.writer import tokenize

    tok = _tok()
    t0 = _start()
    s = tokenize(tok, [path], out, TokenizeOptions(format="megatron", eos=EOT, shard_tokens=1 << 40), threads=threads)
    _mark(time.perf_counter() - t0)
    _at_end["documents"] = s.manifest["totals"]["documents"]
    data = Path(out, s.manifest["shards"][0]["name"] + ".bin").read_bytes()
    return len(data) // 4, xxhash.xxh3_128_hexdigest(data)


def encode_batch_run(path: str, out: str, threads: int) -> tuple[int, str]:
    """The ceiling: documents already in memory, `encode_batch_flat` alone (timed), in batches."""
    tok = _tok()
    docs = _docs(path)
    eot = tok.special_tokens[EOT]
    parts = []
    t0 = _start()
    for i in range(0, len(docs), CHUNK):
        parts.append(tok.encode_batch_flat(docs[i : i + CHUNK], threads=threads, disallowed_special=()))
    _mark(time.perf_counter() - t0)
    h, n = xxhash.xxh3_128(), 0
    for flat in parts:
        ids, offs = flat.to_numpy()
        for a, b in zip(offs[:-1], offs[1:]):
            h.update(np.append(ids[a:b], np.uint32(eot)).astype("<u4").tobytes())
        n += len(ids) + len(offs) - 1
    return n, h.hexdigest()


_enc: Any = None


def _nanogpt_init() -> None:
    global _enc
    from benchmarks.vocabs import tiktoken_enc

    _enc = tiktoken_enc("cl100k_base")


def _nanogpt_encode(texts: list[str]) -> list[list[int]]:
    eot = _enc.eot_token
    return [ids + [eot] for ids in _enc.encode_ordinary_batch(texts, num_threads=1)]


def _chunks(path: str) -> Iterator[list[str]]:
    if path.endswith(".txt"):
        docs = _docs(path)
        for i in range(0, len(docs), CHUNK):
            yield docs[i : i + CHUNK]
        return
    with open(path, encoding="utf-8") as fh:
        docs: list[str] = []
        for line in fh:
            docs.append(json.loads(line)["text"])
            if len(docs) == CHUNK:
                yield docs
                docs = []
        if docs:
            yield docs


def nanogpt_run(path: str, out: str, threads: int) -> tuple[int, str]:
    """nanoGPT's prepare.py, on tiktoken: encode_ordinary with <|endoftext|> appended, in a pool
    of processes, every document's ids appended to one uint32 file as the chunks come back (in
    bounded memory, unlike keeping every list until the end: 1 GB would not fit)."""
    from multiprocessing import Pool

    t0 = _start()
    total = 0
    with open(os.path.join(out, "train.bin"), "wb") as fh, Pool(threads, initializer=_nanogpt_init) as pool:
        for part in pool.imap(_nanogpt_encode, _chunks(path)):
            flat = np.fromiter((i for ids in part for i in ids), dtype="<u4")
            fh.write(flat.tobytes())
            total += len(flat)
    _mark(time.perf_counter() - t0)
    h = xxhash.xxh3_128()
    with open(os.path.join(out, "train.bin"), "rb") as fh:
        while b := fh.read(8 << 20):
            h.update(b)
    return total, h.hexdigest()


def datasets_run(path: str, out: str, threads: int) -> tuple[int, str]:
    """`datasets.map` with a fast HF tokenizer (tokreg's export of cl100k_base), num_proc workers,
    then the ids copied into one memmap as nanoGPT does."""
    import datasets
    from tokenizers import Tokenizer

    from benchmarks.peers import _hf_file

    hf = _hf_file("cl100k_base")
    datasets.disable_progress_bars()
    t0 = _start()
    ds = datasets.load_dataset("json", data_files=path, split="train", cache_dir=os.path.join(out, "cache"))
    tok = Tokenizer.from_file(hf)
    eot = tok.token_to_id(EOT)

    def enc(batch: dict[str, list[str]]) -> dict[str, list[list[int]]]:
        return {"ids": [e.ids + [eot] for e in tok.encode_batch(batch["text"], add_special_tokens=False)]}

    ds = ds.map(enc, batched=True, num_proc=threads, remove_columns=ds.column_names)
    total = sum(len(x) for x in ds["ids"])
    arr = np.memmap(os.path.join(out, "train.bin"), dtype=np.uint32, mode="w+", shape=(total,))
    at = 0
    for batch in ds.iter(batch_size=CHUNK):
        flat = np.concatenate([np.asarray(x, dtype=np.uint32) for x in batch["ids"]])
        arr[at : at + len(flat)] = flat
        at += len(flat)
    arr.flush()
    _mark(time.perf_counter() - t0)
    return total, xxhash.xxh3_128_hexdigest(np.asarray(arr).astype("<u4").tobytes())


def datatrove_run(path: str, out: str, threads: int) -> tuple[int, str]:
    """datatrove's JsonlReader -> DocumentTokenizer (no shuffling), one task (one input file)."""
    from datatrove.executor import LocalPipelineExecutor
    from datatrove.pipeline.readers import JsonlReader
    from datatrove.pipeline.tokens import DocumentTokenizer

    from benchmarks.peers import _hf_file

    hf = _hf_file("cl100k_base")
    t0 = _start()
    LocalPipelineExecutor(
        pipeline=[
            JsonlReader(os.path.dirname(path), glob_pattern=os.path.basename(path)),
            DocumentTokenizer(
                os.path.join(out, "ds"),
                tokenizer_name_or_path=hf,
                eos_token=EOT,
                shuffle_documents=False,
                batch_size=CHUNK,
            ),
        ],
        tasks=1,
        workers=1,
        logging_dir=os.path.join(out, "logs"),
    ).run()
    _mark(time.perf_counter() - t0)
    data = b"".join(Path(p).read_bytes() for p in sorted(glob.glob(os.path.join(out, "ds", "*.ds"))))
    return len(data) // 4, xxhash.xxh3_128_hexdigest(data)


def megatron_run(path: str, out: str, threads: int) -> tuple[int, str]:
    """Megatron-LM's tools/preprocess_data.py, in the Python TOKREG_BENCH_MEGATRON_PYTHON names,
    on the source tree TOKREG_BENCH_MEGATRON_LM, with tokreg's HF export of cl100k_base as a
    HuggingFaceTokenizer (<|endoftext|> its eos, appended by --append-eod); THREADS workers."""
    import subprocess

    from benchmarks.peers import _hf_file

    python, tree = os.environ.get("TOKREG_BENCH_MEGATRON_PYTHON"), os.environ.get("TOKREG_BENCH_MEGATRON_LM")
    if not python or not tree:
        raise ImportError(name="torch and megatron-core: set TOKREG_BENCH_MEGATRON_PYTHON and TOKREG_BENCH_MEGATRON_LM")
    hf = os.path.join(out, "hf")
    os.makedirs(hf)
    Path(hf, "tokenizer.json").write_bytes(Path(_hf_file("cl100k_base")).read_bytes())
    Path(hf, "tokenizer_config.json").write_text(
        json.dumps({"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": EOT, "model_max_length": 1 << 40})
    )
    t0 = _start()
    subprocess.run(
        [python, "-W", "ignore", os.path.join(tree, "tools", "preprocess_data.py"), "--input", path,
         "--output-prefix", os.path.join(out, "mg"), "--tokenizer-type", "HuggingFaceTokenizer",
         "--tokenizer-model", hf, "--legacy-tokenizer", "--append-eod", "--workers", str(threads),
         "--log-interval", "100000000"],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": tree},
    )  # fmt: skip
    _mark(time.perf_counter() - t0)
    data = Path(out, "mg_text_document.bin").read_bytes()
    if len(data) and np.frombuffer(data, dtype="<i4").min() < 0:
        raise ValueError("negative ids")
    return len(data) // 4, xxhash.xxh3_128_hexdigest(data)


_at_end: dict[str, float] = {}


def _cpu() -> float:
    """CPU seconds of this process and of its waited-for children (pools, Megatron)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


_cpu_at_start = [0.0]


def _start() -> float:
    """The timed part begins: its wall clock (and the CPU seconds so far, kept)."""
    _cpu_at_start[0] = _cpu()
    return time.perf_counter()


def _mark(seconds: float) -> None:
    """The run is over: its time, its CPU time, and the peak memory it reached (before any checking)."""
    _at_end["cpu_seconds"] = _cpu() - _cpu_at_start[0]
    _at_end["seconds"] = seconds
    _at_end["peak_rss_mb"] = peak_mb()
    _at_end["children_peak_mb"] = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


RUNS = {
    "tokreg": tokreg_run,
    "encode_batch": encode_batch_run,
    "nanogpt": nanogpt_run,
    "datasets": datasets_run,
    "datatrove": datatrove_run,
    "megatron": megatron_run,
    "tokreg-megatron": tokreg_megatron_run,
}


def main() -> None:
    name, path, out, threads = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    os.makedirs(out, exist_ok=True)
    try:
        tokens, digest = RUNS[name](path, out, threads)
    except ImportError as e:
        print(json.dumps({"error": f"not installed ({e.name})"}))
        return
    except Exception as e:  # a contender that fails is reported, not fatal to the table
        print(json.dumps({"error": f"failed ({type(e).__name__}: {e})"[:200]}))
        return
    print(json.dumps({**_at_end, "tokens": tokens, "digest": digest}))


if __name__ == "__main__":
    main()
