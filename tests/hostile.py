"""Hostile input for the importers: seed files of every format tokreg imports, mutators that
damage them the way files get damaged (and the way an attacker would), and a judge that runs
one import into a real registry and says what happened.

Used by tests/test_hostile_imports.py (a fixed, CI-sized run) and by `just fuzz` (`python -m
tests.hostile --seconds N`: a long campaign under a memory limit and a hang watchdog, which
prints the outcomes by format as a table).

Outcomes, and which ones are bugs:

    refused    InputError/IntegrityError, one line, registry unchanged       fine
    same       imported, `verify` passes, same ids as the reference library fine
    differs    imported, but the reference library gives other ids         BUG (a lie)
    unusable   imported, but `verify` fails or the encoder does not build  BUG
    crash      any other exception, or a message of several lines          BUG
    no-ref     imported and verified; the reference library refused the file or crashed on it

A hang or a runaway allocation kills the campaign's process (watchdog, RLIMIT_AS); the input
that did it is left in the work folder as `last-input`.
"""

from __future__ import annotations

import argparse
import base64
import faulthandler
import json
import random
import resource
import struct
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from tokreg import Registry, Tokenizer, TokregError
from tokreg.algorithms import BpeOptions, UnigramOptions, WordPieceOptions
from tokreg.patterns import BUILTIN

from .hf_unigram import unigram_json

#: Texts every accepted import is compared on (besides tokreg's own samples, which verify uses).
TEXTS = (
    "The quick brown fox jumps over the lazy dog. Hello, world!",
    "room 101 is here, 2026-11-22 at 10:30",
    "Café naïve façade; Zürich; cafe\u0301; Straße. ÀÉÎÕÜ",
    "東京は日本の首都です。北京欢迎你，世界你好。",
    "emoji: 👍🏽 👩\u200d💻 🇫🇷!",
    "  two leading spaces\t\ttabs\n\nblank\r\nCRLF   trailing   ",
    "x = f(1234567) + 3.14159; it's // done <|endoftext|> [CLS] <s>",
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
    "\x00\x01\x7f\u00a0\u2028\ufeff\U0010ffff",
)

FORMATS = (
    "tiktoken",
    "hf-byte",
    "hf-char",
    "hf-wordpiece",
    "hf-unigram",
    "sp-unigram",
    "sp-bpe",
    "vocab.txt",
    "tokreg",
)
BUGS = ("differs", "unusable", "crash")


# -- seeds ---------------------------------------------------------------------------------------


def make_seeds(folder: Path, corpus: Path) -> dict[str, bytes]:
    """One small valid file per format, made by training and exporting with tokreg (and
    SentencePiece's trainer for the .model files)."""
    import sentencepiece as spm  # only the seeds need the trainer

    folder.mkdir(parents=True, exist_ok=True)
    seeds: dict[str, bytes] = {}
    with Registry(folder / "seeds.db", create=True) as reg:
        reg.train("bb", [corpus], BpeOptions(vocab_size=400, special=("<|endoftext|>",)))
        reg.train("cb", [corpus], BpeOptions(vocab_size=200, char_level=True, pattern="whitespace"))
        reg.train("wp", [corpus], WordPieceOptions(vocab_size=250, special=("[CLS]", "[SEP]")))
        reg.train("ug", [corpus], UnigramOptions(vocab_size=500, byte_fallback=True, special=("<s>",)))
        for fmt, ref, kind in [
            ("tiktoken", "bb", "tiktoken"),
            ("hf-byte", "bb", "hf"),
            ("hf-char", "cb", "hf"),
            ("hf-wordpiece", "wp", "hf"),
            ("tokreg", "ug", "tokreg"),
        ]:
            reg.export(ref, kind, folder / fmt)
            seeds[fmt] = (folder / fmt).read_bytes()
        seeds["hf-unigram"] = unigram_json(reg.stored("ug").data())  # tokreg reads, never writes, this one
        seeds["tokreg-bpe"] = _exported(reg, "bb", folder)
        wp = reg.stored("wp").data()
        seeds["vocab.txt"] = "".join(t.bytes.decode() + "\n" for t in wp.tokens).encode()
    lines = [x for x in corpus.read_text(encoding="utf-8").splitlines() if x.strip()][:3000]
    for fmt, kind, extra in [("sp-unigram", "unigram", {}), ("sp-bpe", "bpe", {"byte_fallback": True})]:
        prefix = folder / fmt
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(lines),
            model_prefix=str(prefix),
            model_type=kind,
            vocab_size=600,
            normalization_rule_name="identity",
            minloglevel=2,
            **extra,
        )
        seeds[fmt] = prefix.with_suffix(".model").read_bytes()
    return seeds


