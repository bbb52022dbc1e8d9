"""Importing other tools' files as `TokenizerData`, and writing a version in another tool's
format: each file format (formats/) connected to the algorithm that reads or writes it.

    >>> data = read_hf("tokenizer.json")          # BPE, WordPiece or Unigram, by its model
    >>> raw = export(data, "gpt@2", "tiktoken")   # byte-level BPE only
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Sequence
from typing import Optional, Union

from .. import algorithms
from ..algorithms import template
from ..data import TokenizerData
from ..encoding import export_check, hf_objects
from ..encoding.tokenizer import Tokenizer
from ..errors import InputError, IntegrityError
from ..files import decompressed, read_input
from ..formats import hf_json, hf_settings, sentencepiece_proto, tekken, tiktoken_file, tiktoken_presets, tokreg_file

PathLike = Union[str, os.PathLike[str]]  # not a string: typing would compile it at import

#: The warning `export` gives when the library that reads a format is not installed.
ExportCheckSkipped = export_check.ExportCheckSkipped

#: Formats `export` writes: tokreg's own for every version, the others where the algorithm has them.
EXPORT_FORMATS = ("tokreg", "hf", "tiktoken", "sentencepiece")


def read_tiktoken(
    path: PathLike,
    *,
    pattern: Optional[str] = None,
    specials: Optional[dict[str, int]] = None,
    preset: Optional[str] = None,
    expect_sha256: Optional[str] = None,
) -> TokenizerData:
    """A `.tiktoken` rank file (plain, or gzip/xz/zstd-compressed), with its split pattern and
    special tokens, which the file does not hold: a `preset` (tiktoken_presets.PRESETS) gives
    both at their official ids, `pattern` replaces its pattern and `specials` add to or replace
    its specials. `expect_sha256` may be the file's or its decompressed content's."""
    where = os.fspath(path)
    chosen = None if preset is None else tiktoken_presets.get(preset)
    if chosen is not None:
        split = pattern or chosen.pattern
    elif pattern is not None:
        split = pattern
    else:
        names = ", ".join(tiktoken_presets.PRESETS)
        raise InputError(f"{where}: a .tiktoken file holds no split pattern; give --preset ({names}) or --pattern")
    raw = read_input(path, "give the .tiktoken file")
    plain = decompressed(raw, where)
    if expect_sha256 is not None:
        want = expect_sha256.lower().removeprefix("sha256:")
        shas = [hashlib.sha256(b).hexdigest() for b in ((raw, plain) if plain is not raw else (raw,))]
        if want not in shas:
            also = f" (decompressed: {shas[1]})" if len(shas) > 1 else ""
            raise IntegrityError(
                f"{where}: sha256 is {shas[0]}{also}, expected {want}; the file is not the one you meant "
                "(nothing was written)",
                expected=want,
                actual=shas[-1],
            )
    ranks = tiktoken_file.parse_ranks(plain, where)
    if chosen is not None:
        tiktoken_presets.check(chosen, ranks, where)
        specials = tiktoken_presets.specials(chosen, specials or {})
    return _usable(algorithms.tiktoken_codec().read(ranks, where, pattern=split, specials=specials), where)


def read_tekken(path: PathLike) -> TokenizerData:
    """A Mistral `tekken.json`: ranks, pattern and special tokens (ids as mistral-common gives)."""
    where = os.fspath(path)
    t = tekken.read(read_input(path, "give the tekken.json file"), where)
    data = algorithms.tiktoken_codec().read(t.ranks, where, pattern=t.pattern, specials=t.specials)
    data.source = "import:tekken"
    return _usable(data, where)


def read_tokreg(path: PathLike) -> TokenizerData:
    """A file written by `tokreg export --format tokreg`, its hash checked."""
    where = os.fspath(path)
    f = tokreg_file.read(path)
    _compiles(f.content, where, f.hash)  # the content read, not made again from the rows
    return f.data("import:tokreg")


def read_hf(path: PathLike) -> TokenizerData:
    """A Hugging Face `tokenizer.json` (BPE byte- or character-level, WordPiece, Unigram), or the
    one in a directory, with the transformers settings of the tokenizer_config.json and
    special_tokens_map.json beside it (formats/hf_settings.py); what is not carried is named in
    one `hf_settings.NotCarried` warning."""
    where = hf_settings.tokenizer_json(os.fspath(path))
    doc, model, kind = hf_json.read(where)
    codec = algorithms.hf_reader(kind, doc)
    if codec is not None:
        data = codec.read(doc, model, where)
        template.read_hf(doc, data, where)
        imported = hf_settings.read(where, doc, template.special_ids(data))
        hf_settings.attach(data.config, imported.settings)
        _usable(data, where)
        hf_settings.warn_dropped(where, imported)
        return data
    if kind == "WordLevel":
        raise InputError(f"{where}: hf WordLevel models are not supported (BPE, WordPiece and Unigram are)")
    raise InputError(f"{where}: unknown hf model type {kind[:40]!r}")


def read_sentencepiece(path: PathLike, *, bos: bool = False, eos: bool = False) -> TokenizerData:
    """A SentencePiece `.model` (Unigram or BPE). A model file does not say whether its users
    add BOS/EOS (sentencepiece's `add_bos`/`add_eos` are arguments of each encode call):
    `bos`/`eos` make the model's own BOS/EOS pieces the version's template."""
    where = os.fspath(path)
    model = sentencepiece_proto.read(path)
    codec = algorithms.sentencepiece_reader(model.model_type)
    if codec is not None:
        data = codec.read(model, where)
        if bos or eos:
            named = [
                model.pieces[i].text.decode("utf-8", "replace") if 0 <= i < len(model.pieces) else None
                for i in (model.bos_id, model.eos_id)
            ]
            for flag, piece, what in ((bos, named[0], "BOS"), (eos, named[1], "EOS")):
                if flag and piece is None:
                    raise InputError(f"{where}: the model has no {what} piece (its {what.lower()}_id is off)")
            t = template.parse(bos=named[0] if bos else None, eos=named[1] if eos else None)
            template.attach(data.config, t)
        return _usable(data, where)
    kind = sentencepiece_proto.MODEL_TYPES.get(model.model_type, f"type {model.model_type}")
    raise InputError(
        f"{where}: SentencePiece {kind} models are not supported (only UNIGRAM and BPE); nothing was written"
    )


def read_wordpiece_vocab(
    path: PathLike, options: algorithms.WordPieceOptions, specials: Sequence[str] = ()
) -> TokenizerData:
    """A bare BERT `vocab.txt`, with the normalizer settings in `options`."""
    raw = read_input(path, "give the vocab.txt file")
    where = os.fspath(path)
    return _usable(algorithms.vocab_txt_codec().read(raw, where, options, specials), where)


def _usable(data: TokenizerData, where: str) -> TokenizerData:
    """`data`, once an encoder builds from it: an import that cannot encode is refused here,
    naming the file (the compiled encoder is kept by hash, so recording it compiles nothing)."""
    _compiles(data.content(), where)
    return data


def _compiles(raw: bytes, where: str, hash_label: Optional[str] = None) -> None:
    try:
        Tokenizer(raw, ref=where, _hashed=hash_label)
    except InputError as e:
        raise InputError(f"{where}: not a usable tokenizer ({e}); nothing was imported") from None


def export(data: TokenizerData, ref: str, fmt: str, *, samples: Sequence[str] = ()) -> bytes:
    """The file bytes of a version in format `fmt`, once the library that reads the format has
    given tokreg's ids on `samples` (the version's stored sample texts) and the check texts with
    every special token in them (encoding/export_check.py); a file that would differ is refused
    in one line, and one that cannot be checked (the library is not installed) is said so once
    (an `ExportCheckSkipped` warning)."""
    if fmt not in EXPORT_FORMATS:
        raise InputError(f"unknown export format {fmt!r}; choose one of {', '.join(EXPORT_FORMATS)}")
    if fmt == "tokreg":
        raw = tokreg_file.dumps(data, ref)
    else:
        algo = algorithms.of(data.algorithm, data.config)
        # a codec that only reads refuses to write, saying why the format cannot hold the version
        writer = algo.writers.get(fmt) or algo.codecs.get(fmt)
        if writer is None:
            can = ", ".join(("tokreg", *algo.export_formats))
            raise InputError(f"{ref} is {algo.model.title}, which has no {fmt} form; export it as {can}")
        raw = writer.write(data, ref)
    export_check.check(fmt, raw, Tokenizer.from_data(data, ref), samples)
    if fmt == "hf":  # the padding and truncation an imported file had, once its ids are checked
        raw = hf_settings.into_json(raw, hf_settings.of_config(data.config))
    return raw


def export_hf_directory(data: TokenizerData, ref: str, *, samples: Sequence[str] = ()) -> dict[str, bytes]:
    """The files of `export --format hf` to a directory, as transformers' `save_pretrained` lays
    them out: tokenizer.json (checked as `export` checks it) and tokenizer_config.json with the
    version's roles and settings (hf_objects.tokenizer_config), once `AutoTokenizer` over the two
    has the same roles and gives tokreg's ids (when transformers is installed)."""
    tok = Tokenizer.from_data(data, ref)
    files = {
        "tokenizer.json": export(data, ref, "hf", samples=samples),
        hf_settings.CONFIG: hf_json.dumps(hf_objects.tokenizer_config(tok)),
    }
    with tempfile.TemporaryDirectory(prefix="tokreg-check-") as folder:
        for name, raw in files.items():
            with open(os.path.join(folder, name), "wb") as fh:
                fh.write(raw)
        hf_objects.check_pretrained(folder, tok)
    return files
