"""The border check: before a file made for another library is written (`export`, `to_hf()`),
that library loads it and encodes the check texts, and its ids must be tokreg's, id for id.

    >>> export_check.check("hf", raw, tok, samples)   # the library that judged: "tokenizers 0.23.3"

The check texts are the caller's (a version's stored samples), then `MIXED`: a few kilobytes in
the scripts, spacing and symbols that break tokenizers, then each special token of the version
in the places a special token breaks things (inside a word, twice in a row, at either end,
beside CJK). Special tokens are allowed, as `encode(..., allowed_special="all")` does; where the
target library has no notion of them the check does what a user of that library does:

- `hf`: `tokenizers.Tokenizer.from_str(file)`, `encode_batch(texts, add_special_tokens=False)`,
  and `True` too when the version has a template;
- `tiktoken`: `tiktoken.Encoding(pat_str=the version's pattern, mergeable_ranks=the file,
  special_tokens=the version's)`, `encode_batch(texts, allowed_special="all")`. The rank file
  is parsed here as `tiktoken.load.load_tiktoken_bpe` parses it (that function reads only paths,
  through a cache keyed by path, which a file not yet written must stay out of);
- `sentencepiece`: `SentencePieceProcessor(model_proto=file)`; sentencepiece never matches a
  control piece in text, so the text is cut at the special tokens (leftmost, longest first, as
  tokreg cuts it), each part encoded with `encode` and each special given `piece_to_id`;
- `tokreg`: the file through `Tokenizer.from_file`, which checks its hash.

A difference refuses the file in one line naming the first text that differs and the ids from
where they part. A library that is not installed is not a failure: one warning says the check
was skipped (`ExportCheckSkipped`; the CLI prints it as a `tokreg: warning:` line).
"""

from __future__ import annotations

import base64
import importlib
import os
import re
import tempfile
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Optional

from ..errors import InputError

if TYPE_CHECKING:
    from .tokenizer import Tokenizer

#: texts -> their ids, one list per text
Encoder = Callable[[list[str]], list[list[int]]]


class ExportCheckSkipped(UserWarning):
    """The library that reads an export is not installed, so the export was not checked with it."""


#: A few kilobytes of mixed text: prose, contractions and case, numbers, code and whitespace runs,
#: URLs and JSON, Latin with accents (precomposed and combining), Greek, Cyrillic, Arabic and
#: Hebrew (right to left), Devanagari and Thai, Chinese, Japanese (kana runs a 128k rank file
#: holds as single tokens: している), Korean, full-width forms, emoji with modifiers, ZWJ
#: sequences and flags, control and invisible characters, runs of punctuation and of repeated
#: pieces (where equally likely segmentations meet), deep indentation, a long word.
MIXED: tuple[str, ...] = (
    "The quick brown fox jumps over the lazy dog. Hello, World! HELLO world; hello WORLD?",
    "I'm sure they're here, you'll see: we've done it, he'd said, O'Neil's dog's bone.",
    "  Leading spaces, trailing spaces   ",
    "tabs\tbetween\t\twords and   runs     of      spaces",
    "line one\nline two\r\nline three\n\n\nafter blank lines\r\n\r\n",
    "Numbers: 0 1 12 123 1234 12345 123456 1234567 3.14159 -42 +7 1,000,000 1e-9 0x1F 2026-11-26 12:34:56",
    "def encode(self, text: str) -> list[int]:\n    return [self.vocab[t] for t in text.split()]  # 4 spaces",
    "\tif (a && b || !c) { x += y * 2; } else { return nullptr; }\n\t\t// comment",
    "for i in range(10):\n        print(f'{i:>4}', end='')\n",
    '{"key": [1, 2, 3], "nested": {"a": null, "b": true, "c": "text"}, "float": 1.5e10}',
    "https://example.com/path/to/page.html?query=1&other=two#fragment mailto:someone@example.org",
    '<html><body><p class="x">Paragraph &amp; entity &lt;tag&gt;</p></body></html>',
    "Café naïve façade, Zürich, São Paulo, Ångström, Łódź, Dvořák; cafe\u0301 with a combining accent.",
    "Größenverhältnisse über die Straße: Äpfel, Öl und Übermut. Fußgängerübergänge!",
    "Ça coûte très cher, n'est-ce pas ? « Les guillemets » et l'œuvre d'Æsop.",
    "Καλημέρα κόσμε, αυτό είναι ελληνικό κείμενο.",
    "Привет, мир! Это русский текст с числами 123 и знаками препинания.",
    "مرحبا بالعالم، هذا نص عربي من اليمين إلى اليسار ١٢٣",
    "שלום עולם, זהו טקסט בעברית.",
    "नमस्ते दुनिया, यह हिन्दी पाठ है। क्षत्रिय",
    "สวัสดีชาวโลก นี่คือข้อความภาษาไทย",
    "自然语言处理是人工智能的一个分支。我们使用 Debian 系统，版本 12。",
    "北京欢迎你，世界你好！「引号」和（括号）以及——破折号……",
    "日本語のテキストを処理しています。東京都に住んでいる人は、毎日電車を利用している。",
    "している いる して されている していない しています ことができる",
    "한국어 문장입니다. 안녕하세요, 세계!",
    "Full-width: ＡＢＣ　ＤＥＦ１２３！？　ｶﾀｶﾅ",
    "emoji: 👍🏽 👩\u200d💻 👨\u200d👩\u200d👧\u200d👦 🇫🇷🇩🇪 ❤️ 🎉!",
    "Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d\u034f\u0334\u0319 a\u0300\u0301\u0302 combining marks",
    "control \x00\x01\x07\x1b[0m\x7f and invisible \u200b\u200c\u200d\ufeff\u00ad characters",
    ".:.:.:.: !!!??? ---- .... ,,,, ;;;; ```code``` ~~~~ ==== **** #### $$$$ %%%% ^^^^ &&&&",
    "pneumonoultramicroscopicsilicovolcanoconiosis Donaudampfschifffahrtsgesellschaftskapitän",
    "MiXeD CaSe WoRdS and ALLCAPS and lowercase and Title Case",
    "a b c d e f g h i j k l m n o p q r s t u v w x y z A B C 1 2 3",
    "Runs: " + "-" * 60 + " " + "=" * 33 + " " + "." * 17 + " " + "ha" * 12 + " " + "abab" * 5 + " " + "_" * 24,
    "Indented:\n" + " " * 32 + "x\n" + "\t" * 6 + "y\n" + " \t" * 8 + "z",
    "In the beginning God created the heaven and the earth. And the earth was without form, and void; and darkness "
    "was upon the face of the deep. And the Spirit of God moved upon the face of the waters.",
    "Debian のパッケージ管理システム apt-get install の使い方を説明します。sudo apt update && sudo apt upgrade -y",
    "end with a space ",
    " ",
    "",
)


