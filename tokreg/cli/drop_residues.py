"""`tokreg drop-residues`: a byte-level BPE version without its residues, every other id kept
(one `Registry.drop_residues` call; versions/no_residues.py)."""

from __future__ import annotations

from typing import Optional

import click

from .common import db_option, json_option, open_registry
from .derived import echo_created


@click.command()
@click.argument("base")
@click.argument("name")
@click.option(
    "--text",
    "text",
    type=click.Path(dir_okay=False),
    required=True,
    metavar="FILE",
    help="The text whose residues are dropped (e.g. the training corpus; measure on held-out text after).",
)
@click.option("--below", type=float, metavar="R", help="A residue: F1/(F1+F2) below R [default: 0.1].")
@click.option("--min-seen", type=int, metavar="N", help="Judge only tokens formed at least N times [default: 10].")
@click.option(
    "--budget",
    metavar="PCT",
    help="Instead: FILE is BASE's training text; make BPE N + k on it less k residues, k the largest "
    "whose tokens per byte on a check part of FILE (every 5th block, trained without it) stay within "
    "PCT of plain BPE's (e.g. 0.8%).",
)
@click.option(
    "--budget-version",
    type=click.Choice(["all", "checked"]),
    default="all",
    show_default=True,
    help="With --budget: 'all' trains BPE N + k on all of FILE (BASE's ids kept); 'checked' keeps the "
    "version the check part measured (BPE N + k of the fit part: BASE's ids not kept).",
)
@click.option(
    "--fewer",
    metavar="X",
    help="With --budget: the folds rule. FILE's blocks are dealt into 8 parts; for a k, each quarter "
    "(two parts) is measured with the k tokens judged on the other six removed; k is the smallest "
    "whose every quarter has X times fewer residues (e.g. 5) within PCT (e.g. 1%) of plain BPE's "
    "tokens per byte, else the largest within PCT. BASE's ids kept.",
)
@click.option(
    "--folds",
    type=click.Choice(["trained", "unseen"]),
    default="trained",
    show_default=True,
    help="With --fewer: how a fold is measured. 'trained': by BPE trained on all of FILE (the fold "
    "included); 'unseen': by BPE N + N/4 trained on FILE without the fold (cross-fitted, as held-out "
    "text is), and k is midway between the fewest with X times fewer residues and the most within "
    "PCT, both on average over the folds.",
)
@click.option(
    "--refill",
    type=float,
    default=0.0,
    metavar="R",
    help="With --folds unseen: learn round(R k) of the k freed slots again after the removals "
    "(0 < R <= 1; 0: off): BPE N + k - r less the k judged tokens (PickyBPE's removal, then) r new "
    "merges at new ids learned on FILE as that version segments it. Every k is measured so on the "
    "unseen folds. A PickyBPE version; BASE's ids kept.",
)
@click.option(
    "--rejudge",
    type=int,
    default=0,
    metavar="ROUNDS",
    help="With --refill: judge the refill's own residues, up to ROUNDS rounds (0: off; at most 8). A round "
    "traces the refilled version and the one before the refill on the judge's parts; each new token in more "
    "unions of two parts a residue of than before, and each new token made from an older token whose count "
    "rose (its merge consumed it), is refused, and the refill is learned again with every refused token "
    "barred (the next best pairs instead); it stops early at a round that refuses none. Every k is measured "
    "so on the unseen folds.",
)
@click.option(
    "--threads", type=int, default=0, show_default=True, help="Threads (0: one per core); never changes the result."
)
@click.option("--message", "-m", help="A note stored with the version.")
@json_option
@db_option
def drop_residues(
    base: str,
    name: str,
    text: str,
    below: Optional[float],
    min_seen: Optional[int],
    budget: Optional[str],
    budget_version: str,
    fewer: Optional[str],
    folds: str,
    refill: float,
    rejudge: int,
    threads: int,
    message: Optional[str],
    as_json: bool,
    db: Optional[str],
) -> None:
    """Record BASE (byte-level BPE) without its residues on FILE as the next version of NAME.

    A residue (LiteToken, Sun et al. 2026, arXiv 2602.04706; `tokreg audit --residues`) is a
    token the merge loop forms on FILE but seldom emits. The new version removes them as PickyBPE
    removes a token (Chizhov et al. 2024, arXiv 2409.04599): where BASE would emit one, it emits
    the token's parents (their own parents if removed too). Residues stay steps of the merge
    loop, so every other id is kept and every line that emitted no residue encodes as before;
    the removed ids are left as holes (kind 'removed'), not renumbered, so a model or dataset
    made with BASE still matches. Recorded in the lineage (`tokreg show`, `tokreg log`).
    Exports to tokenizer.json and .tiktoken are refused (they cannot express it).

    With --budget PCT, how many residues leave is chosen on FILE alone, BASE's training text
    (plain byte-level BPE of N tokens): FILE is cut into blocks of 64 Ki characters (to a line
    end); every 5th is the check part, the rest the fit part. BPE is trained on the fit part;
    for a k, BPE N + k less the k tokens that are residues in most of the fit part's 4 parts
    (blocks in turn) per F1 is measured on the check part; k doubles from N/128 (to at most
    N/4) while its tokens per byte stay within PCT of plain BPE N's there, then the gap to the
    first k over it is halved down to N/1024. The
    version is BPE N + k trained on all of FILE less k tokens judged on FILE's 4 parts: every
    id of BASE kept, k new ones, k holes. The margin, the split, k and every k tried are
    recorded in the lineage. After LiteToken's residues and PickyBPE's removal (Chizhov et al.,
    arXiv 2409.04599) with a validation budget; held-out text is never read.

    With --budget PCT --fewer X, the folds rule: FILE's blocks are dealt into 8 parts; BPE N + N/4
    is trained on all of FILE once (each N + k its prefix). A token's evidence is the number of
    unions of two parts (each a quarter of FILE) in which it is a residue, per its F1: the judge
    removes the k of most evidence per F1 (ties: lowest id). For a k, each quarter (parts q and
    q + 4) is measured with the k tokens judged on the other six removed: its tokens per byte
    against plain BPE N's there, and how many times fewer residues it has. k is the smallest
    whose every quarter has X times fewer residues within PCT (the worst fold, not the mean, is
    the safety term), found as above by doubling from N/128 then halving; if no such k is found,
    the largest k within PCT on every quarter, and the lineage says the goal was not met. The
    version: BPE N + k on all of FILE less the k judged on all 8 parts; every id of BASE kept.

    With --folds unseen (cross-fitted folds), each quarter is measured as held-out text is: by
    BPE N + N/4 trained on FILE without that quarter (4 extra trainings), judged on the six parts
    it was trained on. The folds of a version trained on them underestimate the cost and the
    residues left on unseen text at larger vocabularies. Each quarter estimates what held-out text
    of its size sees, their mean the estimate: k_hi is the largest k found whose mean cost stays
    within PCT (doubling from N/32, then halving to N/256); k_lo the smallest k found below it with
    X times fewer residues on average; k is their midpoint, the same slack to both, else k_hi with
    the goal recorded as not met.

    With --refill R (and --folds unseen), the removed tokens' slots are learned again after the
    removal instead of before it (LiteToken's residues, arXiv 2602.04706; PickyBPE's removal
    events, arXiv 2409.04599): for a k, r = round(R k); BPE N + k - r less the k tokens the judge
    picks on it (each removed right after the last merge: its occurrences split into its
    parents), then r merges learned at new ids on the text as that version segments it (the
    same merge loop and tie rule; no new token spells a removed one). The encoder replays the
    merges, the removals and the new merges in that order; every id of BASE is kept. Every k of
    the search is measured so on the unseen folds (the refill learned on the six parts). A small
    share moves the cost of a reduction down (R = 0.1 at 32k; README); a large one makes new
    residues of its own.

    With --rejudge ROUNDS (and --refill), the refill's own residues are judged as the removed ones
    were (LiteToken's measure on unions of two of FILE's 8 parts): after the refill, a new token
    that is a residue of more unions than before the refill, or made from an older token whose
    count of such unions rose (the new merge consumed it), is refused, and the r merges are
    learned again from the removals on with every refused token barred (the next best pairs
    instead), up to ROUNDS times, stopping at a round that refuses none (the last round's
    refill is kept as it is). BASE's ids and the k removals are unchanged. Every k of the search
    is measured so (judged, refilled and rejudged on the six parts of each unseen fold); each
    round's count is recorded in the lineage for every k and fold. R = 0.2 with 3 rounds moved
    the curve on development draws (README, "Rejudge").

    \b
    Example:
        tokreg drop-residues gpt-mini@1 gpt-mini --text corpus.txt
        tokreg audit gpt-mini@2 --residues --text held-out.txt
        tokreg train kern kernel.txt --vocab-size 8000
        tokreg drop-residues kern@1 kern --text kernel.txt --budget 0.8%
        tokreg drop-residues kern@1 kern --text kernel.txt --budget 1% --fewer 5
        tokreg drop-residues kern@1 kern --text kernel.txt --budget 1% --fewer 5 --folds unseen
        tokreg drop-residues kern@1 kern --text kernel.txt --budget 1% --fewer 5 --folds unseen --refill 0.1
        tokreg drop-residues kern@1 kern --text kernel.txt --budget 1% --fewer 5 --folds unseen --refill 0.2 --rejudge 3
    """
    from ..versions.residue_budget import parse_fewer, parse_margin  # on use: the CLI loads commands lazily

    margin = None if budget is None else parse_margin(budget)
    goal = None if fewer is None else parse_fewer(fewer)
    reg = open_registry(db)
    v = reg.drop_residues(
        base,
        name,
        text,
        below=below,
        min_seen=min_seen,
        budget=margin,
        budget_version=budget_version,
        fewer=goal,
        folds=folds,
        refill=refill,
        rejudge=rejudge,
        threads=threads,
        message=message,
    )
    echo_created(reg, v, as_json)
