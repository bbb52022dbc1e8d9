"""The common Hub layouts of BPE `tokenizer.json` import with HF's ids (issue 23, point 2):
byte-level files with normalizer sequences and chained pre-tokenizers as Qwen2, Llama 3 and
DeepSeek-V3 write them, and CLIP's `</w>` layout; each trained here with the `tokenizers`
library's own trainer on a slice of the shared corpora. For each: ids, decode and offsets
against `tokenizers` (every line in the slow lane, a slice in the fast one), hypothesis text,
then `export --format hf` and `--format tokreg` round trips.

Run with `-s` to see the figures per layout (lines compared, lines differing)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

from . import hf_layouts as L
from .conftest import CORPORA, slow
from .test_hf_layouts import _TEXT, HARD

tk = L.tokenizers
N, P, D, Regex = tk.normalizers, tk.pre_tokenizers, tk.decoders, tk.Regex

QWEN2 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)
LLAMA3 = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
    r"|\s+(?!\S)|\s+"
)
DEEPSEEK = [
    r"\p{N}{1,3}",
    r"[一-龥\u3040-ゟ゠-ヿ]+",
    r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+",
]
CLIP = r"""'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+"""
SPECIALS = ["<|endoftext|>", "<|im_start|>"]


def byte_level(normalizer: Any, splits: list[Any], *, ignore_merges: bool = False) -> Callable[[], Any]:
    def build() -> Any:
        t = tk.Tokenizer(tk.models.BPE(ignore_merges=ignore_merges))
        if normalizer is not None:
            t.normalizer = normalizer
        t.pre_tokenizer = P.Sequence([*splits, P.ByteLevel(add_prefix_space=False, use_regex=False)])
        t.decoder = D.ByteLevel()
        trainer = tk.trainers.BpeTrainer(
            vocab_size=1500, special_tokens=SPECIALS, initial_alphabet=P.ByteLevel.alphabet(), show_progress=False
        )
        return t, trainer

    return build


def clip() -> Any:
    t = tk.Tokenizer(tk.models.BPE(unk_token="<|endoftext|>", end_of_word_suffix="</w>", continuing_subword_prefix=""))
    t.normalizer = N.Sequence([N.NFC(), N.Replace(Regex(r"\s+"), " "), N.Lowercase()])
    t.pre_tokenizer = P.Sequence(
        [P.Split(Regex(CLIP), behavior="removed", invert=True), P.ByteLevel(add_prefix_space=False)]
    )
    t.decoder = D.BPEDecoder(suffix="</w>")
    trainer = tk.trainers.BpeTrainer(
        vocab_size=1500,
        special_tokens=["<|startoftext|>", "<|endoftext|>"],
        end_of_word_suffix="</w>",
        initial_alphabet=P.ByteLevel.alphabet(),
        show_progress=False,
    )
    return t, trainer


LAYOUTS: dict[str, Callable[[], Any]] = {
    "qwen2": byte_level(N.NFC(), [P.Split(Regex(QWEN2), behavior="isolated")]),
    "llama3": byte_level(None, [P.Split(Regex(LLAMA3), behavior="isolated")], ignore_merges=True),
    "deepseek-v3": byte_level(N.Sequence([]), [P.Split(Regex(r), behavior="isolated") for r in DEEPSEEK]),
    "normalizer-sequence": byte_level(
        N.Sequence([N.NFKC(), N.Lowercase(), N.Strip(), N.Replace(Regex(" {2,}"), " "), N.Prepend(" ")]),
        [P.Split(Regex(QWEN2), behavior="isolated")],
    ),
    "digits-punctuation": byte_level(
        N.NFKD(),
        [P.Digits(individual_digits=True), P.Punctuation(behavior="isolated"), P.WhitespaceSplit()],
    ),
    "split-behaviors": byte_level(
        None,
        [
            P.Split(Regex(r"\s+"), behavior="merged_with_next"),
            P.Split(Regex(r"[.,;:]"), behavior="merged_with_previous"),
            P.Split(Regex(r"\d+"), behavior="contiguous"),
            P.Split(" ", behavior="removed"),
        ],
    ),
    "clip": clip,
}


#: The layouts the fast lane compares; the others run in `just test` only.
FAST = {"qwen2", "deepseek-v3", "clip"}
BY_LANE = [name if name in FAST else slow(name) for name in LAYOUTS]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> L.Built:
    return L.trained(tmp_path_factory.mktemp("bpe-layouts"), LAYOUTS)


#: An NFKC expansion (ﬁ -> fi) followed by marks: HF gives each added character its source's span.
NFKC_EXPANSION = "\ufb01\u05b4\u05b9\u0665"


def _lines() -> list[str]:
    return [line for c in CORPORA for line in L.corpus_lines(c, 150)] + HARD


#: Layouts that tokreg's own byte-level BPE takes (a Split + ByteLevel, no normalizer): they
#: keep that path, and its documented offsets rule for a character split between tokens (the
#: token holding its first byte spans it, the others are empty; HF gives each the character).
OWN_PATH = {"llama3"}


@pytest.mark.parametrize("layout", BY_LANE)
def test_slice_and_hard_text_match_tokenizers(layout: str, built: L.Built) -> None:
    hf = built.hf(layout)
    tok = built.tok(layout)
    assert ("hf_pipeline" in tok.config) is (layout not in OWN_PATH)
    L.check(L.compare(tok, hf, _lines(), offsets=layout not in OWN_PATH), f"{layout} (slice + hard text)")


def test_nfkc_expansion_offsets_follow_hf(built: L.Built) -> None:
    """NFKC's 'fi' from 'ﬁ', then Hebrew points: HF gives both f and i the span of 'ﬁ', the
    points theirs (each added character takes its source's span)."""
    L.check(L.compare(built.tok("normalizer-sequence"), built.hf("normalizer-sequence"), [NFKC_EXPANSION]), "NFKC")


@pytest.mark.slow
@pytest.mark.parametrize("corpus", CORPORA)
@pytest.mark.parametrize("layout", LAYOUTS)
def test_every_line_matches_tokenizers(layout: str, corpus: str, built: L.Built) -> None:
    hf = built.hf(layout)
    lines = L.corpus_lines(corpus)
    L.check(L.compare(built.tok(layout), hf, lines, offsets=layout not in OWN_PATH), f"{layout} on {corpus}")


@pytest.mark.parametrize("layout", ["deepseek-v3", slow("qwen2"), slow("clip")])
def test_hypothesis_text(layout: str, built: L.Built) -> None:
    hf = built.hf(layout)
    tok = built.tok(layout)

    L.check_hypothesis(tok, hf, _TEXT)


@pytest.mark.parametrize("layout", BY_LANE)
def test_exports_back_with_the_same_ids(layout: str, built: L.Built, tmp_path: Path) -> None:
    L.check_export(built, layout, tmp_path, _lines())
