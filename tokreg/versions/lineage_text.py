"""A version's lineage in one line of text: where it came from and what its derivation recorded
(`extended from cl100k_base@1 (+5,000 tokens, ids kept)`), as `tokreg show`/`log` print it and
the version page of `tokreg serve` shows it."""

from __future__ import annotations

from ..data import Lineage


def lineage_line(line: Lineage) -> str:
    """`extended from cl100k_base@1 (+5,000 tokens, ids kept)` and the like."""
    d = line.details or {}
    parent = line.parent
    what = line.derivation.replace("_", " ")
    if parent is None:
        return what
    gone = "" if line.parent_exists else ", since removed"
    notes = []
    if "added" in d:
        notes.append(f"+{d['added']:,} tokens")
    if "removed" in d:
        notes.append(f"-{d['removed']:,} residues, left as holes")
    if "ids_preserved" in d:
        notes.append("ids kept" if d["ids_preserved"] else "ids NOT kept")
    b = d.get("budget")
    reached = (
        (f"{b['fewer']:g}x fewer residues" if b["goal_met"] else f"{b['fewer']:g}x fewer NOT reached")
        if b and "goal_met" in b
        else ""
    )
    if b and b.get("folds") == "unseen":
        notes.append(
            f"k = {b['k']:,} chosen by unseen folds of {d['text']['name']} (each measured by BPE trained without it): "
            + reached
            + f" within {100 * b['margin']:g}% on average (mean {100 * b['check_cost']:+.2f}%, "
            f"{b['mean_fewer']:.2f}x; worst {100 * b['worst_cost']:+.2f}%, {b['fold_fewer']:.2f}x)"
        )
        if b.get("refill"):
            notes.append(f"{b['refill']['r']:,} of the freed slots learned after the removals (refill)")
            rj = b["refill"].get("rejudge")
            if rj:
                notes.append(
                    f"the refill's own residues judged in up to {rj['rounds']} rounds (tokens refused per round: "
                    + ", ".join(f"{x:,}" for x in rj["refused"])
                    + "), the refill learned again without them"
                )
    elif b and b.get("rule") == "folds":
        notes.append(
            f"k = {b['k']:,} chosen by folds of {d['text']['name']}: "
            + reached
            + f" within {100 * b['margin']:g}% on every fold (worst {100 * b['check_cost']:+.2f}%, "
            f"{b['fold_fewer']:.2f}x)"
        )
    elif b:
        notes.append(
            f"k = {b['k']:,} chosen within {100 * b['margin']:g}% tokens per byte on a check part of "
            f"{d['text']['name']} ({100 * b['check_cost']:+.2f}% there)"
            + (", the version checked: trained on its fit part" if b.get("version") == "checked" else "")
        )
    if d.get("specials_renumbered"):
        notes.append("specials renumbered")
    for key in ("keep_text", "check_text"):
        ct = d.get(key)
        if ct:
            notes.append(f"{ct['changed_lines']:,} of {ct['lines']:,} lines of {ct['name']} encode differently")
    return f"{what} from {parent}{gone}" + (f" ({', '.join(notes)})" if notes else "")
