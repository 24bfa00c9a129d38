"""A tiny text grammar for the second development set: alternations, fields and shared value generators.

A template is plain text with ``{a|b|c}`` (one alternative, chosen at random) and ``{name}`` (a field of the
thread, the persona or the fact being stated); ``{{`` and ``}}`` are literal braces (code snippets). Expansion is
deterministic for a given ``random.Random`` state.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from datetime import date, timedelta

_BRACE = re.compile(r"\{([^{}]*)\}")
_OPEN, _CLOSE = "\x00", "\x01"


def expand(template: str, rng: random.Random, fields: Mapping[str, str]) -> str:
    """Expand alternations and fields (see the module docstring); an unknown field is an error."""
    text = template.replace("{{", _OPEN).replace("}}", _CLOSE)

    def one(match: re.Match[str]) -> str:
        body = str(match.group(1))
        if "|" in body or body == "":
            return rng.choice(body.split("|"))
        if body not in fields:
            raise KeyError(f"template field {body!r} is not defined in {template!r}")
        return fields[body]

    # Alternatives may hold fields ("{the {service} team|{lead}}" is not supported: one level only), so the
    # fields inside a chosen alternative are expanded by a second pass.
    for _ in range(2):
        text = _BRACE.sub(one, text)
    return text.replace(_OPEN, "{").replace(_CLOSE, "}")


def pick(rng: random.Random, options: Sequence[str], fields: Mapping[str, str]) -> str:
    """One template of ``options``, expanded."""
    return expand(rng.choice(list(options)), rng, fields)


def sentence_case(text: str) -> str:
    """The first letter upper-cased (the rest as written)."""
    return text[:1].upper() + text[1:] if text else text


PEOPLE = (
    "Priya",
    "Marcus",
    "Aisha",
    "Tomasz",
    "Lena",
    "Diego",
    "Mei",
    "Oluwaseun",
    "Hannah",
    "Rafael",
    "Yuki",
    "Ingrid",
    "Kwame",
    "Sofia",
    "Arjun",
    "Beatriz",
    "Connor",
    "Fatima",
    "Gustavo",
    "Hyejin",
    "Ivan",
    "Jasmine",
    "Kenji",
    "Leila",
    "Mateo",
    "Nadia",
    "Owen",
    "Paula",
    "Quentin",
    "Rosa",
    "Samir",
    "Tessa",
    "Uma",
    "Viktor",
    "Wen",
    "Ximena",
    "Yusuf",
    "Zara",
    "Elliot",
    "Greta",
)
CITIES = (
    "Lisbon",
    "Porto",
    "Kyoto",
    "Osaka",
    "Vancouver",
    "Montreal",
    "Edinburgh",
    "Copenhagen",
    "Valencia",
    "Seville",
    "Prague",
    "Vienna",
    "Buenos Aires",
    "Mexico City",
    "Cape Town",
    "Marrakesh",
    "Hanoi",
    "Seoul",
    "Tallinn",
    "Reykjavik",
    "Ljubljana",
    "Bologna",
    "Naples",
    "Krakow",
)
STREETS = (
    "Larkin Street",
    "Alder Avenue",
    "Harbor Road",
    "Quarry Lane",
    "Mercer Street",
    "Linden Way",
    "Foundry Row",
    "Bishop Street",
    "Willow Court",
    "Cannery Road",
    "Orchard Place",
    "Ferris Avenue",
    "Tanner Street",
    "Juniper Drive",
    "Beacon Hill Road",
    "Garnet Street",
    "Elm Terrace",
    "Market Square",
)
MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def say_date(day: date, rng: random.Random) -> str:
    """A date as people write it in chat: ``March 14``, ``Friday, March 14`` or ``the 14th of March``."""
    month = MONTHS[day.month - 1]
    suffix = "th" if 11 <= day.day <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day.day % 10, "th")
    return rng.choice(
        [f"{month} {day.day}", f"{WEEKDAYS[day.weekday()]}, {month} {day.day}", f"the {day.day}{suffix} of {month}"]
    )


def later_day(start: date, rng: random.Random, low: int, high: int) -> date:
    """A day ``low``..``high`` days after ``start``."""
    return start + timedelta(days=rng.randint(low, high))


def money(rng: random.Random, low: int, high: int, step: int, currency: str = "$") -> str:
    """An amount such as ``$1,240``."""
    return f"{currency}{rng.randrange(low, high, step):,}"


def version(rng: random.Random) -> str:
    """A version such as ``2.14.3``."""
    return f"{rng.randint(1, 6)}.{rng.randint(0, 24)}.{rng.randint(0, 9)}"


def bumped(old: str, rng: random.Random) -> str:
    """A later version than ``old`` (a minor or patch bump)."""
    major, minor, patch = (int(p) for p in old.split("."))
    return f"{major}.{minor + 1}.0" if rng.random() < 0.6 else f"{major}.{minor}.{patch + rng.randint(1, 4)}"


def clock(rng: random.Random) -> str:
    """A time of day such as ``9:40 am``."""
    hour, minute = rng.randint(7, 20), rng.choice((0, 10, 15, 20, 30, 40, 45, 50))
    return f"{(hour - 1) % 12 + 1}:{minute:02d} {'am' if hour < 12 else 'pm'}"


def code(rng: random.Random, prefix: str, digits: int = 4) -> str:
    """An identifier such as ``OPS-4821``."""
    return f"{prefix}-{rng.randint(10 ** (digits - 1), 10**digits - 1)}"
