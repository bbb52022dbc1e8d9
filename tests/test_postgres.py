"""The same registry on PostgreSQL, by URL, against a real server the test starts: the
migrations build the models, training and loading work, and `tokreg sql` stays read-only."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from tokreg import BpeOptions, ReadOnlyError, Registry, WordPieceOptions
from tokreg.store.schema import Base


def test_registry_on_postgres(pg_db: str, small_corpus: Path) -> None:
    pg_url = pg_db
    reg = Registry(pg_url, create=True)
    with reg.engine.connect() as conn:
        assert compare_metadata(MigrationContext.configure(conn), Base.metadata) == []
    v1 = reg.train("pg", [small_corpus], BpeOptions(vocab_size=400, special=("<|end|>",)))
    v2 = reg.train("pg", [small_corpus], WordPieceOptions(vocab_size=400, lowercase=True))
    assert (v1.ref, v2.ref) == ("pg@1", "pg@2")
    # Same content, same hash, whichever database holds it.
    local = Registry(small_corpus.parent / "local.db")
    assert (
        local.train("pg", [small_corpus], BpeOptions(vocab_size=400, special=("<|end|>",))).content_hash
        == v1.content_hash
    )
    tok = reg.load("pg@1")
    assert tok.decode(tok.encode("In the beginning")) == "In the beginning"
    _, rows = reg.sql("SELECT tokenizer, count(*) FROM vocab GROUP BY tokenizer ORDER BY tokenizer")
    assert rows == [("pg@1", 400), ("pg@2", 400)]
    _, rows = reg.sql(
        "SELECT left_text, right_text, result_text FROM merges_view WHERE tokenizer = 'pg@1' ORDER BY rank LIMIT 1"
    )
    assert rows[0][0] + rows[0][1] == rows[0][2]
    with pytest.raises(ReadOnlyError):
        reg.sql("DELETE FROM tokens")
    _, rows = reg.sql("SELECT count(*) FROM tokens")
    assert rows[0][0] == 800
    reg.close()


def test_evaluations_and_audits_on_postgres(pg_db: str, small_corpus: Path) -> None:
    reg = Registry(pg_db, create=True)
    reg.train("pgeval", [small_corpus], BpeOptions(vocab_size=300))
    first = reg.evaluate(["pgeval"], [small_corpus], languages=["en"])
    again = reg.evaluate(["pgeval"], [small_corpus])
    assert again.scores[0].stored and again.scores[0].metrics == first.scores[0].metrics
    _, rows = reg.sql(
        "SELECT tokenizer, language, value FROM evaluations_view WHERE metric = 'tokens' AND name = 'pgeval'"
    )
    assert rows == [("pgeval@1", "en", first.scores[0].metrics["tokens"])]
    audit = reg.audit("pgeval")
    _, rows = reg.sql("SELECT category, count(*) FROM audit_view WHERE tokenizer = 'pgeval@1' GROUP BY category")
    assert dict(rows) == {k: n for k, n in audit.categories().items() if n}
    assert reg.audit("pgeval").stored
    reg.close()
