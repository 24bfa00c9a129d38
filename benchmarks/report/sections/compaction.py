"""Tokens sent per turn in the Strands loop: each conversation manager over the same scripted conversation."""

from __future__ import annotations

from benchmarks.report.figures import TOKENS, Add, Figure, Part
from benchmarks.results import LoopResult, Results


def _loop(add: Add, loop: LoopResult) -> None:
    rows = loop["rows"]
    add("## Tokens sent per turn in the Strands loop")
    add("")
    add(
        f"`benchmarks/measure/compaction.py`: the same conversation of {loop['turns']} user turns through a real Strands "
        "`Agent` per manager: filler turns, eight facts planted early (one changed later), recall questions at the "
        "end. Tokens are characters / 4 of each chat request."
    )
    add("")
    add(
        "**What is scripted**: the chat model (a fixed short reply; it overflows above 3,000 characters of input, "
        "which drives Strands' real overflow recovery) and, in every row not named after a model, the summarizer, "
        "identically for every summarizing manager: it recognises a planted fact by its form (`Note: <key> is <value>.`), the structured summarizer "
        "keeps every fact (the zero-loss instruction assumed obeyed) and the prose summarizer keeps at most the 4 "
        'most recent facts (a prose summary is bounded; the lossless-prose row lifts that bound). So "facts '
        "reached\" in the summary rows measures the summary format under these assumptions, not a model's quality. "
        "**Not scripted**: Strands' agent loop and managers, our managers, the archive and the hook's retrieval "
        "(bundled MiniLM model) in the rows with the hook."
    )
    add("")
    local = [r for r in rows if r.get("summarizer")]
    if local:
        seconds = sum(r.get("seconds", 0.0) for r in local)
        add(
            f"**Real summaries**: the rows named after {local[0]['summarizer']} run the same conversation with the "
            "summaries written by that model (the demo's SmolLM2-135M-Instruct, Q4_1 GGUF, llama.cpp, greedy, at most "
            "160 tokens per summary), with the default summarization prompt (Strands'; our text manager passes the "
            "same one on); only the chat replies are scripted. A 135M model is far below what production "
            "summarization uses: these rows show a poor summary, not how good summaries get. They took "
            f"{seconds:.0f} s in all. The structured managers are not run with it: asked for the JSON state (through "
            "a JSON-schema grammar), the model ran into the 1,024-token bound again and again when this was tried "
            "(unterminated JSON, a failed compaction and some 13 s each time)."
        )
    else:
        add(
            "**Real summaries** (the same rows with SmolLM2-135M writing the summaries) were not run: "
            f"{loop.get('local_model_missing') or 'the local model is not installed'}."
        )
    add("")
    add(
        "| manager | tokens/turn mean | max | last | facts reached | stale value sent | without its update | overflows | summaries | archived | failed turns | scripted |"
    )
    add("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        add(
            f"| {r['manager']} | {r['mean_tokens']:.0f} | {r['max_tokens']} | {r['last_tokens']} | "
            f"{r['facts_reached']} of {r['facts']} | {'yes' if r['stale_value_sent'] else 'no'} | "
            f"{'yes' if r.get('stale_without_update') else 'no'} | {r['overflows']} | "
            f"{r['summaries']} | {r['archived']} | {r.get('failed_turns', 0)} | {r['scripted']} |"
        )
    add("")
    hooked = [r for r in rows if r.get("found_not_sent") is not None]
    if hooked:
        add(
            "In the rows with the hook, recall turns whose planted value the hook's search found (in a window it "
            "injected or left out) but that did not reach the model, and recall turns retried with less injected "
            "context after an overflow: "
            + "; ".join(
                f"{r['manager']}: {r['found_not_sent']} and {r['retried_recalls']} of {r['facts']}" for r in hooked
            )
            + ". The window (3,000 characters) is small next to the injected block (up to 800): once the recent "
            "turns fill it, the block is cut down or left out for the call."
        )
        add("")
    failed = [r for r in rows if r.get("first_failure")]
    for r in failed:
        add(f"- {r['manager']}: {r['failed_turns']} turns failed; the first: `{r['first_failure']}`")
    if failed:
        add("")
    add("![tokens](tokens.png)")
    add("")


def build(results: Results) -> Part | None:
    """The section, or None when the measurement did not run."""
    loop = results.get("loop")
    if not loop:
        return None
    lines: list[str] = []
    _loop(lines.append, loop)
    return Part(lines, (Figure(TOKENS, loop),))
