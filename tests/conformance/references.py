"""The reference libraries as plain functions, and one figure per comparison.

A `Reference` is one file loaded in the library that reads it (tokenizers, tiktoken,
sentencepiece, or tokreg's own `Tokenizer.from_file`): `encode(texts)` gives each text's ids
and, where the library has them, its spans; `decode(ids)` its text. `Cell` is what one column
of the conformance table holds: lines compared and lines differing (with the first differing
line), or why there is no figure ("refused: …" when tokreg refused in one line, "n/a: …"
when the comparison has no meaning for the layout, "error: …" when something raised that
should not have).

The rules of each comparison, so that a figure means one thing:

- ids: `Tokenizer.encode_ordinary_batch` against the reference's ids without its post-processor
  (`add_special_tokens=False`, `encode_ordinary`).
- decode: both sides decode the reference's ids (so a difference is a decode difference, not
  an ids one); HF with `skip_special_tokens=False`.
- offsets: on the lines whose ids agree, tokreg's character spans against HF's
  `Encoding.offsets` and sentencepiece's `offset_mapping`; tokreg's byte spans against
  tiktoken's token lengths laid end to end. The spans are compared as the references give them,
  with no rule of tokreg's applied: a character whose bytes are split between tokens spans the
  whole character in every one of them in HF, and belongs to the last of its byte pieces in
  sentencepiece, and tokreg follows each.
- export: the version exported with `Registry.export`, loaded in the target library, its ids
  against tokreg's.
- live: `to_transformers()` against `AutoTokenizer` over the original files with
  `padding=True, truncation=True, return_offsets_mapping=True` (input_ids, attention_mask,
  token_type_ids and offset_mapping per line); for a layout with no transformers original, its
  ids (those under the attention mask) against the reference's.
"""

from __future__ import annotations

import base64
import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from tokreg import InputError, Tokenizer

Span = tuple[int, int]
#: one text's ids and, when the library gives them, its spans
Encoded = tuple[list[int], Optional[list[Span]]]


@dataclass(frozen=True)
class Reference:
    library: str
    encode: Callable[[list[str]], list[Encoded]]
    decode: Callable[[list[int]], str]
    #: what the spans count: "chars" (HF's offsets), "bytes" (UTF-8 offsets), None (no spans)
    unit: Optional[str]


def hf_object(hf: Any) -> Reference:
    """A `tokenizers.Tokenizer` as a reference."""

    def encode(texts: list[str]) -> list[Encoded]:
        return [(e.ids, [tuple(o) for o in e.offsets]) for e in hf.encode_batch(texts, add_special_tokens=False)]

    return Reference("tokenizers", encode, lambda ids: hf.decode(ids, skip_special_tokens=False), "chars")


def hf_file(path: Path) -> Reference:
    import tokenizers

    return hf_object(tokenizers.Tokenizer.from_file(str(path)))


def read_ranks(path: Path) -> dict[bytes, int]:
    """A `.tiktoken` rank file, parsed here (not by tokreg)."""
    ranks = {}
    for line in path.read_bytes().splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def tiktoken_encoding(enc: Any) -> Reference:
    """A `tiktoken.Encoding` as a reference: byte spans are its tokens' bytes laid end to end."""
    lengths: dict[int, int] = {}

    def length(i: int) -> int:
        if i not in lengths:
            lengths[i] = len(enc.decode_single_token_bytes(i))
        return lengths[i]

    def encode(texts: list[str]) -> list[Encoded]:
        out: list[Encoded] = []
        for ids in enc.encode_ordinary_batch(texts):
            ends = list(itertools.accumulate(length(i) for i in ids))
            out.append((ids, list(zip([0, *ends[:-1]], ends))))
        return out

    return Reference("tiktoken", encode, enc.decode, "bytes")


def tiktoken_file(path: Path, pattern: str, specials: dict[str, int]) -> Reference:
    import tiktoken

    return tiktoken_encoding(
        tiktoken.Encoding(path.name, pat_str=pattern, mergeable_ranks=read_ranks(path), special_tokens=specials)
    )


def spm_file(path: Path) -> Reference:
    """A SentencePiece `.model` in `sentencepiece`: spans are its own `offset_mapping` (characters)."""
    import sentencepiece

    sp = sentencepiece.SentencePieceProcessor(model_file=str(path))

    def encode(texts: list[str]) -> list[Encoded]:
        return [(t["ids"], list(t["offsets"])) for t in sp.encode(texts, return_type="offset_mapping")]

    return Reference("sentencepiece", encode, sp.decode, "chars")


