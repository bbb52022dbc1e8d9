"""`to_transformers()` against `AutoTokenizer` over the original files: the files are made by
transformers itself (`BertTokenizer`, `RobertaTokenizer`, `GPT2Tokenizer` built from a vocabulary
trained here, then `save_pretrained`), imported with `tokreg import hf DIR`, and both objects
encode held-out lines of the shared corpora with padding, truncation and offsets, alone and in
pairs; the roles, `model_max_length`, sides and `model_input_names` must be the same, and so must
decode and `convert_ids_to_tokens`. Also: a trained WordPiece with BERT's specials and template
against `BertTokenizer` over the same vocabulary, the tokenizer.json's own padding/truncation,
the legacy special_tokens_map.json layout, what an import names as not carried, and
`export --format hf` to a directory that AutoTokenizer loads."""

from __future__ import annotations

import functools
import json
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tokreg import Registry, WordPieceOptions
from tokreg.formats.hf_settings import NotCarried

from .conftest import CORPORA, KJV_STEP, Cli, data_file, one_error_line

transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

SPECIALS_BERT = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
SPECIALS_ROBERTA = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
#: Lines each layout's vocabulary is trained on (the first of each corpus); the rest are held out.
TRAIN_LINES = 2000
FAST_LINES = 96
BATCH = 16


def _lines(name: str) -> list[str]:
    return [x for x in data_file(name).read_text(encoding="utf-8").splitlines() if x.strip()]


def _training_lines() -> list[str]:
    return [x for name in ("kjv.txt", "dr.en.txt", "dr.zh-cn.txt") for x in _lines(name)[:TRAIN_LINES]]


@functools.cache
def _wordpiece_vocab() -> dict[str, int]:
    m = tokenizers.Tokenizer(tokenizers.models.WordPiece(unk_token="[UNK]"))
    m.normalizer = tokenizers.normalizers.BertNormalizer(lowercase=False)
    m.pre_tokenizer = tokenizers.pre_tokenizers.BertPreTokenizer()
    m.train_from_iterator(
        _training_lines(), tokenizers.trainers.WordPieceTrainer(vocab_size=3000, special_tokens=SPECIALS_BERT)
    )
    vocab: dict[str, int] = m.get_vocab()
    return dict(vocab)


@functools.cache
def _bpe_vocab(specials: tuple[str, ...]) -> tuple[dict[str, int], list[tuple[str, str]]]:
    m = tokenizers.Tokenizer(tokenizers.models.BPE())
    m.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=2000, special_tokens=list(specials), initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet()
    )
    m.train_from_iterator(_training_lines(), trainer)
    merges = json.loads(m.to_str())["model"]["merges"]
    return m.get_vocab(), [tuple(x) if isinstance(x, list) else tuple(x.split(" ")) for x in merges]


#: layout -> (a function making the transformers tokenizer, max_length for the comparison)
def _bert(**kw: Any) -> Callable[[], Any]:
    return lambda: transformers.BertTokenizer(vocab=_wordpiece_vocab(), **kw)


def _bytelevel(cls: str, specials: list[str], **kw: Any) -> Callable[[], Any]:
    def make() -> Any:
        vocab, merges = _bpe_vocab(tuple(specials))
        return getattr(transformers, cls)(vocab=vocab, merges=merges, **kw)

    return make


LAYOUTS: dict[str, tuple[Callable[[], Any], int]] = {
    "bert-uncased": (_bert(model_max_length=48), 48),
    "bert-cased-left": (
        _bert(do_lower_case=False, model_max_length=40, padding_side="left", truncation_side="left"),
        40,
    ),
    "roberta-left": (_bytelevel("RobertaTokenizer", SPECIALS_ROBERTA, model_max_length=64, padding_side="left"), 64),
    "gpt2": (_bytelevel("GPT2Tokenizer", ["<|endoftext|>"], model_max_length=80), 80),
}


@pytest.fixture(scope="module")
def originals(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """Each layout saved by transformers' own save_pretrained, once for the module."""
    out = {}
    for name, (make, _) in LAYOUTS.items():
        folder = tmp_path_factory.mktemp(name)
        make().save_pretrained(folder)
        out[name] = folder
    yield out


def _import(registry: Registry, name: str, folder: Path) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotCarried)
        registry.import_hf(name, folder)
    return registry.load(name)


#: What a transformers tokenizer must have as the original has it.
SETTINGS = ("special_tokens_map", "model_max_length", "padding_side", "truncation_side", "model_input_names")


def _settings(t: Any) -> dict[str, Any]:
    return {name: getattr(t, name) for name in SETTINGS}


