"""What `tokreg show` (and the web app's version page) says of one version: its row, token
counts by kind and first merges (or top pieces), whether it is lossless, its lineage and the
versions derived from it, and its training run, read in one connection as one value.

    >>> d = details(conn, v, merges=10)
    >>> d.ref, d.title, d.summary.tokens_by_kind, d.lineage[0].lineage.derivation
    ('gpt-mini@1', 'byte-level BPE', {'byte': 256, 'merged': 744}, 'trained')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from sqlalchemy import Connection

from .. import algorithms
from ..data import JsonValue, LineageEntry, VersionInfo, VersionSummary, json_of
from ..encoding import stochastic
from ..evaluation.metrics import gini, spread
from ..evaluation.residues import BELOW, MIN_SEEN
from ..store import lineage, parity, reads, refs, removals, residues


@dataclass(frozen=True)
class VersionDetails(JsonValue):
    """A version as `Registry.show` returns it. Its JSON is the version's (`list --json`), then
    the summary's keys, then title, score_label, lossless, lineage, derived, stochastic, residues,
    parity (parity-aware BPE), removals (PickyBPE) and, for a trained version, training_run."""

    version: VersionInfo  # with `same_run` filled
    config: dict[str, Any]  # as people read it (`display_config`: a normalizer's rules by hash)
    summary: VersionSummary
    title: str  # the algorithm's, e.g. "byte-level BPE"
    score_label: Optional[str]  # what a piece's score is, for scored vocabularies
    lossless: bool  # decode(encode(s)) == s for every s
    lineage: tuple[LineageEntry, ...]  # it and its ancestors, nearest first
    derived: tuple[str, ...]  # refs of the versions derived from it, oldest first
    training_run: Optional[dict[str, Any]]  # the recorded run (times as ISO text), when trained
    stochastic: tuple[str, ...] = ()  # the seeded stochastic encodings it can draw (encoding/stochastic.py)
    residues: tuple[residues.ResidueSummary, ...] = ()  # its stored residue measures (evaluation/residues.py)
    parity: Optional[parity.ParitySummary] = None  # parity-aware BPE: its languages and their costs
    removals: Optional[removals.RemovalSummary] = None  # PickyBPE's removal events (store/removals.py)

    @property
    def ref(self) -> str:
        return self.version.ref

    def to_json(self) -> dict[str, Any]:
        out = self.version.to_json()
        out["config"] = json_of(self.config)
        out.update(self.summary.to_json())
        out["title"] = self.title
        out["score_label"] = self.score_label
        out["lossless"] = self.lossless
        out["lineage"] = json_of(self.lineage)
        out["derived"] = list(self.derived)
        out["stochastic"] = list(self.stochastic)
        out["residues"] = [
            {
                "text": r.text,
                "text_fingerprint": r.fingerprint,
                "measured": r.measured,
                "residues": r.residues,
                "below": BELOW,
                "min_seen": MIN_SEEN,
                "computed_at": r.computed_at.isoformat(),
            }
            for r in self.residues
        ]
        if self.parity is not None:
            out["parity"] = parity_json(self.parity)
        if self.removals is not None:
            out["removals"] = self.removals.to_json()
        if self.training_run is not None:
            out["training_run"] = json_of(self.training_run)
        return out


def details(conn: Connection, v: VersionInfo, *, merges: int = 10) -> VersionDetails:
    """`v` (resolved by the caller) with `merges` first merges or top pieces."""
    v = refs.with_same_run(conn, [v])[0]
    model = algorithms.of(v.algorithm, v.config).model
    run = reads.training_run(conn, v)
    return VersionDetails(
        version=v,
        config=model.display_config(v.config),
        summary=reads.summary(conn, v, merges=merges, top_scored=model.score_label is not None),
        title=model.title,
        score_label=model.score_label,
        lossless=model.lossless(model.parse_config(v.config)),
        lineage=tuple(lineage.chain(conn, v)),
        derived=tuple(lineage.children(conn, v)),
        training_run=(
            None
            if run is None
            else {k: (val.isoformat() if hasattr(val, "isoformat") else val) for k, val in run.items()}
        ),
        stochastic=stochastic.methods(model.name),
        residues=tuple(residues.summaries(conn, v.id, BELOW, MIN_SEEN)),
        parity=parity.summary(conn, v.id),
        removals=removals.summary(conn, v.id, first=merges),
    )


def parity_json(p: parity.ParitySummary) -> dict[str, Any]:
    """A parity-aware version's languages as `show --json` and the version page give them: each
    language's costs and merges, and over the parallel set (when there is one) each premium,
    their spread and the Gini coefficient of the development tokens."""
    premiums = p.premiums()
    return {
        "parallel": p.parallel,
        "global_merges": p.global_merges,
        "gini": gini([c.dev_tokens or 0 for c in p.languages]) if p.parallel else None,
        "spread": spread(list(premiums.values())) if premiums else None,
        "languages": [
            {
                "language": c.language,
                "merges": c.merges,
                "train_bytes": c.train_bytes,
                "train_tokens": c.train_tokens,
                "train_bytes_per_token": round(c.bytes_per_token, 4),
                "dev_bytes": c.dev_bytes,
                "dev_tokens": c.dev_tokens,
                "premium": round(premiums[c.language], 4) if premiums else None,
            }
            for c in p.languages
        ],
    }
