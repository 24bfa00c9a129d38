"""Time in a question: the span of time a question names, read against "now". A pure function, no I/O.

"What did I say yesterday?", "last weekend", "in May", "three weeks ago", "on Tuesday", "this month": each names a
span of days, which the search favours (``SemanticMemory.search``): messages said within it rank above others that
match as well. Days are UTC days (the dates the block shows are UTC); "now" is the memory's clock. A question that
names no time, or a time this reader does not know ("two weeks before the trip"), has no span, and the search is
as it would be without this module.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

__all__ = ["time_span"]

_NUMBERS = {w: n for n, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())}
_NUMBERS.update({"a": 1, "an": 1, "couple of": 2, "few": 3, "several": 3})
_MONTHS = {
    name: number
    for number, names in enumerate(
        [("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
         ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"),
         ("november", "nov"), ("december", "dec")],
        start=1,
    )
    for name in names
}  # fmt: skip
_WEEKDAYS = {d: i for i, d in enumerate("monday tuesday wednesday thursday friday saturday sunday".split())}
_UNIT = r"(?P<unit>day|week|month|year)s?"
_COUNT = r"(?P<count>\d{1,3}|a couple of|an?|few|several|" + "|".join(k for k in _NUMBERS if " " not in k) + ")"
_AGO = re.compile(rf"\b{_COUNT}\s+{_UNIT}\s+ago\b", re.I)
_LAST = re.compile(
    r"\b(?P<which>last|this|past|previous)\s+(?P<what>week(?:end)?|month|year|" + "|".join(_WEEKDAYS) + r")\b", re.I
)
_MONTH = re.compile(r"\b(?:in|during|since|of)\s+(?P<month>" + "|".join(_MONTHS) + r")\b(?:\s+(?P<year>\d{4}))?", re.I)
_DATE = re.compile(
    r"\bon\s+(?:(?P<day1>\d{1,2})(?:st|nd|rd|th)?\s+(?P<month1>"
    + "|".join(_MONTHS)
    + r")|(?P<month2>"
    + "|".join(_MONTHS)
    + r")\s+(?P<day2>\d{1,2})(?:st|nd|rd|th)?)\b(?:,?\s+(?P<year>\d{4}))?",
    re.I,
)
_ON_WEEKDAY = re.compile(r"\bon\s+(?P<day>" + "|".join(_WEEKDAYS) + r")\b", re.I)
_SIMPLE = {"yesterday": (-1, 0), "today": (0, 1), "tonight": (0, 1), "this morning": (0, 1)}
_SIMPLE_RE = re.compile(r"\b(yesterday|today|tonight|this morning|the day before yesterday)\b", re.I)


def _midnight(moment: datetime) -> datetime:
    return moment.replace(hour=0, minute=0, second=0, microsecond=0)


def _month_span(year: int, month: int) -> tuple[datetime, datetime]:
    start = datetime(year, month, 1, tzinfo=timezone.utc)
    end = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=timezone.utc)
    return start, end


def time_span(question: str, now: float) -> tuple[float, float] | None:
    """The span ``(since, until)`` in seconds since the epoch that ``question`` names, or None.

    Args:
        question: The user's question.
        now: What "now" is, in seconds since the epoch.

    Returns:
        The first span the question names, ``since < until``, never after ``now``'s day; None when it names none.
    """
    try:
        today = _midnight(datetime.fromtimestamp(now, tz=timezone.utc))
    except (OverflowError, OSError, ValueError):
        return None
    span = _span(question, today)
    if span is None:
        return None
    start, end = span
    end = min(end, today + timedelta(days=1))
    return (start.timestamp(), end.timestamp()) if start < end else None


def _span(question: str, today: datetime) -> tuple[datetime, datetime] | None:
    if found := _SIMPLE_RE.search(question):
        word = found.group(1).lower()
        first, last = (-2, -1) if word == "the day before yesterday" else _SIMPLE[word]
        return today + timedelta(days=first), today + timedelta(days=last)
    if found := _AGO.search(question):
        count = found.group("count").lower()
        number = int(count) if count.isdigit() else _NUMBERS.get(count, 1)
        unit = found.group("unit").lower()
        days = {"day": 1, "week": 7, "month": 30, "year": 365}[unit] * number
        slack = {"day": 1, "week": 4, "month": 15, "year": 120}[unit]
        return today - timedelta(days=days + slack), today - timedelta(days=max(days - slack, 0) - 1)
    if found := _LAST.search(question):
        which, what = found.group("which").lower(), found.group("what").lower()
        monday = today - timedelta(days=today.weekday())
        if what in ("week", "weekend"):
            start = monday if which == "this" else monday - timedelta(days=7)
            if what == "weekend":
                start += timedelta(days=5)
                return start, start + timedelta(days=2)
            return start, start + timedelta(days=7)
        if what == "month":
            year, month = today.year, today.month
            if which != "this":
                year, month = (year - 1, 12) if month == 1 else (year, month - 1)
            return _month_span(year, month)
        if what == "year":
            year = today.year if which == "this" else today.year - 1
            return datetime(year, 1, 1, tzinfo=timezone.utc), datetime(year + 1, 1, 1, tzinfo=timezone.utc)
        back = (today.weekday() - _WEEKDAYS[what]) % 7 or 7
        day = today - timedelta(days=back)
        return day, day + timedelta(days=1)
    if found := _DATE.search(question):
        month = _MONTHS[(found.group("month1") or found.group("month2")).lower()]
        date = int(found.group("day1") or found.group("day2"))
        year = int(found.group("year")) if found.group("year") else today.year
        try:
            start = datetime(year, month, date, tzinfo=timezone.utc)
        except ValueError:
            return None
        if not found.group("year") and start > today:
            start = start.replace(year=year - 1)
        return start, start + timedelta(days=1)
    if found := _MONTH.search(question):
        month = _MONTHS[found.group("month").lower()]
        year = int(found.group("year")) if found.group("year") else today.year
        if not found.group("year") and (year, month) > (today.year, today.month):
            year -= 1
        return _month_span(year, month)
    if found := _ON_WEEKDAY.search(question):
        back = (today.weekday() - _WEEKDAYS[found.group("day").lower()]) % 7 or 7
        day = today - timedelta(days=back)
        return day, day + timedelta(days=1)
    return None
