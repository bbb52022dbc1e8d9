"""The version page (`/v/REF`): what `tokreg show` prints, drawn: config, training run (corpus
files, timings), token counts by kind, lossless or not, the training curve as a chart, the
first merges (or the most likely pieces), the stored samples as coloured tokens, and the token
datasets the version made (`tokreg tokenize`).

The page is a list of sections, one template each under templates/version/; the stored results
of `tokreg eval` are one of them."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ...data import VersionInfo
from ...evaluation.metrics import LOSS, METRICS
from ...registry import Registry
from ...versions.lineage_text import lineage_line
from .. import charts, show
from ..http import blocking, respond
from ..summaries import Summaries


def _samples(reg: Registry, v: VersionInfo) -> list[dict[str, Any]]:
    return [
        {
            "text": s.text,
            "ids": list(s.ids),
            "tokens": [{"id": i, "segments": show.segments(b)} for i, b in zip(s.ids, s.tokens)],
        }
        for s in reg.samples(v)
    ]


def details(reg: Registry, summaries: Summaries, ref: str) -> dict[str, Any]:
    shown = summaries.get(ref)
    v = shown.version
    rounds = reg.history(v)
    numbers = [x.number for x in reg.versions(v.name)]
    previous = [n for n in numbers if n < v.number]
    info = shown.to_json()  # the template's data and the page's JSON twin: `show --json` and more
    info["aliases"] = sorted(a for a, n in reg.aliases(v.name).items() if n == v.number)
    info["versions_of_name"] = numbers
    info["previous"] = f"{v.name}@{previous[-1]}" if previous else None
    # A derived version's lineage, nearest first, as `tokreg show` words it (none for a version
    # trained or imported from nothing: its one entry says only that).
    chain = shown.lineage
    info["lineage_lines"] = (
        [{"ref": e.ref, "line": lineage_line(e.lineage)} for e in chain]
        if any(e.lineage.parent is not None for e in chain)
        else []
    )
    info["rounds"] = [r.to_json() for r in rounds]
    info["curve"] = (
        charts.line_chart(
            [r.round for r in rounds],
            {"log-likelihood": [r.log_likelihood for r in rounds], "vocab size": [r.vocab_size for r in rounds]},
            x_label="round",
        )
        if rounds
        else None
    )
    info["kind_bars"] = charts.bars(shown.summary.tokens_by_kind)
    run = shown.training_run
    info["timing_bars"] = (
        charts.bars(
            {
                "counting": run["count_seconds"],
                "training": run["train_seconds"],
                "reading the corpus, building the result": max(
                    0.0, run["total_seconds"] - run["count_seconds"] - run["train_seconds"]
                ),
            }
        )
        if run
        else []
    )
    info["samples"] = _samples(reg, v)
    info["evaluations"] = _evaluations(reg, v)
    info["datasets"] = _datasets(reg, v)
    return info


def _datasets(reg: Registry, v: VersionInfo) -> list[dict[str, Any]]:
    """The token datasets this version's content made (`tokreg tokenize`, matched by hash)."""
    return [
        {**r, "recorded_at": r["recorded_at"].isoformat(timespec="seconds")}
        for r in reg.datasets(v.content_hash)
        if r["tokenizer_hash"] == v.content_hash
    ]


def _evaluations(reg: Registry, v: VersionInfo) -> dict[str, Any]:
    """The stored results of `tokreg eval` (one row per text, a column per metric) and a bar per
    text for compression (bytes per token), so versions can be compared at a glance."""
    rows = reg.evaluations(v)
    measured = [r for r in rows if "bytes_per_token" in r.metrics]
    columns = [{"name": m.name, "label": m.label, "percent": m.percent} for m in METRICS if m.name != "tokens"]
    return {
        "rows": [r.to_json() for r in rows],
        "columns": columns,
        "compression": charts.bars(
            {
                f"{r.text}"
                + (f" ({r.language})" if r.language else "")
                # fewer tokens that lose text are no better compression: say so beside the bar
                + (" — lossy" if any(r.metrics.get(m, 0.0) > 0 for m in LOSS) else ""): r.metrics["bytes_per_token"]
                for r in measured
            }
        ),
        "premiums": [r.to_json() for r in rows if "premium" in r.metrics or "premium_spread" in r.metrics],
    }


async def page(request: Request) -> Response:
    state = request.app.state
    data = await blocking(details, state.reg, state.summaries, request.path_params["ref"])
    return respond(request, "version.html", data)


routes = [Route("/v/{ref}", page)]