def write_corpus(path: Path) -> Path:
    """About 60 KB of English from the shared corpora (small alphabets: the seeds' vocabularies
    stay small, and the texts' CJK and emoji exercise the unknown-character paths)."""
    from tests.conftest import head_lines

    path.write_bytes(head_lines("kjv.txt", 40_000) + head_lines("dr.en.txt", 20_000))
    return path


def _exported(reg: Registry, ref: str, folder: Path) -> bytes:
    p = folder / f"{ref}.tokreg.json"
    reg.export(ref, "tokreg", p)
    return p.read_bytes()


# -- mutators ------------------------------------------------------------------------------------

Mutator = Callable[[bytes, random.Random], bytes]

#: Values an attacker puts where a file expects something else (as JSON text).
HOSTILE_JSON = [
    "null",
    "true",
    "false",
    "-1",
    "0",
    "1.5",
    "4294967296",
    "1" + "0" * 5000,
    "1e999",
    "NaN",
    "Infinity",
    '""',
    '"\\ud800"',
    '"\\u0000"',
    '"<0x41>"',
    "[]",
    "{}",
    '[["a", 1e999]]',
    "[" * 3000 + "]" * 3000,
    '{"type": "Split", "pattern": {"Regex": "\\\\d+"}, "behavior": "Isolated", "invert": false}',
    '{"type": "Split", "pattern": {"Regex": "\\\\d+"}, "behavior": "MergedWithNext", "invert": false}',
    '{"type": "Split", "pattern": {"Regex": "(a+)+$"}, "behavior": "Removed", "invert": true}',
    '"' + "x" * 100_000 + '"',
]


def _bytes_flip(raw: bytes, r: random.Random) -> bytes:
    b = bytearray(raw)
    for _ in range(r.randint(1, 8)):
        if b:
            b[r.randrange(len(b))] = r.randrange(256)
    return bytes(b)


def _bytes_splice(raw: bytes, r: random.Random) -> bytes:
    if not raw:
        return raw
    i, j = sorted(r.randrange(len(raw)) for _ in range(2))
    k = r.randrange(len(raw))
    choice = r.randrange(4)
    if choice == 0:
        return raw[:i] + raw[j:]  # delete
    if choice == 1:
        return raw[:k] + raw[i:j] + raw[k:]  # duplicate a range
    if choice == 2:
        return raw[: r.randrange(len(raw))]  # truncate
    return raw[:k] + bytes(r.randrange(256) for _ in range(r.randint(1, 16))) + raw[k:]  # insert


def _json_node(raw: bytes, r: random.Random) -> bytes:
    """Replaces one node of the document by a hostile value, or deletes or duplicates a key."""
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError):
        return _bytes_flip(raw, r)
    paths: list[tuple[Any, Any]] = []
    stack = [doc]
    while stack and len(paths) < 50_000:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
        for k, v in items:
            paths.append((node, k))
            if isinstance(v, (dict, list)):
                stack.append(v)
    if not paths:
        return raw
    parent, key = r.choice(paths)
    marker = "\x00HOSTILE\x00"
    choice = r.randrange(10)
    if choice == 0 and isinstance(parent, dict):
        del parent[key]
        return json.dumps(doc, ensure_ascii=False).encode("utf-8", "surrogatepass")
    if choice == 1 and isinstance(parent, dict):
        # The same key twice in one object (json.dumps cannot write it): the second value wins
        # in Python's json, the first or an error elsewhere.
        value = json.dumps(parent[key], ensure_ascii=False)
        other = r.choice([value, "0", '"x"', json.dumps(parent[key] if not isinstance(parent[key], int) else -1)])
        parent[key] = marker
        text = json.dumps(doc, ensure_ascii=False)
        return text.replace(json.dumps(marker), f"{value}, {json.dumps(key)}: {other}", 1).encode(
            "utf-8", "surrogatepass"
        )
    if choice == 2 and isinstance(parent[key], int) and not isinstance(parent[key], bool):
        parent[key] = r.choice([parent[key] + 1, parent[key] - 1, -parent[key] - 1, parent[key] * 1000, 2**32 - 2])
        return json.dumps(doc, ensure_ascii=False).encode("utf-8", "surrogatepass")
    if choice == 3 and isinstance(parent[key], str) and parent[key]:
        s = parent[key]
        parent[key] = r.choice(["", s + s, s[:-1], s[::-1], s.upper(), "Ġ" + s, "##" + s])
        return json.dumps(doc, ensure_ascii=False).encode("utf-8", "surrogatepass")
    if choice == 4 and isinstance(parent, list) and parent:
        parent.append(r.choice(parent))  # a repeated entry (a merge, a piece, a token)
        return json.dumps(doc, ensure_ascii=False).encode("utf-8", "surrogatepass")
    parent[key] = marker
    text = json.dumps(doc, ensure_ascii=False)
    return text.replace(json.dumps(marker), r.choice(HOSTILE_JSON), 1).encode("utf-8", "surrogatepass")