def texts(special_tokens: Sequence[str], samples: Sequence[str] = ()) -> list[str]:
    """The check texts for a version with these special tokens (in id order)."""
    out = [*samples, *MIXED]
    for k, s in enumerate(special_tokens):
        out.append(f"{s}a{s}{s} b {s}\n日本{s}語 {MIXED[k % len(MIXED)][:40]}{s}")
    if special_tokens:
        out.append("".join(special_tokens[:256]))
        out.append(" ".join(f"{line} {s}" for line, s in zip(MIXED, special_tokens)))
    return out


def check(fmt: str, raw: bytes, tok: Tokenizer, samples: Sequence[str] = ()) -> Optional[str]:
    """Refuses (InputError) the file `raw` in format `fmt` unless the library that reads it gives
    `tok`'s ids on the check texts. Returns the library that judged, with its version; None
    (and one warning) when it is not installed."""
    loader = _LOADERS.get(fmt)
    if loader is None:
        raise InputError(f"no check for the {fmt!r} format")
    name = _LIBRARIES[fmt]
    try:
        library = importlib.import_module(name)
    except ImportError:
        warnings.warn(
            ExportCheckSkipped(
                f"{name} is not installed, so the {fmt} export of {tok.ref} was not checked with it "
                f"(pip install {name} to check that it gives tokreg's ids)"
            ),
            stacklevel=2,
        )
        return None
    judge = f"{name} {getattr(library, '__version__', '')}".strip()
    try:
        encode, framed = loader(library, raw, tok)
    except InputError:
        raise
    except Exception as e:
        raise InputError(
            f"{tok.ref}: {judge} cannot load the {fmt} file tokreg made ({type(e).__name__}: {str(e)[:120]}); "
            "nothing was written"
        ) from None
    compare(
        encode, tok, judge, f"the {fmt} file would not give tokreg's ids, so it was not written", samples, framed=framed
    )
    return judge


