"""Refs and aliases: `name@ALIAS` resolves, aliases move with their history kept, unknown
refs say what exists, and `rm` removes only an unaliased version, after confirmation."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import tokreg
from tokreg import BpeOptions, InputError, NotFoundError, Registry

from .conftest import Cli


@pytest.fixture
def two(registry: Registry, small_corpus: Path) -> Registry:
    registry.train("m", [small_corpus], BpeOptions(vocab_size=300))
    registry.train("m", [small_corpus], BpeOptions(vocab_size=320))
    return registry


def test_alias_resolves_and_moves_with_history(two: Registry) -> None:
    assert two.tag("m@1", "prod").old is None
    assert two.resolve("m@prod").number == 1
    moved = two.tag("m@2", "prod")
    assert (moved.old, moved.new, moved.moved) == (1, 2, True)
    assert two.resolve("m@prod").number == 2
    assert two.tag("m@2", "prod").moved is False  # no event for a no-op
    events = [e for e in two.log("m") if e.event == "alias"]
    assert [(e.old, e.new) for e in events] == [(None, 1), (1, 2)]
    assert [e.ref for e in two.log("m") if e.event == "version"] == ["m@1", "m@2"]


def test_every_ref_form_names_one_version(two: Registry) -> None:
    v1 = two.resolve("m@1")
    two.tag("m@1", "stable")
    assert two.resolve("m").number == 2 and two.resolve("m@latest").number == 2
    assert two.resolve("m@stable") == v1
    assert two.resolve(v1.content_hash[:16]) == v1
    assert two.resolve(v1.sha256[:14]) == v1


def test_unknown_refs_list_what_exists(two: Registry) -> None:
    two.tag("m@1", "prod")
    with pytest.raises(NotFoundError, match=r"no version or alias 'staging'.*versions are 1, 2.*@prod \(-> 1\)"):
        two.resolve("m@staging")
    with pytest.raises(NotFoundError, match="no tokenizer named 'nope'; the registry has: m"):
        two.resolve("nope@prod")
    with pytest.raises(NotFoundError, match=r"is ambiguous: it matches m@1 \(xxh3-128:\w+…\), m@2"):
        two.resolve("xxh3-128:")


@pytest.mark.parametrize("alias", ["2", "latest", "-x", "a b", "a@b"])
def test_bad_alias_names_are_refused(two: Registry, alias: str) -> None:
    with pytest.raises(InputError, match="alias .* is not valid"):
        two.tag("m@1", alias)


def test_rm_refuses_an_aliased_version_then_removes_it(two: Registry) -> None:
    two.tag("m@1", "prod")
    with pytest.raises(InputError, match=r"m@1 is still named by m@prod"):
        two.remove("m@1")
    assert two.untag("m", "prod") == 1
    assert two.remove("m@1").number == 1
    assert [v.ref for v in two.versions("m")] == ["m@2"]
    _, rows = two.sql(
        "SELECT (SELECT count(*) FROM tokens), (SELECT count(*) FROM samples), "
        "(SELECT count(*) FROM merges), (SELECT count(*) FROM training_runs)"
    )
    assert rows[0] == (320, 6, 320 - 256, 1)  # only m@2's rows are left
    assert [e.detail for e in two.log("m") if e.event == "alias"] == ["(new) -> @1", "@1 -> (deleted)"]


def test_a_removed_number_is_never_given_again(two: Registry, small_corpus: Path) -> None:
    assert two.remove("m@2").number == 2
    v = two.train("m", [small_corpus], BpeOptions(vocab_size=310))
    assert v.ref == "m@3"  # m@2 named other content once; it must never name something else
    with pytest.raises(NotFoundError, match="no version 2"):
        two.resolve("m@2")


def test_versions_are_not_rewritten_by_aliases(two: Registry) -> None:
    before = [(v.content_hash, v.created_at) for v in two.versions("m")]
    two.tag("m@1", "prod")
    two.tag("m@2", "prod")
    assert [(v.content_hash, v.created_at) for v in two.versions("m")] == before


def test_cli_tag_log_rm(run: Cli, small_corpus: Path) -> None:
    run("train", "c", small_corpus, "--vocab-size", 300, "-q")
    run("train", "c", small_corpus, "--vocab-size", 310, "-q")
    assert "c@prod -> c@1" in run("tag", "c@1", "prod").output
    assert "moved from @1 to c@2" in run("tag", "c", "prod").output
    assert run("encode", "c@prod", "hello").output == run("encode", "c@2", "hello").output
    log = json.loads(run("log", "c", "--json").output)
    assert [r["detail"] for r in log if r["event"] == "alias"] == ["(new) -> @1", "@1 -> @2"]
    assert "c@prod" in run("log", "c").output
    refused = run("rm", "c@2", "--yes", ok=False)
    assert refused.exit_code == 1 and "still named by c@prod" in refused.output
    aborted = run("rm", "c@1", input="n\n", ok=False)
    assert aborted.exit_code == 1 and len(json.loads(run("list", "--json").output)) == 2
    assert "removed c@1" in run("rm", "c@1", input="y\n").output
    assert [v["ref"] for v in json.loads(run("list", "--json").output)] == ["c@2"]
    missing = run("encode", "c@staging", "x", ok=False)
    assert missing.exit_code == 4 and "its aliases: @prod (-> 2)" in missing.output
    assert "deleted (was c@2)" in run("tag", "c", "prod", "--delete").output


def test_a_hash_prefix_matching_several_versions_lists_them(registry: Registry, small_corpus: Path) -> None:
    same = [registry.train("s", [small_corpus], BpeOptions(vocab_size=300)) for _ in range(3)]
    other = registry.train("t", [small_corpus], BpeOptions(vocab_size=310))
    digest = same[0].content_hash.split(":")[1]
    assert len({v.content_hash for v in same}) == 1  # same corpus and options: one content, three versions
    for prefix in (digest[:8], "xxh3-128:" + digest[:8], "xxh3-128:"):
        with pytest.raises(NotFoundError, match=r"is ambiguous: it matches s@1 .*, s@2 .*, s@3") as e:
            registry.resolve(prefix)
        assert "give more digits or NAME@N" in str(e.value)
    # The full hash names one content exactly: the oldest version holding it.
    assert registry.resolve(same[0].content_hash) == same[0]
    # A bare hex prefix of one version's hash resolves to it, in the library and the CLI.
    bare = other.content_hash.split(":")[1][:10]
    assert registry.resolve(bare) == other
    assert tokreg.load(bare, db=registry.url).hash == other.content_hash
    out = Cli(Path(registry.url.removeprefix("sqlite:///")))("show", bare, "--json").output
    assert json.loads(out)["ref"] == "t@1"