#: Split patterns a semantic mutation puts in a pre-tokenizer.
SPLIT_REGEXES = [r"\d+", r"\s+", r"[a-z]+", r"\w+|[^\w\s]+", r" ?\p{L}+", r"\p{N}{1,3}", "a", r"(?i)th"]


def _json_semantic(raw: bytes, r: random.Random) -> bytes:
    """A change that keeps the file well-formed but changes what it means: a flag flipped, two
    ids swapped, a score nudged, another Split, an added token dropped or made non-special. An
    importer must then encode exactly like the reference library, or refuse."""
    try:
        doc = json.loads(raw)
    except (ValueError, RecursionError):
        return _bytes_flip(raw, r)
    if not isinstance(doc, dict) or not isinstance(doc.get("model"), dict):
        return raw
    try:
        _semantic_edit(doc, r)
    except (TypeError, KeyError, AttributeError, IndexError, ValueError):
        return raw  # an earlier mutation left no room for this one
    return json.dumps(doc, ensure_ascii=False).encode("utf-8", "surrogatepass")


def _semantic_edit(doc: dict[str, Any], r: random.Random) -> None:
    model = doc["model"]
    choice = r.randrange(6)
    if choice == 0:  # flip one boolean anywhere
        flags: list[tuple[Any, Any]] = []
        stack: list[Any] = [doc]
        while stack:
            node = stack.pop()
            items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else []
            for k, v in items:
                if isinstance(v, bool):
                    flags.append((node, k))
                elif isinstance(v, dict) or (isinstance(v, list) and len(v) < 50):
                    stack.append(v)
        if flags:
            node, k = r.choice(flags)
            node[k] = not node[k]
    elif choice == 1 and isinstance(model.get("vocab"), dict) and len(model["vocab"]) > 2:
        vocab = model["vocab"]
        a, b = r.sample(list(vocab), 2)
        vocab[a], vocab[b] = vocab[b], vocab[a]
    elif choice == 2 and isinstance(model.get("vocab"), list) and len(model["vocab"]) > 2:
        entry = r.choice(model["vocab"])
        if isinstance(entry, list) and len(entry) == 2 and isinstance(entry[1], (int, float)):
            entry[1] = r.choice([entry[1] + 0.5, entry[1] - 0.5, 0.0, entry[1] * 2, -1e-7])
    elif choice == 3:
        step = {
            "type": "Split",
            "pattern": {"Regex": r.choice(SPLIT_REGEXES)},
            "behavior": r.choice(["Isolated", "Isolated", "Removed", "MergedWithNext"]),
            "invert": r.choice([False, True]),
        }
        pre = doc.get("pre_tokenizer")
        if isinstance(pre, dict) and pre.get("type") == "Sequence" and pre.get("pretokenizers"):
            pre["pretokenizers"][0] = step
        else:
            doc["pre_tokenizer"] = step
    elif choice == 4 and doc.get("added_tokens"):
        added = doc["added_tokens"]
        k = r.randrange(len(added))
        if r.randrange(2):
            del added[k]
        else:
            added[k]["special"] = False
    else:
        for key in ("max_input_chars_per_word", "unk_id", "continuing_subword_prefix", "unk_token"):
            if key in model:
                model[key] = r.choice([1, 2, 0, "##", "@@", "[UNK]", "<unk>", None])
                break