def tokreg_file(path: Path) -> Reference:
    """A file of `export --format tokreg`, read back by `Tokenizer.from_file`."""
    tok = Tokenizer.from_file(path)

    def encode(texts: list[str]) -> list[Encoded]:
        return [(e.ids, e.offsets) for e in map(tok.encode_with_offsets, texts)]

    return Reference("tokreg", encode, tok.decode, "chars")


def of_format(fmt: str, path: Path, tok: Tokenizer) -> Reference:
    """The file `Registry.export` wrote for `tok` in format `fmt`, in the library that reads it."""
    if fmt == "hf":
        return hf_file(path)
    if fmt == "tiktoken":
        return tiktoken_file(path, tok.config["pattern"], tok.special_tokens)
    if fmt == "sentencepiece":
        return spm_file(path)
    return tokreg_file(path)


# -- one figure per comparison ------------------------------------------------------------------


@dataclass
class Cell:
    """One cell of the table."""

    compared: int = 0
    differing: int = 0
    #: the first differing line, and what differed on it
    first: Optional[str] = None
    #: "refused: …", "n/a: …" or "error: …" instead of figures
    note: Optional[str] = None
    #: several figures side by side (export: one per format)
    parts: dict[str, Cell] = field(default_factory=dict)
    #: of the differing lines, those where the reference's ids hold an unknown token (and the first)
    unknown_differing: int = 0
    first_unknown: Optional[str] = None
    first_known: Optional[str] = None

    def count(self, text: str, same: bool, detail: Callable[..., str], *args: Any) -> None:
        """One line compared; `detail(*args)` says how it differs (made for the first only)."""
        self.compared += 1
        if not same:
            self.differing += 1
            if self.first is None:
                self.first = f"{text[:80]!r}: {detail(*args)}"

    def count_unknown(self, text: str, same: bool, has_unknown: bool, detail: Callable[..., str], *args: Any) -> None:
        """`count`, keeping apart the lines with an unknown token (whose figures a pending fix
        may cover, while the others' may not)."""
        self.count(text, same, detail, *args)
        if not same and has_unknown:
            self.unknown_differing += 1
            if self.first_unknown is None:
                self.first_unknown = f"{text[:80]!r}: {detail(*args)}"
        elif not same and self.first_known is None:
            self.first_known = f"{text[:80]!r}: {detail(*args)}"

    def without_unknowns(self) -> Cell:
        """The cell of the lines with no unknown token."""
        if not self.unknown_differing:
            return self
        return Cell(self.compared, self.differing - self.unknown_differing, self.first_known, self.note)

    def unknowns(self) -> Cell:
        """The cell of the differing lines with an unknown token."""
        return Cell(self.compared, self.unknown_differing, self.first_unknown, self.note)

    def merge(self, other: Cell) -> None:
        self.compared += other.compared
        self.differing += other.differing
        self.first = self.first or other.first
        self.unknown_differing += other.unknown_differing
        self.first_unknown = self.first_unknown or other.first_unknown
        self.first_known = self.first_known or other.first_known
        self.note = self.note or other.note
        for k, v in other.parts.items():
            self.parts.setdefault(k, Cell()).merge(v)

    @property
    def ok(self) -> bool:
        """No line differs and nothing raised (a refusal or n/a is not a difference)."""
        return (
            self.differing == 0 and not (self.note or "").startswith("error") and all(p.ok for p in self.parts.values())
        )

    def figure(self) -> str:
        if self.parts:
            return "; ".join(f"{k}: {v.figure()}" for k, v in self.parts.items())
        if self.note:
            return self.note
        aside = [f"{self.unknown_differing} with an unknown token"] if self.unknown_differing else []
        return f"{self.compared} / {self.differing}" + (f" ({'; '.join(aside)})" if aside else "")

    def why(self) -> str:
        """The cell for an assertion message: figure and first differing line."""
        bits = [self.figure()] + [f"{k}: {v.first}" for k, v in self.parts.items() if v.first]
        return " | ".join(bits + ([f"first: {self.first}"] if self.first else []))


def one_line(e: BaseException) -> str:
    return str(e).splitlines()[0][:200] if str(e) else type(e).__name__


def noted(kind: str, e: BaseException) -> Cell:
    return Cell(note=f"{kind}: {one_line(e)}")


def _spans(ours: Any, unit: Optional[str]) -> list[Span]:
    return [tuple(s) for s in (ours.offsets if unit == "chars" else ours.byte_offsets)]


