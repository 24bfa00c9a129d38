"""Personal context: generated users who say things about themselves, and later requests that depend on it.

Written by hand for the personal-context section (``benchmarks.personal``), apart from the library's detector and
not tuned to it: eight users, each over three dated sessions (weeks apart) that mix what they say about themselves
with ordinary requests about the world, then requests asked in new sessions. The shapes (:data:`SHAPES`):

- ``direct``: a plain statement ("I have an iPhone 13 Pro.");
- ``in passing``: inside another request ("Can you fix this email? My landlord is strict about dates.");
- ``answer``: the assistant asks, the user answers in a few words ("What do you drive?" / "A 2019 Subaru Outback.");
- ``changed``: said, then changed in a later session (the request needs the latest first);
- ``register``: another register: casual, lower case, abbreviations, or formal.

Each request names the statements it needs by a distinctive phrase of the user's words (``needs``); a changed one
also names the older phrase (``older``), which must come after the latest or not at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SHAPES = ("direct", "in passing", "answer", "changed", "register")


@dataclass(frozen=True)
class Said:
    """One exchange: the user's words, the assistant's reply, and the assistant's question before it, if any."""

    user: str
    reply: str = "Got it."
    asked: str | None = None


@dataclass(frozen=True)
class Request:
    """A later request: its text, the phrases it needs (and the shape of each), and the older phrase of a change."""

    text: str
    needs: tuple[str, ...]
    shape: str
    older: str | None = None


@dataclass(frozen=True)
class User:
    """A user: three sessions of exchanges and the requests asked afterwards, each in a new session."""

    name: str
    sessions: tuple[tuple[Said, ...], ...]
    requests: tuple[Request, ...]
    world: tuple[str, ...] = field(default=())


FILLER = (
    Said("What is the difference between a list and a tuple in Python?", "A list is mutable; a tuple is not."),
    Said("How many kilometres are in a mile?", "About 1.609 kilometres."),
    Said(
        "Write a haiku about autumn rain.",
        "Grey rain on red leaves / the gutter hums a low song / tea cools by the door",
    ),
    Said("Explain what a mortgage escrow account is.", "It holds money for taxes and insurance."),
    Said("Who wrote Pride and Prejudice?", "Jane Austen."),
    Said("What's a good way to remember the order of the planets?", "My Very Educated Mother Just Served Us Nachos."),
)

