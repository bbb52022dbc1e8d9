"""One layout built, imported and compared, column by column: what the tests assert on and what
tools/conformance_table.py prints. Everything expensive (the build, the import, each export,
the live objects, a column's figures on a set of texts) is computed once per `Built`."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from tokreg import InputError, Registry, Tokenizer

from . import references
from .layouts import EXT, FORMATS, Context, Layout, Source
from .references import Cell, Reference

COLUMNS = ("import", "ids", "decode", "offsets", "export", "live")


@dataclass
class Built:
    layout: Layout
    folder: Path
    reg: Registry
    import_cell: Cell
    source: Optional[Source] = None
    tok: Optional[Tokenizer] = None
    reference: Optional[Reference] = None
    _exports: dict[str, Any] = field(default_factory=dict)
    _live: Optional[tuple[Any, Any]] = None
    _figures: dict[tuple[str, str], Cell] = field(default_factory=dict)

    @property
    def ref(self) -> str:
        return self.layout.name

    def cell(self, column: str, key: str, texts: Sequence[str]) -> Cell:
        """`column`'s figures on `texts` (`key` names them, so they are computed once)."""
        if column == "import":
            return self.import_cell
        if (column, key) not in self._figures:
            self._figures.update({(c, key): v for c, v in self._compute(column, texts).items()})
        return self._figures[column, key]

    def fresh(self, column: str, texts: Sequence[str]) -> Cell:
        """`column`'s figures on `texts`, not kept (generated text)."""
        return self._compute(column, texts)[column]

    def _compute(self, column: str, texts: Sequence[str]) -> dict[str, Cell]:
        if self.tok is None:
            return {column: Cell(note=f"n/a: {self.import_cell.note}")}
        if column in ("ids", "decode", "offsets"):
            if self.reference is None:
                why = "n/a: no library reads an export of it (hf, sentencepiece refused)"
                return dict.fromkeys(("ids", "decode", "offsets"), Cell(note=why))
            return references.compare_reference(self.tok, self.reference, texts)
        if column == "export":
            cell = Cell()
            for fmt in FORMATS:
                target = self.exported(fmt)
                cell.parts[fmt] = (
                    target if isinstance(target, Cell) else references.compare_ids(self.tok, target, texts)
                )
            return {column: cell}
        return {column: self._live_cell(texts)}

    def exported(self, fmt: str) -> Any:
        """The export in `fmt` loaded in its target library, or the Cell saying why there is none."""
        if fmt not in self._exports:
            assert self.tok is not None
            # hf: to a directory, as save_pretrained writes, so the transformers settings travel too
            path = self.folder / ("export-hf" if fmt == "hf" else f"export.{EXT[fmt]}")
            if fmt == "hf":
                path.mkdir(exist_ok=True)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("error")  # a check skipped for want of the library is an error here
                    self.reg.export(self.ref, fmt, path)
                self._exports[fmt] = references.of_format(
                    fmt, path / "tokenizer.json" if fmt == "hf" else path, self.tok
                )
            except InputError as e:
                self._exports[fmt] = references.noted("refused", e)
            except Exception as e:
                self._exports[fmt] = references.noted("error", e)
        return self._exports[fmt]

    def _live_cell(self, texts: Sequence[str]) -> Cell:
        assert self.tok is not None
        try:
            if self._live is None:
                auto = None
                if self.source is not None and self.source.transformers_dir is not None:
                    from transformers import AutoTokenizer

                    auto = AutoTokenizer.from_pretrained(str(self.source.transformers_dir))
                live = self.tok.to_transformers()
                if auto is None and live.pad_token is None:
                    # A vocabulary without a padding token (cl100k, GPT-2): what its users do,
                    # pad with the end-of-text token (or the first special token).
                    pad = live.eos_token or next(iter(self.tok.special_tokens), None)
                    if pad is not None:
                        live = self.tok.to_transformers(pad_token=pad)
                self._live = (live, auto)
            live, auto = self._live
            if auto is not None:
                return references.compare_live(live, auto, texts)
            if self.reference is None:
                return Cell(note="n/a: no reference library")
            return references.compare_live_ids(live, self.reference, texts)
        except InputError as e:
            return references.noted("refused", e)
        except Exception as e:
            return references.noted("error", e)


def build(layout: Layout, ctx: Context, reg: Registry) -> Built:
    """Makes the layout's files, takes them into `reg` as `layout.name`, and loads the judge."""
    try:
        source = layout.build(ctx)
    except Exception as e:
        return Built(layout, ctx.folder, reg, references.noted("error building the reference", e))
    try:
        source.add(reg, layout.name)
    except InputError as e:
        return Built(layout, ctx.folder, reg, references.noted("refused", e), source)
    except Exception as e:
        return Built(layout, ctx.folder, reg, references.noted("error", e), source)
    cell = Cell(note="imported") if source.imported else Cell(note="n/a: trained by tokreg")
    return Built(layout, ctx.folder, reg, cell, source, reg.load(layout.name), source.reference(reg, layout.name))


def corpus_lines(names: Sequence[str], per_corpus: Optional[int] = None, *, spread: bool = False) -> list[str]:
    """Every line of each shared corpus `names`, or `per_corpus` of them: the first ones, or
    with `spread` ones evenly spread over the corpus (every k-th line)."""
    from ..conftest import data_file

    out: list[str] = []
    for name in names:
        lines = data_file(name).read_text(encoding="utf-8").splitlines()
        if per_corpus is None:
            out += lines
        else:
            out += lines[:: max(1, len(lines) // per_corpus)][:per_corpus] if spread else lines[:per_corpus]
    return out
