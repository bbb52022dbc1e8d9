"""Writes src/wordpiece/tables.rs, the character classes of the core's BERT normalizer and
pre-tokenizer, by probing Hugging Face `tokenizers` on every Unicode scalar value.

    python tools/gen_wordpiece_tables.py           # rewrite src/wordpiece/tables.rs
    python tools/gen_wordpiece_tables.py --check   # exit 1 (and say how) if it differs

Why probe instead of reading Unicode's tables: HF's BertNormalizer and BertPreTokenizer use the
`unicode_categories` crate, whose tables are of an older Unicode version than anything Python or
the core carry, and the core must give exactly HF's result. Each class is what one probe shows:

    table              probe (c = one scalar value)                              c is in it when
    CLEAN_REMOVED      BertNormalizer(clean_text only).normalize_str(c)          -> ""
    CLEAN_WHITESPACE   the same                                                  -> " " and c != " "
    PRETOK_PUNCT       BertPreTokenizer().pre_tokenize_str("a" + c + "a")        -> ["a", c, "a"]
    PRETOK_WHITESPACE  the same                                                  -> ["a", "a"]
    STRIP_MARKS        BertNormalizer(strip_accents only).normalize_str(c)       -> ""
    CJK_IDEOGRAPHS     BertNormalizer(handle_chinese_chars only).normalize_str(c) -> " " + c + " "
    NFD_KEEP_AS_HF     the core's NFD (unicode-normalization) changes c, HF's NFD leaves it as is

The last needs tokreg's built core (`pip install -e .`): its `unicode_form="nfd"` with every BERT
step off is plain `unicode-normalization` NFD, which does not read these tables.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

TABLES_RS = Path(__file__).resolve().parent.parent / "src" / "wordpiece" / "tables.rs"

# (name, the comment above it): the order of the file.
PROBED = [
    (
        "CLEAN_REMOVED",
        "/// Dropped by `clean_text`: NUL, U+FFFD and HF's `is_control` (Cc/Cf/Co as the unicode_categories tables"
        " see them, minus \\t \\n \\r; note U+000B, U+000C, U+0085 are removed, not mapped to a space).",
    ),
    (
        "CLEAN_WHITESPACE",
        "/// Mapped to ' ' by `clean_text` (HF's `is_whitespace`: \\t \\n \\r plus Rust `char::is_whitespace`,"
        " minus the removed controls).",
    ),
    ("PRETOK_PUNCT", "/// Isolated by the pre-tokenizer (ASCII punctuation plus Unicode P* in HF's tables)."),
    ("PRETOK_WHITESPACE", "/// Split on (and dropped) by the pre-tokenizer (`char::is_whitespace` as built into HF)."),
    (
        "STRIP_MARKS",
        "/// Dropped after NFD by `strip_accents` (Mn in HF's tables; also the few chars whose NFD is only marks).",
    ),
    ("CJK_IDEOGRAPHS", "/// Surrounded with spaces by `handle_chinese_chars` (the CJK ideograph blocks)."),
]
NFD_KEEP = (
    "NFD_KEEP_AS_HF",
    "// Not probed: the code points that `unicode-normalization` 0.1.26 (Unicode 16) decomposes under\n"
    "// NFD but HF's older normalization tables leave alone (they were unassigned there). Found by the\n"
    "// `hf_parity_codepoints` reference test; `strip_accents` passes them through unchanged, as HF does.",
)
NAMES = [name for name, _ in PROBED] + [NFD_KEEP[0]]


def header(version: str) -> str:
    return (
        "//! Character-class tables for the BERT normalizer and pre-tokenizer.\n"
        "//! GENERATED - do not edit by hand. The classes were obtained by probing Hugging Face\n"
        f"//! `tokenizers` {version} on every Unicode scalar value (BertNormalizer with one option on at a time,\n"
        '//! BertPreTokenizer on "a" + c + "a"), because HF uses the old `unicode_categories` tables whose\n'
        "//! Unicode version differs from anything available here, and parity with HF is the requirement.\n"
        "//! Each table is a sorted list of inclusive, non-overlapping, non-adjacent (lo, hi) ranges.\n"
    )


def scalar_values() -> Iterator[int]:
    """Every Unicode scalar value: the code points minus the surrogates."""
    yield from range(0xD800)
    yield from range(0xE000, 0x110000)


def classify(code_points: Iterable[int]) -> dict[str, list[int]]:
    """The code points of `code_points` in each table, in the order given."""
    from tokenizers import normalizers, pre_tokenizers

    from tokreg import _core

    def bert(**on: bool) -> normalizers.Normalizer:
        off = dict(clean_text=False, handle_chinese_chars=False, strip_accents=False, lowercase=False)
        return normalizers.BertNormalizer(**{**off, **on})

    clean = bert(clean_text=True).normalize_str
    strip = bert(strip_accents=True).normalize_str
    cjk = bert(handle_chinese_chars=True).normalize_str
    pretok = pre_tokenizers.BertPreTokenizer().pre_tokenize_str
    hf_nfd = normalizers.NFD().normalize_str
    # A WordPiece encoder of one token, every BERT step off: its normalize is the core's NFD alone.
    unk = b"[UNK]"
    content = (
        b'tokreg-content-v1\n{"algorithm":"wordpiece","config":{}}\ntokens 1\n'
        + b"\x00\x00\x00\x00\x07\x00special"
        + len(unk).to_bytes(4, "little")
        + unk
        + b"\x00merges 0\n"
    )
    off = dict(clean_text=False, handle_chinese_chars=False, strip_accents=False, lowercase=False)
    core_nfd = _core.Encoder.wordpiece(content, "[UNK]", unicode_form="nfd", **off).normalize

    out: dict[str, list[int]] = {name: [] for name in NAMES}
    for cp in code_points:
        c = chr(cp)
        cleaned = clean(c)
        if cleaned == "":
            out["CLEAN_REMOVED"].append(cp)
        elif cleaned == " " and c != " ":
            out["CLEAN_WHITESPACE"].append(cp)
        pieces = [p for p, _ in pretok("a" + c + "a")]
        if pieces == ["a", c, "a"]:
            out["PRETOK_PUNCT"].append(cp)
        elif pieces == ["a", "a"]:
            out["PRETOK_WHITESPACE"].append(cp)
        if strip(c) == "":
            out["STRIP_MARKS"].append(cp)
        if cjk(c) == f" {c} ":
            out["CJK_IDEOGRAPHS"].append(cp)
        if core_nfd(c) != c and hf_nfd(c) == c:
            out["NFD_KEEP_AS_HF"].append(cp)
    return out


def ranges(code_points: Sequence[int]) -> list[tuple[int, int]]:
    """Sorted code points as inclusive, non-adjacent (lo, hi) ranges: [1, 2, 3, 7] -> [(1, 3), (7, 7)]."""
    out: list[tuple[int, int]] = []
    for cp in sorted(code_points):
        if out and out[-1][1] + 1 == cp:
            out[-1] = (out[-1][0], cp)
        else:
            out.append((cp, cp))
    return out


def render(tables: dict[str, list[tuple[int, int]]], version: str) -> str:
    """The text of tables.rs for `tables` (name -> ranges) probed from `tokenizers` `version`."""
    parts = [header(version)]
    for name, comment in [*PROBED, NFD_KEEP]:
        rows = "".join(f"    (0x{lo:X}, 0x{hi:X}),\n" for lo, hi in tables[name])
        parts.append(f"\n{comment}\npub(crate) static {name}: &[(u32, u32)] = &[\n{rows}];\n")
    return "".join(parts)


def generate() -> str:
    import tokenizers

    found = classify(scalar_values())
    return render({name: ranges(cps) for name, cps in found.items()}, tokenizers.__version__)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="compare with tables.rs instead of writing it")
    ap.add_argument("--out", type=Path, default=TABLES_RS, help="the file to write or check [default: %(default)s]")
    args = ap.parse_args(argv)
    text = generate()
    if not args.check:
        args.out.write_text(text, encoding="utf-8")
        print(f"wrote {args.out}")
        return 0
    old = args.out.read_text(encoding="utf-8")
    if old == text:
        print(f"{args.out} is what the generator writes")
        return 0
    sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), text.splitlines(True), str(args.out), "generated"))
    return 1


if __name__ == "__main__":
    sys.exit(main())
