"""Offsets through HF's Unicode normalizers (issue 23, point 5): with an `NFC`, `NFKC`, `NFD` or
`NFKD` normalizer in front of a byte-level BPE, tokreg's `Encoding.offsets` equal HF's on text
where composition and expansion meet: compatibility characters that expand (`ﬁ`, `㎏`, `½`),
precomposed letters followed by more marks, marks out of canonical order, Hangul syllables and
conjoining jamo, singletons (`Å` U+212B), composition exclusions, mixed scripts. HF aligns each
normalized character with the original one it came from (`unicode_normalization_alignments`);
a small vocabulary keeps tokens short, so that each character's span shows.

A few generated texts per form in the fast lane, many more in `just test`."""

from __future__ import annotations

from typing import Any, Callable

import pytest

from . import hf_layouts as L
from .conftest import slow

st = pytest.importorskip("hypothesis.strategies")
tk = L.tokenizers
N, P, D = tk.normalizers, tk.pre_tokenizers, tk.decoders


def layout(normalizer: Any) -> Callable[[], Any]:
    def build() -> Any:
        t = tk.Tokenizer(tk.models.BPE())
        t.normalizer = normalizer
        t.pre_tokenizer = P.Sequence([P.WhitespaceSplit(), P.ByteLevel(add_prefix_space=False, use_regex=False)])
        t.decoder = D.ByteLevel()
        trainer = tk.trainers.BpeTrainer(vocab_size=400, initial_alphabet=P.ByteLevel.alphabet(), show_progress=False)
        return t, trainer

    return build


FORMS = ["NFC", "NFKC", "NFD", "NFKD"]
LAYOUTS = {form: layout(getattr(N, form)()) for form in FORMS}

#: Characters that compose, expand, reorder or block one another, by kind.
PIECES = {
    "compatibility": "\ufb01\ufb03\u3392\u338f\u00bd\u2075\u2460\uff21\uff41\uff11"
    "\u3000\u2126\u212b\u1e9b\u01c4\u0132\u2474\u33c7\u00a0\u2002\ufe64",
    "precomposed": "\u00e9\u00c5\u1e17\u01d6\u1ec7\u1e69\u0390\u1f88\u04d2\u00f1\u1e0b\u0958\u2adc\U0001d15e",
    "marks": "\u0300\u0301\u0302\u0303\u0308\u030a\u031b\u0323\u0327\u0328\u0345\u0335"
    "\u05b4\u05b9\u05bc\u064b\u0650\u0651\u093c\u0bcd\u302a\u3099\u309a\u20d7",
    "hangul": "\ud55c\uad6d\uac00\u1100\u1161\u11a8\u1112\u1175\u11c2\u3131\u314f\uac01",
    "bases": "aeiouAEOUnsdyq\u0391\u03c9\u0435\u0438\u0915\u0628\u05d0\u304b\u30cf\u6f22 ",
    "unchanged": "\u32ff\ua7f2\U00011935\U00011930\U0001f16c",
}

#: Runs of each kind, one after another, and any character among them (those newer than HF's
#: Unicode tables too).
TEXT = st.lists(
    st.sampled_from(list(PIECES.values())).flatmap(lambda s: st.text(st.sampled_from(s), min_size=1, max_size=4))
    | st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=3),
    max_size=12,
).map("".join)

#: Cases worked out by hand, each one kind of meeting of composition and expansion.
CASES = [
    "\ufb01\u05b4\u05b9\u0665",  # an expansion, then marks
    "a\u031b\u0301 q\u0301\u0323 e\u0323\u0302",  # a mark absorbed past a blocked one; reordering
    "\u212b\u0301 \u1e9b\u0323 \u0958\u093c",  # a singleton, a compatibility base, an exclusion
    "\u1100\u1161\u11a8 \ud55c\u11a8 \u1112\u1175",  # conjoining jamo into syllables
    "\u3392\u0301 \u00bd\u0308 \u2075x",  # expansions ending in a base that then composes
    "\U00011935\U00011930 \u32ff",  # newer than HF's tables: left as they are
]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> L.Built:
    return L.trained(tmp_path_factory.mktemp("unicode-forms"), LAYOUTS)


@pytest.mark.parametrize("form", FORMS)
def test_hand_made_cases_follow_hf(form: str, built: L.Built) -> None:
    L.check(L.compare(built.tok(form), built.hf(form), CASES), f"{form} (hand-made cases)")


@pytest.mark.parametrize("form, examples", [(f, 8) for f in FORMS] + [slow(f, 400) for f in FORMS])
def test_generated_text_follows_hf(form: str, examples: int, built: L.Built) -> None:
    L.check_hypothesis(built.tok(form), built.hf(form), TEXT, examples)
