"""Personal context: requests that depend on the user get what the user said about themselves, across sessions.

The generated users of ``benchmarks.data.personal`` (eight, three dated sessions each, weeks apart) are played
through each path of the across-sessions guide as it writes them (``delivery.PATHS``), each session a new agent over
the user's SQLite file; then every request is asked in a new session a day later (clean mode: what the request's
turn archived is forgotten before the next one). A request scores the share of the phrases it needs that its
answering call received; a changed statement scores "latest first" when the new phrase comes before the older one
(or the older is absent). Requests about the world and unrelated prompts price what a memory adds when nothing
about the user is needed. The chat model is scripted (it answers nothing): delivery, not answers.
"""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path
from typing import Any

from benchmarks import delivery
from benchmarks.common import Section, Settings, table
from benchmarks.data import unrelated
from benchmarks.data.personal import SHAPES, USERS, WORLD, Said, User
from benchmarks.delivery import DAY, MINUTE, PATHS, Clock, Where

WINDOWS = (8_000, 200_000)
"""Model windows measured, in tokens (a small and a large model)."""
START = 1_767_225_600.0
"""2026-01-01 UTC: the first session; the others follow three weeks apart."""
GAP = 21 * DAY


def _play(build: delivery.Builder, where: Where, user: User, window: int) -> None:
    for number, session in enumerate(user.sessions):
        script = delivery.Script()
        clock = Clock(START + number * GAP)
        opened = build(delivery.scripted_model(window, script), where, clock)
        script.agent = opened.agent
        try:
            for turn, said in enumerate(session):
                clock.now = START + number * GAP + turn * MINUTE
                script.reply = said.reply
                opened.agent(_prompt(said))
            opened.memory.embed_pending()
        finally:
            opened.close()


def _prompt(said: Said) -> Any:
    if said.asked is None:
        return said.user
    return [
        {"role": "assistant", "content": [{"text": said.asked}]},
        {"role": "user", "content": [{"text": said.user}]},
    ]


def _latest_first(text: str, latest: str, older: str) -> bool:
    new, old = text.find(latest), text.find(older)
    return new >= 0 and (old < 0 or new < old)


def measure(
    path: str, users: tuple[User, ...], window: int, folder: Path, prompts: list[unrelated.Prompt]
) -> dict[str, Any]:
    build = PATHS[path]
    requests: list[dict[str, Any]] = []
    world: list[float] = []
    unrelated_tokens: list[float] = []
    for user in users:
        where = Where(user.name, path=folder / f"{path.replace(' ', '-')}-{window}-{user.name}.sqlite3")
        _play(build, where, user, window)
        clock = Clock(START + len(user.sessions) * GAP + DAY)
        for request in user.requests:
            asked = delivery.ask(build, where, request.text, window, clock, keep=False)
            row = {
                "user": user.name,
                "shape": request.shape,
                "delivered": delivery.share_found(request.needs, asked.received),
                "tokens": asked.tokens,
                "failed": asked.failed,
            }
            if request.older is not None:
                row["latest_first"] = _latest_first(asked.received, request.needs[0], request.older)
            requests.append(row)
        world += [delivery.ask(build, where, text, window, clock, keep=False).tokens for text in WORLD]
        unrelated_tokens += [delivery.ask(build, where, p.text, window, clock, keep=False).tokens for p in prompts]
    return {"requests": requests, "world": world, "unrelated": unrelated_tokens}


def run(settings: Settings) -> dict[str, Any]:
    users = USERS[:2] if settings.quick else USERS
    prompts = unrelated.load(4 if settings.quick else 24)
    windows = WINDOWS[-1:] if settings.quick else WINDOWS
    rows = []
    with tempfile.TemporaryDirectory(prefix="ssm-personal-") as name:
        for path in PATHS:
            for window in windows:
                rows.append({"path": path, "window": window, **measure(path, users, window, Path(name), prompts)})
    return {"rows": rows, "users": len(users), "requests": sum(len(u.requests) for u in users), "prompts": len(prompts)}


def _mean(values: list[float]) -> float:
    return statistics.fmean(values) if values else 0.0


def render(data: dict[str, Any], output: Path) -> str:
    header = ["path", "window", "delivered", *SHAPES, "latest first", "tokens/call", "world tokens", "unrelated tokens"]
    lines = []
    for row in data["rows"]:
        requests = row["requests"]
        by_shape = {s: [r["delivered"] for r in requests if r["shape"] == s] for s in SHAPES}
        changed = [r["latest_first"] for r in requests if "latest_first" in r]
        lines.append([
            row["path"], f"{row['window']:,}", f"{100 * _mean([r['delivered'] for r in requests]):.1f} %",
            *(f"{100 * _mean(v):.0f} % ({len(v)})" if v else "-" for v in by_shape.values()),
            f"{sum(changed)} of {len(changed)}", f"{_mean([r['tokens'] for r in requests]):.0f}",
            f"{_mean(row['world']):.1f} (max {max(row['world'], default=0):.0f})",
            f"{_mean(row['unrelated']):.1f} (max {max(row['unrelated'], default=0):.0f})",
        ])  # fmt: skip
    return "\n".join([
        f"{data['users']} generated users ({data['requests']} requests that depend on what they said about themselves, "
        f"{len(WORLD)} requests about the world and {data['prompts']} unrelated prompts each), played across three dated "
        "sessions through each path of the across-sessions guide as it writes them; every request asked in a new "
        "session. *Delivered*: the share of the phrases a request needs found in its answering call (per shape, "
        "with the number of requests); *latest first*: changed statements whose new phrase came before the older "
        "one; tokens the memory added per call. Scripted chat model: delivery, not answers "
        "(`benchmarks/personal.py`, the set in `benchmarks/data/personal.py`).",
        "",
        table(header, lines),
    ])  # fmt: skip


SECTION = Section("personal", "Personal context across sessions", run, render)