def _lines(raw: bytes, r: random.Random) -> bytes:
    """tiktoken and vocab.txt: swap, repeat, drop or change whole lines (ranks included)."""
    lines = raw.split(b"\n")
    if len(lines) < 3:
        return _bytes_flip(raw, r)
    i, j = r.randrange(len(lines)), r.randrange(len(lines))
    choice = r.randrange(6)
    if choice == 0:
        lines[i], lines[j] = lines[j], lines[i]
    elif choice == 1:
        lines.insert(j, lines[i])
    elif choice == 2:
        del lines[i]
    elif choice == 3 and b" " in lines[i]:
        tok, _, _ = lines[i].partition(b" ")
        rank = r.choice([-1, 2**31, 2**32, 2**32 - 2, 10**12, 99999999999999999999, 0, j])
        lines[i] = tok + b" " + str(rank).encode()
    elif choice == 4:
        lines[i] = r.choice([b"", b" ", b"==== 5", base64.b64encode(b"") + b" 7", b"\xff\xfe 3", b"QQ== 1 2"])
    else:
        lines[i] = base64.b64encode(bytes(r.randrange(256) for _ in range(r.randint(1, 6)))) + b" " + str(j).encode()
    return b"\n".join(lines)


def _proto(raw: bytes, r: random.Random) -> bytes:
    """SentencePiece .model: damage one piece (its text, score or type) or a varint."""
    choice = r.randrange(4)
    # pieces are field 1 (tag 0x0a), each holding piece=1 (0x0a), score=2 (0x15 + 4 bytes), type=3 (0x18)
    starts = [i for i in range(len(raw) - 8) if raw[i] == 0x0A and raw[i + 2] == 0x0A]
    if not starts:
        return _bytes_flip(raw, r)
    i = r.choice(starts)
    if choice == 0:  # a score becomes inf, -inf, NaN or huge
        k = raw.find(b"\x15", i, i + 64)
        if k > 0:
            bits = struct.pack("<f", r.choice([float("inf"), float("-inf"), float("nan"), 3e38, -0.0]))
            return raw[: k + 1] + bits + raw[k + 5 :]
    if choice == 1:  # a piece's type becomes another (or an unknown one)
        k = raw.find(b"\x18", i, i + 64)
        if k > 0:
            return raw[: k + 1] + bytes([r.choice([1, 2, 3, 4, 5, 6, 7, 0x7F])]) + raw[k + 2 :]
    if choice == 2:  # one piece repeated
        n = raw[i + 1] + 2
        return raw[: i + n] + raw[i : i + n] + raw[i + n :]
    return _bytes_splice(raw, r)


MUTATORS: dict[str, list[Mutator]] = {
    "tiktoken": [_lines, _lines, _bytes_flip, _bytes_splice],
    "vocab.txt": [_lines, _lines, _bytes_flip, _bytes_splice],
    "sp-unigram": [_proto, _proto, _bytes_flip],
    "sp-bpe": [_proto, _proto, _bytes_flip],
}
for _fmt in ("hf-byte", "hf-char", "hf-wordpiece", "hf-unigram"):
    MUTATORS[_fmt] = [_json_node, _json_node, _json_semantic, _json_semantic, _bytes_flip, _bytes_splice]
MUTATORS["tokreg"] = [_json_node, _json_node, _json_node, _bytes_flip, _bytes_splice]


def _rehash(raw: bytes) -> bytes:
    """A tokreg file whose "hash" is recomputed after the damage, as an attacker would: what
    is left to stop garbage is the reader and the encoder, not the hash."""
    from tokreg.data import MergeRow, TokenizerData, TokenRow

    try:
        doc = json.loads(raw)
        data = TokenizerData(
            algorithm=doc["algorithm"],
            config=doc["config"],
            tokens=[TokenRow(id=i, kind=k, bytes=base64.b64decode(b), score=s) for i, k, b, s in doc["tokens"]],
            merges=[MergeRow(rank=n, left=a, right=b, result=z) for n, (a, b, z) in enumerate(doc["merges"])],
        )
        doc["hash"] = data.hashes()[0]
        return json.dumps(doc, ensure_ascii=False).encode("utf-8", "surrogatepass")
    except Exception:
        return raw


