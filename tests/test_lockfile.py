"""Pinning in a consumer project: `tokreg pin` writes tokreg.lock; inside the project a bare
name loads exactly the pinned version (from any subfolder, through the API and the CLI); a
pin whose hash no longer matches the stored content is refused, naming both hashes."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import text

import tokreg
from tokreg import BpeOptions, IntegrityError, NotFoundError, Registry
from tokreg.cli import cli
from tokreg.versions import lockfile
from tokreg.versions import lockfile as pins

from .conftest import Cli


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty consumer project as the working directory, with its own compiled cache."""
    p = tmp_path / "consumer"
    (p / "src" / "deep").mkdir(parents=True)
    monkeypatch.chdir(p)
    monkeypatch.delenv("TOKREG_LOCK", raising=False)
    monkeypatch.setenv("TOKREG_CACHE", str(tmp_path / "cache"))
    return p


@pytest.fixture
def two(registry: Registry, small_corpus: Path) -> Registry:
    registry.train("m", [small_corpus], BpeOptions(vocab_size=300))
    registry.train("m", [small_corpus], BpeOptions(vocab_size=340))
    registry.train("other", [small_corpus], BpeOptions(vocab_size=280))
    return registry


def test_pin_then_load_gives_the_pinned_version(
    two: Registry, project: Path, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert tokreg.load("m", db=db_path).ref == "m@2"  # no lockfile yet: the latest
    pin = two.pin("m@1")
    assert pin.ref == "m@1" and pin.hash == two.resolve("m@1").content_hash
    assert (project / "tokreg.lock").is_file()
    assert tokreg.load("m", db=db_path).ref == "m@1"
    assert tokreg.load("m@2", db=db_path).ref == "m@2"  # an explicit version is not overridden
    assert tokreg.load("other", db=db_path).ref == "other@1"  # names not pinned are unaffected
    monkeypatch.chdir(project / "src" / "deep")
    assert tokreg.load("m", db=db_path).ref == "m@1"  # found from a subfolder
    monkeypatch.setenv("TOKREG_LOCK", "off")
    assert tokreg.load("m", db=db_path).ref == "m@2"


def test_repinning_updates_one_entry_and_keeps_the_others(two: Registry, project: Path) -> None:
    two.pin("m@1")
    two.pin("other")
    two.tag("m@2", "prod")
    two.pin("m")  # a bare name pins the latest, not the current pin
    pins = lockfile.read(project / "tokreg.lock").pins
    assert (pins["m"].version, pins["other"].version) == (2, 1)
    assert pins["m"].registry == two.url and pins["m"].sha256.startswith("sha256:")


def test_lockfile_reads_the_same_with_tomllib_and_the_fallback(two: Registry, project: Path) -> None:
    two.pin("m@1")
    two.pin("other")
    raw = (project / "tokreg.lock").read_text(encoding="utf-8")
    subset = lockfile._parse_subset(raw)
    assert subset["lock_version"] == 1 and [p["name"] for p in subset["pin"]] == ["m", "other"]
    if sys.version_info >= (3, 11):
        import tomllib

        assert tomllib.loads(raw) == subset


def test_a_pin_whose_hash_changed_is_refused_naming_both(two: Registry, project: Path, db_path: Path) -> None:
    pin = two.pin("m@1")
    lock = project / "tokreg.lock"
    wrong = "xxh3-128:" + "0" * 32
    lock.write_text(lock.read_text(encoding="utf-8").replace(pin.hash, wrong), encoding="utf-8")
    with pytest.raises(IntegrityError) as e:
        tokreg.load("m", db=db_path)
    assert wrong in str(e.value) and pin.hash in str(e.value)


def test_stored_content_changed_after_pinning_is_refused(two: Registry, project: Path, db_path: Path) -> None:
    pin = two.pin("m@1")
    with two.engine.begin() as conn:  # what someone editing the database by hand would do
        conn.execute(
            text(
                "UPDATE version_contents SET content = content || X'00' WHERE version_id = "
                "(SELECT id FROM versions WHERE name = 'm' AND number = 1)"
            )
        )
    with pytest.raises(IntegrityError) as e:
        tokreg.load("m", db=db_path)
    msg = str(e.value)
    assert pin.hash in msg and "hashes to xxh3-128:" in msg
    assert msg.split("hashes to ")[1].split(",")[0] != pin.hash


def test_a_pinned_version_missing_from_the_registry(
    two: Registry, project: Path, tmp_path: Path, small_corpus: Path
) -> None:
    two.pin("m@2")
    other = Registry(tmp_path / "elsewhere.db")
    other.train("m", [small_corpus], BpeOptions(vocab_size=300))
    with pytest.raises(
        NotFoundError,
        match=r"tokreg.lock pins m@2 .* holds no version with that content; it was pinned from sqlite:///",
    ):
        other.load("m")
    other.close()


def test_cli_pin_and_encode_in_a_consumer_project(run: Cli, two: Registry, project: Path) -> None:
    out = run("pin", "m@1").output
    assert "pinned m@1" in out and "tokreg.lock" in out
    assert run("encode", "m", "hello world").output == run("encode", "m@1", "hello world").output
    assert run("encode", "m", "hello world").output != run("encode", "m@2", "hello world").output
    pinned = json.loads(run("pin", "m", "--json").output)
    assert pinned["ref"] == "m@2"
    assert json.loads(run("show", "m", "--json").output)["ref"] == "m@2"
    (project / "tokreg.lock").write_text("lock_version = [\n", encoding="utf-8")
    broken = run("encode", "m", "x", ok=False)
    assert broken.exit_code == 1 and "is not valid TOML" in broken.output
    # However deep a lockfile's nesting, it is one line (tomllib reads nesting recursively).
    (project / "tokreg.lock").write_text("[[pin]]\nname = " + "[" * 100_000 + "]" * 100_000 + "\n")
    deep = run("encode", "m", "x", ok=False)
    assert deep.exit_code == 1 and "nested too deeply" in deep.output
    assert len(deep.output.strip().splitlines()) == 1 and "Traceback" not in deep.output


def test_a_pinned_name_loads_from_the_registry_it_was_pinned_from(
    two: Registry, project: Path, db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The consumer has neither --db nor TOKREG_DB, and its default registry is elsewhere (empty).
    two.pin("m@1")
    monkeypatch.delenv("TOKREG_DB", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert pins.registry_for("m", lockfile.current()) == str(two.url)
    assert tokreg.load("m").ref == "m@1"
    assert tokreg.load("m@2").ref == "m@2"  # same registry, another version of the pinned name
    res = CliRunner().invoke(cli, ["encode", "m", "hello"], env={"TOKREG_DB": None})
    assert res.exit_code == 0 and json.loads("[" + res.output.strip().replace(" ", ",") + "]") == tokreg.load(
        "m@1", db=db_path
    ).encode_ordinary("hello")
    with pytest.raises(NotFoundError):
        tokreg.load("other")  # not pinned: the default registry, which does not have it
    # An explicit registry is asked first, for refs and for pinned content alike; a pinned name
    # is its hash, so a registry without it is followed by the pin's own.
    elsewhere = tmp_path / "elsewhere.db"
    monkeypatch.setenv("TOKREG_DB", str(elsewhere))
    assert pins.registry_for("m", lockfile.current()) == str(two.url)
    with pytest.raises(NotFoundError):
        tokreg.load("m@1")
    monkeypatch.setenv("TOKREG_CACHE", str(tmp_path / "cold"))
    assert tokreg.load("m").hash == lockfile.current().pins["m"].hash  # type: ignore[union-attr]
    monkeypatch.setenv("TOKREG_CACHE", str(tmp_path / "cache"))
    # A pinned registry that cannot be reached from here falls back to the usual location.
    monkeypatch.delenv("TOKREG_DB")
    two.close()
    db_path.rename(tmp_path / "moved.db")
    assert pins.registry_for("m", lockfile.current()) is None
    # The pinned content was cached by the loads above: it loads without any registry at all.
    tok = tokreg.load("m")
    assert (tok.ref, tok.hash) == ("m@1", lockfile.current().pins["m"].hash)  # type: ignore[union-attr]


# -- the exact reader of a lockfile as written (`lockfile._as_written`) ----------------------------

_WRITTEN = lockfile.render(
    [
        lockfile.Pin(
            "m", 2, "xxh3-128:" + "1" * 32, "sha256:" + "2" * 64, "sqlite:////tmp/r.db", "2026-11-21T10:00:00"
        ),
        lockfile.Pin('q"uo\\te é\t', 10, "xxh3-128:" + "3" * 32, "", "", ""),
    ],
    [lockfile.DatasetPin("web", "data/web", "xxh3-128:" + "4" * 32, "xxh3-128:" + "1" * 32, "m@2", "")],
)


def _tomllib(text: str) -> object:
    """What tomllib reads in `text`, or the exception class it raises."""
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        return type(e)


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib is the reference")
def test_a_written_lockfile_is_read_as_tomllib_reads_it() -> None:
    doc = lockfile._as_written(_WRITTEN)
    assert doc is not None and doc == _tomllib(_WRITTEN)
    assert [p["name"] for p in doc["pin"]] == ["m", 'q"uo\\te é\t'] and doc["dataset"][0]["path"] == "data/web"


@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib is the reference")
@pytest.mark.parametrize(
    "edit",
    [
        lambda t: t.replace("lock_version = 1", "lock_version = 1  # a comment"),
        lambda t: t.replace("\n[[pin]]", "\n# a comment\n[[pin]]", 1),
        lambda t: t.replace("\n", "\r\n"),
        lambda t: t.replace('name = "m"', 'name = "\\u006d"'),
        lambda t: t.replace('name = "m"', "name = 'm'"),
        lambda t: t.replace('name = "m"', '"name" = "m"'),
        lambda t: t.replace('name = "m"', 'name.first = "m"'),
        lambda t: t.replace('name = "m"', 'name  = "m"'),
        lambda t: t.replace('name = "m"', 'name = "m" '),
        lambda t: t.replace("version = 2", "version = 02"),
        lambda t: t.replace("version = 2", "version = +2"),
        lambda t: t.replace("version = 2", "version = 2\nversion = 3"),
        lambda t: t.replace("lock_version = 1\n", "") + "lock_version = 1\n",
        lambda t: t.replace('path = "data/web"', 'path = "data\\/web"'),
        lambda t: t.replace('path = "data/web"', 'path = "data\x7fweb"'),
        lambda t: t.replace("[[pin]]", "[pin]", 1),
        lambda t: "\ufeff" + t,
        lambda t: t + "\n",
        lambda t: t.rstrip("\n"),
    ],
)
def test_any_other_text_is_read_by_tomllib(edit: Any) -> None:
    """A lockfile changed in any way from what `render` writes is not taken by the fast reader;
    `_parse` then gives exactly what tomllib gives (or its error)."""
    edited = edit(_WRITTEN)
    assert edited != _WRITTEN
    assert lockfile._as_written(edited) is None
    want = _tomllib(edited)
    if isinstance(want, dict):
        assert lockfile._parse(edited) == want
    else:
        with pytest.raises(ValueError):
            lockfile._parse(edited)


@pytest.mark.slow
@pytest.mark.skipif(sys.version_info < (3, 11), reason="tomllib is the reference")
@settings(max_examples=120, deadline=None)
@given(
    names=st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=3, unique=True),
    at=st.integers(min_value=0),
    insert=st.text(max_size=3),
    cut=st.integers(min_value=0, max_value=3),
)
def test_the_fast_reader_never_disagrees_with_tomllib(names: list[str], at: int, insert: str, cut: int) -> None:
    """Whatever the pins hold and however the text is then changed, the fast reader either
    declines (None) or gives exactly tomllib's document; on what `render` wrote from ordinary
    text it never declines."""
    pins = [lockfile.Pin(n, i + 1, "xxh3-128:" + "0" * 32, "", "sqlite:///" + n, "") for i, n in enumerate(names)]
    written = lockfile.render(pins)
    for lock_text in (written, written[: at % len(written)] + insert + written[at % len(written) + cut :]):
        fast = lockfile._as_written(lock_text)
        assert fast is None or fast == _tomllib(lock_text), lock_text
    if all(c.isprintable() or c == "\t" for n in names for c in n) and "\x7f" not in "".join(names):
        assert lockfile._as_written(written) is not None