def _compare(mine: Any, ref: Any, lines: list[str], max_length: int) -> tuple[int, int]:
    """(lines compared, lines differing) between two transformers tokenizers: batches with
    padding (when the tokenizer has a pad token), truncation and offsets, alone and paired with
    the next lines; decode with and without special tokens; convert_ids_to_tokens."""
    assert _settings(mine) == _settings(ref)
    differing = 0
    pad = ref.pad_token is not None
    for at in range(0, len(lines), BATCH):
        batch, pairs = (
            lines[at : at + BATCH],
            (lines[at + 1 : at + BATCH + 1] + lines[:1])[: len(lines[at : at + BATCH])],
        )
        kw = dict(padding=pad, truncation=True, max_length=max_length, return_offsets_mapping=True)
        for args in ((batch,), (batch, pairs)):
            a, b = mine(*args, **kw), ref(*args, **kw)
            assert sorted(a) == sorted(b)
            for k in range(len(batch)):
                differing += any(a[key][k] != b[key][k] for key in b)
        ids = ref(batch, truncation=True, max_length=max_length)["input_ids"]
        for skip in (True, False):
            got, want = (
                mine.batch_decode(ids, skip_special_tokens=skip),
                ref.batch_decode(ids, skip_special_tokens=skip),
            )
            differing += sum(x != y for x, y in zip(got, want))
        differing += sum(mine.convert_ids_to_tokens(i) != ref.convert_ids_to_tokens(i) for i in ids)
    return len(lines), differing


def _held_out(name: str, count: int | None) -> list[str]:
    """The first `count` held-out lines, or (None) every other one (of kjv every 2 * KJV_STEP-th):
    the sweep of `just test`, within CI's 20 minutes; the conformance table's `live` column
    (tools/conformance_table.py) compares every line."""
    lines = _lines(name)[TRAIN_LINES:]
    if count is None:
        return lines[:: 2 * KJV_STEP] if name == "kjv.txt" else lines[::2]
    return lines[:count]


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_to_transformers_is_autotokenizer_over_the_files(
    registry: Registry, originals: dict[str, Path], layout: str
) -> None:
    tok = _import(registry, layout, originals[layout])
    ref = transformers.AutoTokenizer.from_pretrained(originals[layout])
    lines = _held_out("dr.en.txt", FAST_LINES // 2) + _held_out("dr.zh-cn.txt", FAST_LINES // 2)
    compared, differing = _compare(tok.to_transformers(), ref, lines, LAYOUTS[layout][1])
    assert (compared, differing) == (len(lines), 0)


@pytest.mark.slow
@pytest.mark.parametrize("corpus", CORPORA)
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_to_transformers_on_every_other_line(
    registry: Registry, originals: dict[str, Path], layout: str, corpus: str
) -> None:
    tok = _import(registry, layout, originals[layout])
    ref = transformers.AutoTokenizer.from_pretrained(originals[layout])
    lines = _held_out(corpus, None)
    assert _compare(tok.to_transformers(), ref, lines, LAYOUTS[layout][1]) == (len(lines), 0)


def test_the_type_ids_of_the_template(registry: Registry, originals: dict[str, Path]) -> None:
    """BERT's pair types follow the rule (nothing stored); RoBERTa's are all 0 (stored);
    encode_pair gives what the file's post-processor gives."""
    for layout, stored in (("bert-uncased", False), ("roberta-left", True)):
        tok = _import(registry, layout, originals[layout])
        assert ("type_ids" in tok.config["template"]) is stored
        hf = tokenizers.Tokenizer.from_file(str(originals[layout] / "tokenizer.json"))
        a, b = "In the beginning God created", "the heaven and the earth"
        want = hf.encode(a, b)
        assert tok.encode_pair(a, b) == (want.ids, want.type_ids)
        assert tok.encode_pair(a, b).ids == tok.encode(a, pair=b, add_special_tokens=True)


def test_a_trained_wordpiece_with_berts_specials_is_a_bert_tokenizer(registry: Registry, tmp_path: Path) -> None:
    """Roles by the rule (cls/sep from the template, [PAD], [MASK], the algorithm's [UNK]),
    token_type_ids from the template: the same as BertTokenizer over the same vocabulary."""
    corpus = tmp_path / "c.txt"
    corpus.write_text("\n".join(_lines("dr.en.txt")[:400]), encoding="utf-8")
    opts = WordPieceOptions(
        vocab_size=600,
        lowercase=True,
        special=tuple(SPECIALS_BERT),
        template="[CLS] $A [SEP] | [CLS] $A [SEP] $B [SEP]",
    )
    registry.train("wp", [corpus], opts)
    tok = registry.load("wp")
    hf = tok.to_hf()
    vocab = {hf.id_to_token(i): i for i in range(tok.vocab_size)}
    ref = transformers.BertTokenizer(vocab=vocab, model_max_length=32)
    mine = tok.to_transformers(model_max_length=32)
    lines = _held_out("dr.en.txt", FAST_LINES)
    assert _compare(mine, ref, lines, 32) == (len(lines), 0)


def test_the_files_padding_and_truncation_are_carried(registry: Registry, tmp_path: Path) -> None:
    m = tokenizers.Tokenizer(tokenizers.models.WordPiece(_wordpiece_vocab(), unk_token="[UNK]"))
    m.pre_tokenizer = tokenizers.pre_tokenizers.BertPreTokenizer()
    m.normalizer = tokenizers.normalizers.BertNormalizer(lowercase=False)
    m.add_special_tokens(SPECIALS_BERT)
    m.post_processor = tokenizers.processors.BertProcessing(("[SEP]", 3), ("[CLS]", 2))
    m.decoder = tokenizers.decoders.WordPiece()
    m.enable_padding(direction="left", pad_id=0, pad_token="[PAD]", pad_to_multiple_of=8)
    m.enable_truncation(24, direction="left")
    m.save(str(tmp_path / "tokenizer.json"))
    tok = _import(registry, "padded", tmp_path / "tokenizer.json")
    assert set(tok.config["hf_settings"]) == {"padding", "truncation"}
    lines = _held_out("dr.en.txt", 24)
    got, want = tok.to_hf().encode_batch(lines), m.encode_batch(lines)
    assert [(e.ids, e.attention_mask, e.type_ids) for e in got] == [(e.ids, e.attention_mask, e.type_ids) for e in want]
    # a tokenizer.json alone states no roles: AutoTokenizer has only the padding's pad token,
    # to_transformers() the rule's roles (README); given those, the objects are the same
    mine = tok.to_transformers()
    assert transformers.AutoTokenizer.from_pretrained(tmp_path).special_tokens_map == {"pad_token": "[PAD]"}
    assert mine.special_tokens_map == {r: r.split("_")[0].upper().join("[]") for r in mine.special_tokens_map}
    ref = transformers.AutoTokenizer.from_pretrained(
        tmp_path, **mine.special_tokens_map, model_input_names=mine.model_input_names
    )
    assert _compare(mine, ref, lines, 24) == (len(lines), 0)


def test_the_legacy_special_tokens_map_layout(registry: Registry, originals: dict[str, Path], tmp_path: Path) -> None:
    """transformers 4's layout: the roles in special_tokens_map.json, a config without
    added_tokens_decoder."""
    src = originals["roberta-left"]
    (tmp_path / "tokenizer.json").write_bytes((src / "tokenizer.json").read_bytes())
    config = json.loads((src / "tokenizer_config.json").read_text())
    roles = {k: config.pop(k) for k in list(config) if k.endswith("_token")}
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config))
    (tmp_path / "special_tokens_map.json").write_text(json.dumps(roles))
    tok = _import(registry, "legacy", tmp_path)
    ref = transformers.AutoTokenizer.from_pretrained(tmp_path)
    lines = _held_out("dr.zh-cn.txt", 32)
    assert _compare(tok.to_transformers(), ref, lines, 64) == (len(lines), 0)


