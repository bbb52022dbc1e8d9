"""tokreg's version, read from its METADATA without importlib.metadata (package_version.py),
is what importlib.metadata says, for the installed tokreg and for made-up path layouts."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from tokreg import package_version


def test_the_installed_version_is_importlib_metadatas() -> None:
    assert package_version.__version__ == version("tokreg")
    assert package_version._found() in (None, version("tokreg"))


def test_a_fresh_process_reads_it_without_importlib_metadata() -> None:
    code = "import sys, tokreg.package_version as v; print(v.__version__, 'importlib.metadata' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [version("tokreg"), "False"]


def _dist(folder: Path, name: str, meta: str) -> None:
    (folder / name).mkdir(parents=True)
    (folder / name / ("PKG-INFO" if name.endswith(".egg-info") else "METADATA")).write_text(meta, encoding="utf-8")


@pytest.mark.parametrize(
    "layout, found",
    [
        # The first folder on the path that has a tokreg distribution decides, as importlib's.
        ({"a": [("tokreg-9.1.dist-info", "Metadata-Version: 2.1\nName: tokreg\nVersion: 9.1\n\nVersion: 0\n")]}, "9.1"),
        (
            {
                "a": [("other-1.0.dist-info", "Name: other\nVersion: 1.0\n")],
                "b": [("Tokreg-2.0.dist-info", "Version: 2.0\n")],
            },
            "2.0",
        ),
        ({"a": [("tokreg.egg-info", "Metadata-Version: 2.4\nversion: 1.0\n")]}, "1.0"),
        # What it does not read the way importlib.metadata does is asked of it (None).
        ({"a": [("tokreg-1.0.dist-info", "Name: tokreg\n")]}, None),
        ({"a": [("other-1.0.dist-info", "Version: 1.0\n")]}, None),
    ],
)
def test_made_up_layouts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: dict[str, list[tuple[str, str]]], found: object
) -> None:
    for folder, dists in layout.items():
        for name, meta in dists:
            _dist(tmp_path / folder, name, meta)
    monkeypatch.setattr(sys, "path", [str(tmp_path / "missing"), *(str(tmp_path / f) for f in layout)])
    assert package_version._found() == found
    if found is not None:
        assert version("tokreg") == found  # importlib.metadata reads the same path alike