def compare_reference(tok: Tokenizer, ref: Reference, texts: Sequence[str]) -> dict[str, Cell]:
    """The ids, decode and offsets cells of `tok` against `ref` on `texts`."""
    texts = list(texts)
    cells = {"ids": Cell(), "decode": Cell(), "offsets": Cell()}
    try:
        theirs = ref.encode(texts)
    except Exception as e:  # the reference itself cannot take the text: no figure, say so
        return dict.fromkeys(cells, noted(f"error in {ref.library}", e))
    ours = tok.encode_ordinary_batch(texts)
    unknown = unknown_ids(tok)
    for text, mine, (ids, spans) in zip(texts, ours, theirs):
        ids = list(ids)
        has_unknown = not unknown.isdisjoint(ids)
        cells["ids"].count(text, mine == ids, _versus, "tokreg", mine, ref.library, ids)
        try:
            got: object = tok.decode(ids)
        except InputError as e:
            got = f"<refused: {one_line(e)}>"
        want = ref.decode(ids)
        cells["decode"].count_unknown(text, got == want, has_unknown, _versus, "tokreg", got, ref.library, want)
        if spans is not None and mine == ids:
            ours_spans = _spans(tok.encode_with_offsets(text), ref.unit)
            cells["offsets"].count_unknown(
                text, ours_spans == list(spans), has_unknown, _first_span_diff, ids, ours_spans, list(spans)
            )
    if ref.unit is None:
        cells["offsets"] = Cell(note=f"n/a: {ref.library} gives no spans")
    return cells


def unknown_ids(tok: Tokenizer) -> set[int]:
    """The ids of `tok`'s unknown tokens (`[UNK]`, `<unk>`)."""
    from tokreg.data import TokenizerData

    return {t.id for t in TokenizerData.from_content(tok.content).tokens if t.kind == "unknown"}


def _versus(a: str, ours: Any, b: str, theirs: Any) -> str:
    return f"{a} {_short(ours)} vs {b} {_short(theirs)}"


def _short(x: Any) -> str:
    return repr(x[:80]) if isinstance(x, str) else str(list(x)[:12])


def _live_diff(got: Any, want: Any, k: int, keys: list[str]) -> str:
    return ", ".join(f"{d}: {_row(got, d, k)[:8]} vs {_row(want, d, k)[:8]}" for d in keys)


def _first_span_diff(ids: list[int], ours: list[Span], theirs: list[Span]) -> str:
    k = next((k for k, (a, b) in enumerate(zip(ours, theirs)) if a != b), min(len(ours), len(theirs)))
    return f"token {k} (id {ids[k] if k < len(ids) else '-'}): tokreg {ours[k : k + 3]} vs {theirs[k : k + 3]}"


def compare_ids(tok: Tokenizer, ref: Reference, texts: Sequence[str]) -> Cell:
    """Only the ids (an export loaded in its target library)."""
    cell = Cell()
    try:
        theirs = ref.encode(list(texts))
    except Exception as e:
        return noted(f"error in {ref.library}", e)
    for text, mine, (ids, _) in zip(texts, tok.encode_ordinary_batch(list(texts)), theirs):
        ids = list(ids)
        cell.count(text, mine == ids, _versus, "tokreg", mine, ref.library, ids)
    return cell


LIVE_KEYS = ("input_ids", "attention_mask", "token_type_ids", "offset_mapping")


def compare_live(live: Any, auto: Any, texts: Sequence[str], batch: int = 64) -> Cell:
    """`live` (to_transformers()) against `auto` (AutoTokenizer over the original files), padded
    and truncated in batches, line by line."""
    cell = Cell()
    for at in range(0, len(texts), batch):
        chunk = list(texts[at : at + batch])
        args: dict[str, Any] = {"padding": True, "truncation": True, "return_offsets_mapping": True}
        want = auto(chunk, **args)
        got = live(chunk, **args)
        for k, text in enumerate(chunk):
            diff = [key for key in LIVE_KEYS if _row(got, key, k) != _row(want, key, k)]
            cell.count(text, not diff, _live_diff, got, want, k, diff)
    return cell


def _row(enc: Any, key: str, k: int) -> list[Any]:
    return [tuple(x) if isinstance(x, (list, tuple)) else x for x in enc[key][k]] if key in enc else []


def compare_live_ids(live: Any, ref: Reference, texts: Sequence[str], batch: int = 64) -> Cell:
    """`live` padded in batches against the reference's ids (no transformers original)."""
    cell = Cell()
    for at in range(0, len(texts), batch):
        chunk = list(texts[at : at + batch])
        got = live(chunk, padding=True, add_special_tokens=False)
        for k, (text, (ids, _)) in enumerate(zip(chunk, ref.encode(chunk))):
            mine = [i for i, m in zip(got["input_ids"][k], got["attention_mask"][k]) if m]
            cell.count(text, mine == list(ids), _versus, "to_transformers", mine, ref.library, ids)
    return cell