USERS: tuple[User, ...] = (
    User(
        "ava",
        (
            (
                Said("I have an iPhone 13 Pro and the battery drains fast. Any general tips?", "Lower the brightness."),
                FILLER[0],
                Said("We just adopted a beagle puppy called Biscuit.", "Congratulations!"),
            ),
            (
                FILLER[1],
                Said(
                    "Can you reword this note to my neighbour? Also, I'm vegetarian, so the bbq invite is awkward.",
                    "Here is a gentler version.",
                ),  # fmt: skip
                FILLER[2],
            ),
            (
                Said("Actually I started eating fish again, so I'm pescatarian now.", "Noted."),
                FILLER[3],
            ),
        ),
        (
            Request("Can you suggest some useful accessories for my phone?", ("iPhone 13 Pro",), "direct"),
            Request("What should I cook for dinner this weekend?", ("pescatarian",), "changed", older="I'm vegetarian"),
            Request("Any tips for keeping my dog entertained while I work?", ("beagle puppy",), "direct"),
        ),
    ),
    User(
        "ben",
        (
            (
                Said("A 2019 Subaru Outback.", "Great for snow.", asked="What do you drive?"),
                FILLER[4],
                Said("Help me draft a leave request. My daughter Mia starts kindergarten on the 4th.", "Here you go."),
            ),
            (
                FILLER[5],
                Said(
                    "tbh i'm lactose intolerant lol so pizza nights are rough", "There are good lactose-free cheeses."
                ),
            ),
            (Said("We live in a third-floor walk-up in Lisbon, no elevator.", "That keeps you fit."), FILLER[0]),
        ),
        (
            Request("What winter tyres would you recommend for my car?", ("2019 Subaru Outback",), "answer"),
            Request("Suggest a snack I could pack for a family picnic.", ("lactose intolerant",), "register"),
            Request("I want to buy a treadmill. Which one should I get?", ("third-floor walk-up",), "in passing"),
            Request("Give me ideas for a first-day-of-school present for my kid.", ("kindergarten",), "in passing"),
        ),
    ),
    User(
        "chloe",
        (
            (
                Said("I grow cherry tomatoes and basil on my balcony.", "Lovely combination."),
                FILLER[1],
            ),
            (
                Said("I should mention that I am allergic to penicillin.", "Thank you for telling me."),
                FILLER[2],
                Said("Portuguese and a bit of Italian.", "Muito bem.", asked="Which languages do you speak?"),
            ),
            (FILLER[3], Said("I work night shifts as an ICU nurse.", "That is demanding work.")),
        ),
        (
            Request("What should I cook this weekend with what I have at home?", ("cherry tomatoes",), "direct"),
            Request("Which cold medicine is safe for me to take?", ("allergic to penicillin",), "register"),
            Request("Plan a sleep schedule that works for my job.", ("night shifts",), "direct"),
            Request(
                "Recommend a podcast I could learn from on my commute.", ("Portuguese and a bit of Italian",), "answer"
            ),  # fmt: skip
        ),
    ),
    User(
        "dev",
        (
            (
                Said("We're flying to Tokyo in March with our two-year-old.", "Exciting trip!"),
                FILLER[4],
            ),
            (
                Said("Can you check this SQL? Our team runs PostgreSQL 15 at work.", "The join looks right."),
                FILLER[5],
            ),
            (
                Said("Change of plan: we're going to Osaka instead of Tokyo.", "Osaka is great for food."),
                FILLER[0],
            ),
        ),
        (
            Request(
                "Plan my trip: what should we pack?", ("Osaka", "two-year-old"), "changed", older="flying to Tokyo"
            ),
            Request("Which database features should I learn next for my job?", ("PostgreSQL 15",), "in passing"),
        ),
    ),
    User(
        "eli",
        (
            (Said("I've been running three marathons a year since 2020.", "Impressive."), FILLER[1]),
            (
                FILLER[2],
                Said("Gluten-free, sadly. Coeliac.", "I will keep that in mind.", asked="Any dietary needs?"),
            ),
            (Said("My budget for a new laptop is about 900 euros.", "That buys a solid machine."), FILLER[3]),
        ),
        (
            Request("Suggest a breakfast for me before a long run.", ("Gluten-free", "marathons"), "answer"),
            Request("Which laptop should I buy?", ("900 euros",), "direct"),
        ),
    ),
    User(
        "fay",
        (
            (
                Said(
                    "Could you summarise this article for me? I'm a high-school chemistry teacher, so keep the jargon.",
                    "Here is a summary.",
                ),  # fmt: skip
                FILLER[4],
            ),
            (Said("I use a Kindle Paperwhite for all my reading.", "Handy."), FILLER[5]),
            (Said("I prefer window seats and I hate red-eye flights.", "Noted for bookings."), FILLER[0]),
        ),
        (
            Request("Recommend some books for my next holiday.", ("Kindle Paperwhite",), "direct"),
            Request("Help me plan a lab activity for my students.", ("chemistry teacher",), "in passing"),
            Request("Which flight should I pick to Rome next month?", ("window seats",), "direct"),
        ),
    ),
    User(
        "gus",
        (
            (Said("My wife and I have a vegan household.", "Plenty of good recipes."), FILLER[1]),
            (
                Said("Moving to Denver next month for a new job!", "Congratulations!"),
                FILLER[2],
            ),
            (Said("Update: we moved to Boulder, not Denver, in the end.", "Boulder is beautiful."), FILLER[3]),
        ),
        (
            Request(
                "Find me some restaurants we could try this weekend.",
                ("vegan household", "Boulder"),
                "changed",
                older="Moving to Denver",
            ),  # fmt: skip
        ),
    ),
    User(
        "hana",
        (
            (
                Said("Ugh my MacBook Air M2 keeps freezing when I export videos", "Try freeing disk space."),
                FILLER[4],
            ),
            (
                Said("Cats. Two of them, Miso and Tofu.", "Lovely names.", asked="Do you have any pets?"),
                FILLER[5],
            ),
            (FILLER[0], Said("I'd describe my style as minimalist, lots of black and grey.", "Classic.")),
        ),
        (
            Request("What video editing app would you recommend for my laptop?", ("MacBook Air M2",), "register"),
            Request("Suggest some furniture for my living room.", ("minimalist", "Miso and Tofu"), "answer"),
        ),
    ),
)
"""The users, in order."""

WORLD = (
    "What is the capital of France?",
    "How far is the Moon from the Earth?",
    "Who painted the Mona Lisa?",
    "What is the boiling point of water at sea level?",
    "Explain how photosynthesis works.",
    "What year did the Berlin Wall fall?",
)
"""Requests about the world: they must get nothing from a user's memory."""
