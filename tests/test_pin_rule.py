"""One meaning for a pin: inside a project whose tokreg.lock pins `m@1`, a bare `m` is `m@1` in
every `Registry` method and CLI command that takes a REF, exactly as `Registry.load("m")` is;
only `pin`, which writes the pin, takes the latest. And what each command costs: every REF
resolved once, the lockfile found and read at most once."""

from __future__ import annotations

import collections
import json
from collections.abc import Iterator
from pathlib import Path
from unittest import mock

import pytest

from tokreg import BpeOptions, IntegrityError, Registry
from tokreg.encoding.tokenizer import Tokenizer
from tokreg.store import by_hash, refs
from tokreg.versions import lockfile

from .conftest import Cli


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty consumer project as the working directory, with its own compiled cache."""
    p = tmp_path / "consumer"
    p.mkdir()
    monkeypatch.chdir(p)
    monkeypatch.delenv("TOKREG_LOCK", raising=False)
    monkeypatch.setenv("TOKREG_CACHE", str(tmp_path / "cache"))
    return p


@pytest.fixture
def pinned(registry: Registry, small_corpus: Path, project: Path) -> Registry:
    """`m@1` and `m@2` (the latest), `other@1`; the project pins `m@1`."""
    registry.train("m", [small_corpus], BpeOptions(vocab_size=300))
    registry.train("m", [small_corpus], BpeOptions(vocab_size=340))
    registry.train("other", [small_corpus], BpeOptions(vocab_size=280))
    registry.pin("m@1")
    return registry


def test_every_read_follows_the_pin_as_load_does(pinned: Registry, small_corpus: Path, tmp_path: Path) -> None:
    reg = pinned
    assert reg.load("m").ref == "m@1"  # the reference meaning
    assert reg.resolve("m").ref == "m@1"
    assert reg.show("m").ref == "m@1"
    assert reg.stored("m").info.ref == "m@1"
    assert [r.ref for r in reg.verify("m")] == ["m@1"]
    d = reg.diff("m", "m@2")
    assert (d.a.ref, d.b.ref) == ("m@1", "m@2")
    out = tmp_path / "m.tokreg"
    assert reg.export("m", "tokreg", out).ref == "m@1"
    assert Tokenizer.from_file(out).hash == reg.resolve("m@1").content_hash
    assert [s.ref for s in reg.evaluate("m", small_corpus).scores] == ["m@1"]
    assert reg.evaluations("m") == reg.evaluations("m@1") != reg.evaluations("m@2")
    assert reg.audit("m").ref == "m@1"
    assert reg.history("m") == reg.history("m@1")
    assert reg.samples("m") == reg.samples("m@1")
    assert reg.tokens("m")[0] == 300 and reg.token("m", 299).version.ref == "m@1"
    assert reg.lineage("m")[0].ref == "m@1"
    assert reg.reproduce("m").ref == "m@1"
    plus = reg.add_tokens("m", "m-plus", ["zzqx"])
    assert reg.lineage(plus)[1].ref == "m@1"  # derived from the pinned base
    # Explicit versions, other names and other kinds of ref are never affected.
    assert reg.show("m@2").ref == "m@2" and reg.show("other").ref == "other@1"


def test_tag_and_remove_follow_the_pin_and_pin_moves_it(pinned: Registry, project: Path) -> None:
    assert pinned.tag("m", "prod").ref == "m@1"
    pinned.untag("m", "prod")
    assert pinned.pin("m").ref == "m@2"  # re-pinning moves the pin
    assert pinned.load("m").ref == "m@2"
    assert pinned.remove("m").ref == "m@2"  # the pinned version, now m@2
    pinned.pin("m@1")
    assert pinned.load("m").ref == "m@1"


def test_the_lockfile_is_chosen_per_registry(pinned: Registry, db_path: Path, project: Path) -> None:
    with Registry(db_path, lock=False) as plain:
        assert plain.show("m").ref == plain.load("m").ref == "m@2"
        assert plain.load("m", lock=None).ref == "m@2"  # None: the registry's choice
        assert plain.load("m", lock=lockfile.current(project / "tokreg.lock")).ref == "m@1"
    served = Registry.read_only(db_path)  # as `tokreg serve` opens it: no lockfile
    assert served.show("m").ref == served.resolve("m").ref == "m@2"
    served.close()
    assert pinned.show("m", merges=0).ref == "m@1"  # the default: the project's tokreg.lock


def test_a_pin_whose_hash_changed_is_refused_by_every_read(pinned: Registry, project: Path, tmp_path: Path) -> None:
    lock = project / "tokreg.lock"
    pin = lockfile.read(lock).pins["m"]
    wrong = "xxh3-128:" + "0" * 32
    lock.write_text(lock.read_text(encoding="utf-8").replace(pin.hash, wrong), encoding="utf-8")
    for read in (
        lambda: pinned.load("m"),
        lambda: pinned.show("m"),
        lambda: pinned.verify("m"),
        lambda: pinned.diff("m@2", "m"),
        lambda: pinned.export("m", "tokreg", tmp_path / "x.tokreg"),
        lambda: pinned.audit("m"),
    ):
        with pytest.raises(IntegrityError) as e:
            read()
        # One message, from lockfile.resolve: export does not call a mismatched pin damage.
        assert str(e.value).startswith(f"{lock} pins m@1 ({wrong}), but m@1 in {pinned.where} is {pin.hash}")
        assert "refusing to export" not in str(e.value)
    assert not (tmp_path / "x.tokreg").exists()


def test_cli_commands_follow_the_pin(run: Cli, pinned: Registry) -> None:
    assert json.loads(run("show", "m", "--json").output)["ref"] == "m@1"
    assert json.loads(run("show", "m", "--history", "--json").output)["ref"] == "m@1"
    assert [r["ref"] for r in json.loads(run("verify", "m", "--json").output)] == ["m@1"]
    assert json.loads(run("diff", "m", "m@2", "--json").output)["a"]["ref"] == "m@1"
    assert run("encode", "m", "hello").output == run("encode", "m@1", "hello").output
    assert json.loads(run("tag", "m", "prod", "--json").output)["ref"] == "m@1"


# -- what each command costs ----------------------------------------------------------------------


@pytest.fixture
def counts() -> Iterator[collections.Counter[str]]:
    """How often the resolver (by ref, or by a pin's hash), the lockfile search and the lockfile
    reader run."""
    n: collections.Counter[str] = collections.Counter()

    def counted(module: object, name: str, key: str) -> mock._patch[mock.MagicMock]:
        real = getattr(module, name)

        def call(*a: object, **k: object) -> object:
            n[key] += 1
            return real(*a, **k)

        return mock.patch.object(module, name, side_effect=call)

    with (
        counted(refs, "resolve", "resolve"),
        counted(by_hash, "versions_with", "resolve"),
        counted(lockfile, "find", "find"),
        counted(lockfile, "read", "read"),
    ):
        yield n


#: command -> how many REFs it names (each resolved exactly once)
COMMANDS = [
    (["show", "m"], 1),
    (["show", "m", "--history"], 1),
    (["verify", "m"], 1),
    (["verify", "m@1"], 1),
    (["diff", "m", "m@2"], 2),
    (["export", "m", "-o", "{tmp}/m.tokreg"], 1),
    (["eval", "m", "other", "--text", "{corpus}"], 2),
    (["audit", "m"], 1),
    (["reproduce", "m"], 1),
    (["add-tokens", "m", "m-plus", "zzqx"], 1),
    (["encode", "m", "hello"], 1),  # the content is not cached yet: through the registry
    (["decode", "m@2", "1", "2"], 1),
    (["tag", "m", "prod"], 1),
    (["pin", "other", "--dir", "{tmp}"], 1),
    (["rm", "other", "--yes"], 1),
]


@pytest.mark.parametrize("args,n_refs", COMMANDS, ids=[" ".join(a[:2]) + f"-{i}" for i, (a, _) in enumerate(COMMANDS)])
def test_each_command_resolves_each_ref_once_and_reads_the_lockfile_once(
    run: Cli,
    pinned: Registry,
    small_corpus: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    counts: collections.Counter[str],
    args: list[str],
    n_refs: int,
) -> None:
    monkeypatch.setenv("TOKREG_CACHE", str(tmp_path / "empty-cache"))
    args = [a.format(tmp=tmp_path, corpus=small_corpus) for a in args]
    run(*args)
    assert counts["resolve"] == n_refs, counts
    assert counts["find"] <= 1 and counts["read"] <= 1, counts
    if args[0] != "pin":  # the project's lockfile applied, once
        assert counts["find"] == counts["read"] == 1, counts


def test_tokreg_load_reads_the_lockfile_once(
    pinned: Registry, db_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, counts: collections.Counter[str]
) -> None:
    import tokreg

    monkeypatch.setenv("TOKREG_CACHE", str(tmp_path / "empty-cache"))
    assert tokreg.load("m", db=db_path).ref == "m@1"  # not cached: through the registry
    assert (counts["find"], counts["read"], counts["resolve"]) == (1, 1, 1)
    counts.clear()
    assert tokreg.load("m").ref == "m@1"  # cached now: no registry, no resolution
    assert (counts["find"], counts["read"], counts["resolve"]) == (1, 1, 0)