def test_import_names_what_it_does_not_carry(run: Cli, originals: dict[str, Path]) -> None:
    res = run("import", "hf", originals["roberta-left"], "--name", "r")
    warned = [x for x in res.output.splitlines() if x.startswith("tokreg: warning:")]
    assert len(warned) == 1
    for key in ("add_prefix_space", "errors", "trim_offsets"):
        assert key in warned[0]


def test_a_tokenizer_json_alone_keeps_its_hash(registry: Registry, originals: dict[str, Path], tmp_path: Path) -> None:
    """No settings stated, nothing stored: the hash is the one the file had before settings existed,
    the roles come from the rule."""
    (tmp_path / "tokenizer.json").write_bytes((originals["bert-uncased"] / "tokenizer.json").read_bytes())
    tok = _import(registry, "alone", tmp_path / "tokenizer.json")
    with_config = _import(registry, "with", originals["bert-uncased"])
    assert "hf_settings" not in tok.config and "hf_settings" in with_config.config
    assert tok.to_transformers().special_tokens_map == with_config.to_transformers().special_tokens_map


def test_export_to_a_directory_loads_in_autotokenizer(
    registry: Registry, originals: dict[str, Path], tmp_path: Path, run: Cli
) -> None:
    for layout in ("bert-cased-left", "roberta-left"):
        tok = _import(registry, layout, originals[layout])
        out = tmp_path / layout
        out.mkdir()
        registry.export(layout, "hf", out)
        assert sorted(p.name for p in out.iterdir()) == ["tokenizer.json", "tokenizer_config.json"]
        lines = _held_out("dr.en.txt", 32)
        ref = transformers.AutoTokenizer.from_pretrained(originals[layout])
        assert _compare(transformers.AutoTokenizer.from_pretrained(out), ref, lines, LAYOUTS[layout][1]) == (32, 0)
        # the export names the generic class and states its defaults: stable from the first round trip
        again = registry.import_hf(f"{layout}-again", out)
        out2 = tmp_path / f"{layout}-2"
        out2.mkdir()
        registry.export(f"{layout}-again", "hf", out2)
        assert registry.import_hf(f"{layout}-third", out2).content_hash == again.content_hash
        assert registry.load(f"{layout}-again").encode_batch(lines) == tok.encode_batch(lines)
    res = run("export", "roberta-left", "--format", "hf", "-o", tmp_path / "alone.json")
    assert "tokreg: warning:" in res.output and "-o DIR" in res.output


def test_a_directory_without_tokenizer_json_is_refused(run: Cli, tmp_path: Path) -> None:
    (tmp_path / "vocab.txt").write_text("[UNK]\n")
    one_error_line(run("import", "hf", tmp_path, "--name", "x", ok=False), "without a tokenizer.json")