def mutate(fmt: str, seed: bytes, r: random.Random, rounds: int = 0) -> bytes:
    """`seed` damaged by 1-3 mutators of its format (or exactly `rounds`); a tokreg file gets
    a hash that matches its damaged content two times in three."""
    raw = seed
    for _ in range(rounds or r.choice([1, 1, 1, 2, 3])):
        raw = r.choice(MUTATORS[fmt])(raw, r)
    if fmt == "tokreg" and r.randrange(3):
        raw = _rehash(raw)
    return raw


# -- the judge -----------------------------------------------------------------------------------


@dataclass
class Outcome:
    kind: str  # refused | same | differs | unusable | crash | no-ref
    detail: str = ""


def _import(reg: Registry, fmt: str, path: Path) -> Optional[str]:
    """Imports `path`; returns the new ref (None for the tokreg file, which loads without a registry)."""
    if fmt == "tiktoken":
        return reg.import_tiktoken("t", path, pattern="cl100k", specials={"<|endoftext|>": 1000}).ref
    if fmt.startswith("hf-"):
        return reg.import_hf("t", path).ref
    if fmt.startswith("sp-"):
        return reg.import_sentencepiece("t", path).ref
    if fmt == "vocab.txt":
        return reg.import_wordpiece("t", path, WordPieceOptions(vocab_size=0)).ref
    Tokenizer.from_file(path)
    return None


def _reference(fmt: str, raw: bytes) -> Optional[Callable[[str], list[int]]]:
    """The reference library's encode for this file, or None when it refuses the file."""
    try:
        if fmt == "tiktoken":
            import tiktoken

            ranks = {base64.b64decode(t): int(r) for t, r in (ln.split() for ln in raw.splitlines() if ln.strip())}
            enc = tiktoken.Encoding("t", pat_str=BUILTIN["cl100k"], mergeable_ranks=ranks, special_tokens={})
            return lambda s: enc.encode_ordinary(s)
        if fmt.startswith("hf-"):
            from tokenizers import Tokenizer as HfTokenizer

            hf = HfTokenizer.from_str(raw.decode("utf-8"))
            return lambda s: hf.encode(s, add_special_tokens=False).ids
        if fmt.startswith("sp-"):
            import sentencepiece as spm

            sp = spm.SentencePieceProcessor(model_proto=raw)
            return lambda s: sp.encode(s)
        if fmt == "vocab.txt":
            from tokenizers import Tokenizer as HfTokenizer
            from tokenizers import models, normalizers, pre_tokenizers

            lines = raw.decode("utf-8").split("\n")
            lines = lines[:-1] if lines[-1] == "" else lines  # a last line without its newline counts
            vocab = {t.rstrip("\r"): i for i, t in enumerate(lines)}
            bert = HfTokenizer(models.WordPiece(vocab, unk_token="[UNK]", max_input_chars_per_word=100))
            bert.normalizer = normalizers.BertNormalizer(lowercase=False)
            bert.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
            return lambda s: bert.encode(s, add_special_tokens=False).ids
    except BaseException:  # the reference's own failure (a Rust panic is a BaseException)
        return None
    return None


def judge(reg: Registry, fmt: str, raw: bytes, folder: Path) -> Outcome:
    path = folder / f"input.{fmt}"
    path.write_bytes(raw)
    before = len(reg.versions())
    try:
        ref = _import(reg, fmt, path)
    except TokregError as e:
        msg = str(e)
        if "\n" in msg or not msg:
            return Outcome("crash", f"a message of {msg.count(chr(10)) + 1} lines: {msg[:200]!r}")
        if len(reg.versions()) != before:
            return Outcome("crash", f"refused ({msg[:100]}) but the registry changed")
        return Outcome("refused", type(e).__name__)
    except Exception as e:  # anything else is a traceback for the user
        return Outcome("crash", f"{type(e).__name__}: {str(e)[:200]}")
    if ref is None:
        return Outcome("no-ref", "tokreg file: loads, hash checked")
    report = reg.verify(ref)[0]
    if not report.ok:
        return Outcome("unusable", "; ".join(report.problems)[:300])
    tok = reg.load(ref, lock=False)
    encode = _reference(fmt, raw)
    if encode is None:
        return Outcome("no-ref", "the reference library refuses this file")
    for text in TEXTS:
        try:
            want = encode(text)
        except BaseException:
            return Outcome("no-ref", "the reference library fails on a text")
        got = tok.encode(text, allowed_special="all") if fmt.startswith("hf-") else tok.encode_ordinary(text)
        if got != want and not _tie(reg, ref, got, want):
            return Outcome("differs", f"{text[:30]!r}: tokreg {got[:12]}, reference {want[:12]}")
    return Outcome("same")


