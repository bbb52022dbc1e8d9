"""One special-token rule for every algorithm, tiktoken's: an allowed special token becomes its id
(the text around it encoded as texts of their own), a disallowed one in the text is an error
naming it (the default), and `disallowed_special=()` encodes it as ordinary text. Checked on a
version of each of the five encoders, through `Tokenizer.encode` and `encode_batch`."""

from __future__ import annotations

import re
import sysconfig
from pathlib import Path

import pytest

from tokreg import BpeOptions, InputError, Registry, Tokenizer, UnigramOptions, WordPieceOptions

from .spm_models import import_small_bpe


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """About 80 KB of English prose and code that every machine has: Python's own sources."""
    stdlib = Path(sysconfig.get_path("stdlib"))
    text = "".join((stdlib / f).read_text(encoding="utf-8") for f in ("textwrap.py", "difflib.py", "this.py"))
    path = tmp_path_factory.mktemp("corpus") / "corpus.txt"
    path.write_text(text[:80_000], encoding="utf-8")
    return path


# encoder -> (what it is called, how to make a version of it, one of its special tokens)
CASES = {
    "byte_bpe": (
        "byte-level BPE",
        lambda reg, c: reg.train("t", [c], BpeOptions(vocab_size=300, special=("<|endoftext|>",))),
        "<|endoftext|>",
    ),
    "char_bpe": (
        "character-level BPE",
        lambda reg, c: reg.train("t", [c], BpeOptions(vocab_size=150, char_level=True, special=("<|sep|>",))),
        "<|sep|>",
    ),
    "wordpiece": (
        "WordPiece",
        lambda reg, c: reg.train("t", [c], WordPieceOptions(vocab_size=300, special=("[CLS]", "[SEP]"))),
        "[SEP]",
    ),
    "unigram": (
        "Unigram",
        lambda reg, c: reg.train("t", [c], UnigramOptions(vocab_size=400, byte_fallback=True, special=("<s>", "</s>"))),
        "</s>",
    ),
    "sp_bpe": ("SentencePiece BPE", import_small_bpe, "</s>"),
}


@pytest.fixture(scope="module", params=sorted(CASES))
def version(
    request: pytest.FixtureRequest, corpus: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Tokenizer, str]:
    title, make, special = CASES[request.param]
    with Registry(tmp_path_factory.mktemp("db") / "registry.db") as reg:
        make(reg, corpus)
        tok = reg.load("t")
    assert tok.title == title  # the version really goes through this encoder
    return tok, special


def test_an_allowed_special_becomes_its_id(version: tuple[Tokenizer, str]) -> None:
    tok, special = version
    sid = tok.special_tokens[special]
    ids = tok.encode(f"hello{special} world", allowed_special={special})
    assert ids == tok.encode_ordinary("hello") + [sid] + tok.encode_ordinary(" world")
    assert tok.encode(f"hello{special} world", allowed_special="all") == ids
    assert tok.encode_batch([f"hello{special} world", "plain"], allowed_special={special}) == [
        ids,
        tok.encode_ordinary("plain"),
    ]


def test_a_disallowed_special_is_an_error_naming_it(version: tuple[Tokenizer, str]) -> None:
    tok, special = version
    with pytest.raises(InputError, match=f"contains the special token {re.escape(repr(special))}.*allowed_special"):
        tok.encode(f"hello{special} world")
    with pytest.raises(InputError, match=f"text 1 of the batch contains the special token {re.escape(repr(special))}"):
        tok.encode_batch(["fine", f"a{special}b"])
    other = next((s for s in tok.special_tokens if s != special), None)
    if other is not None:  # allowing one special does not allow the others
        with pytest.raises(InputError, match=re.escape(repr(other))):
            tok.encode(f"{special}{other}", allowed_special={special})


def test_disallowed_special_empty_encodes_it_as_text(version: tuple[Tokenizer, str]) -> None:
    tok, special = version
    text = f"hello{special} world"
    plain = tok.encode(text, disallowed_special=())
    assert plain == tok.encode_ordinary(text)
    assert tok.special_tokens[special] not in plain
    assert tok.encode_batch([text], disallowed_special=()) == [plain]


def test_no_special_in_the_text_is_no_change(version: tuple[Tokenizer, str]) -> None:
    tok, _ = version
    text = "def main():\n    return 0  # no special tokens here\n"
    assert tok.encode(text) == tok.encode_ordinary(text) == tok.encode_batch([text], threads=2)[0]


def test_arguments_that_are_not_sets_of_strings_are_refused(version: tuple[Tokenizer, str]) -> None:
    tok, special = version
    with pytest.raises(InputError, match="allowed_special must be 'all' or a collection of strings"):
        tok.encode("x", allowed_special=special)  # a bare string would be a set of characters
    with pytest.raises(InputError, match="disallowed_special must hold strings only"):
        tok.encode("x", disallowed_special={1})  # type: ignore[arg-type]