def compare(
    theirs: Encoder, tok: Tokenizer, judge: str, refusal: str, samples: Sequence[str] = (), *, framed: bool = False
) -> None:
    """Refuses, in one line starting with `refusal`, when `theirs` gives other ids than `tok` on
    any check text (special tokens allowed). `framed`: `theirs` gives each text's ids, a -1, then
    its ids with the template (`hf_encoder`), and tok's are made the same way."""
    batch = texts(sorted(tok.special_tokens, key=lambda s: tok.special_tokens[s]), samples)
    ours = tok.encode_batch(batch, allowed_special="all")
    if framed:
        full = tok.encode_batch(batch, allowed_special="all", add_special_tokens=True)
        ours = [p + [-1] + f for p, f in zip(ours, full)]
    for n, (text, a, b) in enumerate(zip(batch, theirs(batch), ours)):
        if list(a) != list(b):
            at = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            raise InputError(
                f"{tok.ref}: {refusal}: for the text "
                f"{text[:60]!r}{'…' if len(text) > 60 else ''} (check text {n}) {judge} gives {_window(a, at)} where "
                f"tokreg gives {_window(b, at)}; export it with --format tokreg, and report this"
            )


def hf_encoder(hf: Any, tok: Tokenizer) -> tuple[Encoder, bool]:
    """A `tokenizers.Tokenizer`'s ids, and whether they are framed: with tok's template, each
    text's ids are followed by -1 and the ids of the same text with `add_special_tokens=True`."""

    def encode(batch: list[str]) -> list[list[int]]:
        plain = [e.ids for e in hf.encode_batch(batch, add_special_tokens=False)]
        if tok.template is None:
            return plain
        full = [e.ids for e in hf.encode_batch(batch, add_special_tokens=True)]
        return [p + [-1] + f for p, f in zip(plain, full)]

    return encode, tok.template is not None


def _window(ids: Sequence[int], at: int, width: int = 6) -> str:
    """The ids from a little before `at` to a little after, `-1` shown as `|` (the template's marker)."""
    lo = max(0, at - 2)
    shown = ", ".join("|" if i == -1 else str(i) for i in ids[lo : at + width])
    return f"[{'…, ' if lo else ''}{shown}{', …' if at + width < len(ids) else ''}]"


# -- loading a file in its library --------------------------------------------------------------


def _hf(tokenizers: Any, raw: bytes, tok: Tokenizer) -> tuple[Encoder, bool]:
    return hf_encoder(tokenizers.Tokenizer.from_str(raw.decode("utf-8")), tok)


def _tiktoken(tiktoken: Any, raw: bytes, tok: Tokenizer) -> tuple[Encoder, bool]:
    ranks: dict[bytes, int] = {}
    for line in raw.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    enc = tiktoken.Encoding(
        name=f"tokreg-check-{tok.hash[-12:]}",
        pat_str=tok.config["pattern"],  # a rank file holds no pattern: its user passes the version's
        mergeable_ranks=ranks,
        special_tokens=dict(tok.special_tokens),
    )

    def encode(batch: list[str]) -> list[list[int]]:
        return [list(ids) for ids in enc.encode_batch(batch, allowed_special="all")]

    return encode, False


def _sentencepiece(spm: Any, raw: bytes, tok: Tokenizer) -> tuple[Encoder, bool]:
    sp = spm.SentencePieceProcessor(model_proto=raw)
    specials = sorted(tok.special_tokens, key=len, reverse=True)
    cut = re.compile("|".join(map(re.escape, specials))) if specials else None

    def one(text: str) -> list[int]:
        if cut is None:
            return list(sp.encode(text))
        ids: list[int] = []
        at = 0
        for m in cut.finditer(text):
            ids += sp.encode(text[at : m.start()])
            ids.append(sp.piece_to_id(m.group()))
            at = m.end()
        return ids + list(sp.encode(text[at:]))

    return (lambda batch: [one(t) for t in batch]), False


def _tokreg(tokreg: Any, raw: bytes, tok: Tokenizer) -> tuple[Encoder, bool]:
    fd, path = tempfile.mkstemp(prefix="tokreg-check-", suffix=".json")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
        back = type(tok).from_file(path, expect_hash=tok.hash)
    finally:
        os.unlink(path)
    return (lambda batch: back.encode_batch(batch, allowed_special="all")), False


_LOADERS: dict[str, Callable[[Any, bytes, Tokenizer], tuple[Encoder, bool]]] = {
    "hf": _hf,
    "tiktoken": _tiktoken,
    "sentencepiece": _sentencepiece,
    "tokreg": _tokreg,
}
#: the module each format is checked with
_LIBRARIES = {"hf": "tokenizers", "tiktoken": "tiktoken", "sentencepiece": "sentencepiece", "tokreg": "tokreg"}