def _tie(reg: Registry, ref: str, got: list[int], want: list[int]) -> bool:
    """Whether two Unigram segmentations score the same: HF sums scores in f64, tokreg and
    SentencePiece in f32, so on an exact tie either may win (docs/sentencepiece.md)."""
    data = reg.stored(ref).data()
    if data.algorithm != "unigram":
        return False
    scores = {t.id: t.score or 0.0 for t in data.tokens}
    a, b = sum(scores.get(i, 0.0) for i in got), sum(scores.get(i, 0.0) for i in want)
    return abs(a - b) <= 1e-4 * max(1.0, abs(a))


# -- the campaign (`just fuzz`) ------------------------------------------------------------------


def campaign(seconds: float, folder: Path, corpus: Path, seed: int) -> Counter[tuple[str, str]]:
    """Mutates and judges inputs of every format in turn for `seconds`; returns the tally
    (format, outcome) -> count, and keeps every bug's input in `folder/bugs`."""
    seeds = make_seeds(folder / "seeds", corpus)
    seeds_of = {f: [seeds[f]] + ([seeds["tokreg-bpe"]] if f == "tokreg" else []) for f in FORMATS}
    r = random.Random(seed)
    tally: Counter[tuple[str, str]] = Counter()
    (folder / "bugs").mkdir(exist_ok=True)
    end = time.monotonic() + seconds
    n = 0
    with Registry(folder / "fuzz.db", create=True) as reg:
        while time.monotonic() < end:
            fmt = FORMATS[n % len(FORMATS)]
            raw = mutate(fmt, r.choice(seeds_of[fmt]), r)
            (folder / "last-input").write_bytes(raw)
            faulthandler.dump_traceback_later(60, exit=True)  # a hang ends the campaign, loudly
            out = judge(reg, fmt, raw, folder)
            faulthandler.cancel_dump_traceback_later()
            tally[(fmt, out.kind)] += 1
            if out.kind in BUGS:
                (folder / "bugs" / f"{n}.{fmt}").write_bytes(raw)
                print(f"{out.kind}: {fmt} input {n}: {out.detail}", file=sys.stderr)
            n += 1
    return tally


def table(tally: Counter[tuple[str, str]]) -> str:
    kinds = ["refused", "same", "no-ref", "differs", "unusable", "crash"]
    rows = ["| format | inputs | " + " | ".join(kinds) + " |", "|---" * (len(kinds) + 2) + "|"]
    for fmt in FORMATS:
        counts = [tally[(fmt, k)] for k in kinds]
        rows.append(f"| {fmt} | {sum(counts):,} | " + " | ".join(f"{c:,}" for c in counts) + " |")
    total = [sum(tally[(f, k)] for f in FORMATS) for k in kinds]
    rows.append(f"| all | {sum(total):,} | " + " | ".join(f"{c:,}" for c in total) + " |")
    return "\n".join(rows)


def main() -> None:
    ap = argparse.ArgumentParser(prog="just fuzz", description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=300)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--memory-gb", type=float, default=4, help="address-space limit: a runaway allocation fails")
    ap.add_argument("--corpus", type=Path, default=None, help="text the seed files are trained on")
    args = ap.parse_args()
    limit = int(args.memory_gb * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    folder = Path(tempfile.mkdtemp(prefix="tokreg-fuzz-"))
    corpus = args.corpus or folder / "corpus.txt"
    if args.corpus is None:
        write_corpus(corpus)
    print(f"fuzzing the importers for {args.seconds:.0f} s (seed {args.seed}, work folder {folder})")
    tally = campaign(args.seconds, folder, corpus, args.seed)
    print(table(tally))
    bugs = sum(c for (_, k), c in tally.items() if k in BUGS)
    sys.exit(1 if bugs else 0)


if __name__ == "__main__":
    main()
