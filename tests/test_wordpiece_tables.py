"""src/normalize/bert_tables.rs is what its generator (tools/gen_wordpiece_tables.py) writes: the
character classes of the core's BERT normalizer and pre-tokenizer, probed from Hugging Face
`tokenizers`. The whole probe (every scalar value) is slow; a sample of code points, with both
ends of every range and their neighbours, is probed in the fast lane."""

from __future__ import annotations

import importlib.util
import re
import sys
from types import ModuleType

import pytest

from .conftest import ROOT

tokenizers = pytest.importorskip("tokenizers")

TABLES = ROOT / "src" / "normalize" / "bert_tables.rs"


def _generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_wordpiece_tables", ROOT / "tools" / "gen_wordpiece_tables.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)
    spec.loader.exec_module(module)
    return module


gen = _generator()


def parsed() -> tuple[str, dict[str, list[tuple[int, int]]]]:
    """(the `tokenizers` version the header names, each table's ranges) as bert_tables.rs holds them."""
    text = TABLES.read_text(encoding="utf-8")
    version = re.search(r"`tokenizers` (\S+) on every", text)
    assert version, "bert_tables.rs's header no longer names the tokenizers version it was probed from"
    tables = {
        name: [(int(lo, 16), int(hi, 16)) for lo, hi in re.findall(r"\(0x([0-9A-F]+), 0x([0-9A-F]+)\)", body)]
        for name, body in re.findall(r"static (\w+): &\[\(u32, u32\)\] = &\[\n(.*?)\];", text, re.S)
    }
    return version.group(1), tables


def _same_version(version: str) -> None:
    if tokenizers.__version__ != version:
        pytest.skip(f"bert_tables.rs was probed from tokenizers {version}, {tokenizers.__version__} is installed")


def test_tables_rs_is_rendered_from_its_ranges() -> None:
    """Every table in the file is one of the generator's, as sorted, non-overlapping, non-adjacent
    ranges, with the generator's comments around it: nothing was edited by hand."""
    version, tables = parsed()
    assert list(tables) == gen.NAMES
    for name, rs in tables.items():
        members = [cp for lo, hi in rs for cp in range(lo, hi + 1)]
        assert gen.ranges(members) == rs, f"{name}'s ranges are not sorted, disjoint and non-adjacent"
    assert gen.render(tables, version) == TABLES.read_text(encoding="utf-8")


def test_ranges_join_neighbours() -> None:
    assert gen.ranges([7, 1, 3, 2]) == [(1, 3), (7, 7)]
    assert gen.ranges([]) == []


def test_a_sample_of_code_points_is_classed_as_tables_rs_says() -> None:
    version, tables = parsed()
    _same_version(version)
    sample = set(range(0x800))
    for rs in tables.values():
        for lo, hi in rs:
            sample |= {lo - 1, lo, hi, hi + 1}
    sample |= set(range(0x800, 0x110000, 997))
    sample = {cp for cp in sample if 0 <= cp < 0x110000 and not 0xD800 <= cp < 0xE000}
    found = gen.classify(sorted(sample))
    for name, rs in tables.items():
        want = sorted(cp for cp in sample if any(lo <= cp <= hi for lo, hi in rs))
        assert found[name] == want, f"{name}: probed {sorted(set(found[name]) ^ set(want))[:20]} differently"


@pytest.mark.slow
def test_the_generator_writes_tables_rs_byte_for_byte() -> None:
    version, _ = parsed()
    _same_version(version)
    assert gen.generate() == TABLES.read_text(encoding="utf-8")
