"""The version page (`/v/REF`): what `tokreg show` prints, drawn: config, training run (corpus
files, timings), token counts by kind, lossless or not, the training curve as a chart, the
first merges (or the most likely pieces), and the stored samples as coloured tokens.

The page is a list of sections, one template each under templates/version/; the stored results
of `tokreg eval` are one of them."""

from __future__ import annotations

from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ...evaluation.metrics import METRICS
from ...registry import Registry
from .. import charts, show
from ..http import blocking, respond
from ..summaries import Summaries


def _samples(reg: Registry, ref: str) -> list[dict[str, Any]]:
    out = reg.samples(ref)
    for s in out:
        s["tokens"] = [{"id": i, "segments": show.segments(b)} for i, b in zip(s["ids"], s.pop("tokens"))]
    return out


def details(reg: Registry, summaries: Summaries, ref: str) -> dict[str, Any]:
    info = summaries.get(ref)
    rounds = reg.history(info["ref"])
    versions = reg.versions(info["name"])
    numbers = [v.number for v in versions]
    previous = [n for n in numbers if n < info["version"]]
    info["aliases"] = sorted(a for a, n in reg.aliases(info["name"]).items() if n == info["version"])
    info["versions_of_name"] = numbers
    info["previous"] = f"{info['name']}@{previous[-1]}" if previous else None
    info["rounds"] = rounds
    info["curve"] = (
        charts.line_chart(
            [r["round"] for r in rounds],
            {"log-likelihood": [r["log_likelihood"] for r in rounds], "vocab size": [r["vocab_size"] for r in rounds]},
            x_label="round",
        )
        if rounds
        else None
    )
    info["kind_bars"] = charts.bars(info["tokens_by_kind"])
    run = info.get("training_run")
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
    info["samples"] = _samples(reg, info["ref"])
    info["evaluations"] = _evaluations(reg, info["ref"])
    return info


def _label(row: dict[str, Any]) -> str:
    return f"{row['text']} ({row['language']})" if row["language"] else str(row["text"])


def _evaluations(reg: Registry, ref: str) -> dict[str, Any]:
    """The stored results of `tokreg eval` (one row per text, a column per metric) and a bar per
    text for compression (bytes per token), so versions can be compared at a glance."""
    rows = reg.evaluations(ref)
    measured = [r for r in rows if "bytes_per_token" in r["metrics"]]
    columns = [{"name": m.name, "label": m.label, "percent": m.percent} for m in METRICS if m.name != "tokens"]
    return {
        "rows": rows,
        "columns": columns,
        "compression": charts.bars(
            {
                f"{r['text']}" + (f" ({r['language']})" if r["language"] else ""): r["metrics"]["bytes_per_token"]
                for r in measured
            }
        ),
        "premiums": [r for r in rows if "premium" in r["metrics"] or "premium_spread" in r["metrics"]],
    }


async def page(request: Request) -> Response:
    state = request.app.state
    data = await blocking(details, state.reg, state.summaries, request.path_params["ref"])
    return respond(request, "version.html", data)


routes = [Route("/v/{ref}", page)]
