"""`tokreg train` opens its registry on a thread while it trains (cli/opening.py): what the
opening finds wrong stops the run at its next progress report, with the same error."""

from __future__ import annotations

from pathlib import Path

import pytest

from tokreg.cli.opening import Opening
from tokreg.errors import InputError


def test_a_refused_opening_stops_the_run_at_its_next_report(tmp_path: Path) -> None:
    opening = Opening(str(tmp_path / "r.db"), "bad@name")
    seen: list[tuple[str, int, int]] = []
    report = opening.guard(lambda phase, done, total: seen.append((phase, done, total)))
    with pytest.raises(InputError, match="not valid"):
        opening.registry()
    with pytest.raises(InputError, match="not valid"):
        report("merge", 256, 1000)
    assert seen == []
    opening.abandon()
    assert not (tmp_path / "r.db").exists()  # nothing was created


def test_a_good_opening_passes_reports_on_and_gives_the_registry(tmp_path: Path) -> None:
    opening = Opening(str(tmp_path / "r.db"), "mini")
    seen: list[tuple[str, int, int]] = []
    report = opening.guard(lambda phase, done, total: seen.append((phase, done, total)))
    reg = opening.registry()
    report("merge", 256, 1000)
    assert seen == [("merge", 256, 1000)]
    assert not reg.created and not (tmp_path / "r.db").exists()  # opened, not created: the first write creates it
    reg.close()
