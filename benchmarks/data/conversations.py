"""Conversation text shared by the benchmarks and the tests: word lists, a text message, and filler turns.

Filler turns are everyday or technical chatter with look-alike details (names, days, codes, amounts), reproducible
from a seed. The tests build their conversations from the same lists (``tests/support/conversations.py``).
"""

from __future__ import annotations

import random
import string
from typing import Any

NAMES = [
    "Alice",
    "Bruno",
    "Chen",
    "Dana",
    "Emeka",
    "Farah",
    "Goran",
    "Hana",
    "Ivan",
    "Jonas",
    "Keiko",
    "Luis",
    "Maya",
    "Nikos",
    "Olga",
    "Priya",
    "Quentin",
    "Rosa",
    "Sven",
    "Tariq",
    "Uma",
    "Viktor",
    "Wen",
    "Ximena",
    "Yusuf",
    "Zara",
    "Amir",
    "Beatriz",
    "Carlos",
    "Dmitri",
    "Elena",
    "Felix",
    "Greta",
    "Hugo",
    "Ines",
    "Jamal",
    "Klara",
    "Leon",
    "Mina",
    "Noah",
    "Oskar",
    "Paula",
    "Rafael",
    "Sofia",
    "Theo",
    "Ulla",
    "Vera",
    "Willem",
    "Yara",
    "Zeno",
]
CITIES = [
    "Osaka",
    "Lisbon",
    "Nairobi",
    "Quito",
    "Tallinn",
    "Perth",
    "Montreal",
    "Hanoi",
    "Accra",
    "Bergen",
    "Cusco",
    "Tbilisi",
    "Valencia",
    "Auckland",
    "Krakow",
    "Dakar",
    "Seville",
    "Busan",
    "Porto",
    "Riga",
]
ITEMS = [
    "standing desk",
    "espresso machine",
    "drone",
    "road bike",
    "projector",
    "air purifier",
    "sofa",
    "tent",
    "monitor",
    "keyboard",
    "blender",
    "heater",
    "camera lens",
    "printer",
    "router",
    "lamp",
]
JOBS = [
    "pediatric nurse",
    "structural engineer",
    "pastry chef",
    "court interpreter",
    "marine biologist",
    "tax auditor",
    "violin teacher",
    "air traffic controller",
    "data journalist",
    "landscape architect",
    "paramedic",
    "patent attorney",
    "museum curator",
    "sommelier",
    "locksmith",
    "speech therapist",
]
FOODS = ["peanuts", "shellfish", "sesame", "gluten", "kiwi", "eggs", "soy", "mustard", "celery", "lupin"]
TECH = [
    "PostgreSQL",
    "Elixir",
    "Go",
    "Kafka",
    "Rust",
    "Django",
    "Redis",
    "gRPC",
    "Svelte",
    "FastAPI",
    "Scala",
    "DynamoDB",
    "Flutter",
    "Terraform",
]
PROJECTS = [
    "Atlas",
    "Beacon",
    "Cobalt",
    "Drift",
    "Ember",
    "Falcon",
    "Garnet",
    "Harbor",
    "Iris",
    "Juniper",
    "Kestrel",
    "Lumen",
    "Mosaic",
    "Nimbus",
    "Onyx",
    "Pylon",
    "Quartz",
    "Raven",
    "Sable",
    "Tundra",
    "Umbra",
    "Vertex",
]
EVENTS = [
    "book fair",
    "hackathon",
    "charity run",
    "school concert",
    "team offsite",
    "wine tasting",
    "film night",
    "board game evening",
    "photo walk",
    "quiz night",
    "pottery class",
    "chess tournament",
]
VENUES = [
    "the old library",
    "Pier 9",
    "the rooftop garden",
    "the community hall",
    "the botanical greenhouse",
    "the maritime museum",
    "the east wing atrium",
    "the railway depot",
    "the lakeside pavilion",
]
CHANNELS = ["text message", "a phone call", "Signal", "a handwritten note", "Slack", "a video call"]
MEETINGS = [
    "design review",
    "budget sync",
    "sprint planning",
    "vendor call",
    "safety briefing",
    "hiring panel",
    "roadmap session",
    "security audit",
    "release retro",
    "customer demo",
    "architecture council",
]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
TIMES = ["8:30", "9:00", "9:45", "10:15", "11:00", "13:30", "14:00", "15:15", "16:45"]
SERVICES = [
    "roof repair",
    "tile grouting",
    "window cleaning",
    "boiler inspection",
    "garden clearing",
    "chimney sweep",
    "floor sanding",
    "gutter replacement",
    "fence painting",
]
BUGS = [
    "login timeout",
    "currency rounding",
    "PDF export",
    "dark mode contrast",
    "search pagination",
    "timezone offset",
    "cache invalidation",
    "upload retry",
    "password reset email",
]
SYSTEMS = ["billing", "notifications", "search", "inventory", "payroll", "reporting", "identity", "checkout"]
BLOCKERS = [
    "a missing TLS certificate",
    "a schema conflict",
    "a vendor contract renewal",
    "a quota limit",
    "an unreviewed security exception",
    "a flaky integration test",
    "a licence audit",
]
RESTAURANTS = [
    "Casa Lupita",
    "The Copper Pot",
    "Sakura Garden",
    "Bistro Nord",
    "The Green Fig",
    "Olive & Thyme",
    "Blue Lagoon Grill",
    "Maison Clair",
    "Spice Route",
]
TOPICS = [
    "the quarterly budget",
    "the hiking trip",
    "binary search trees",
    "the kitchen renovation",
    "sourdough baking",
    "the marketing offsite",
    "Rust lifetimes",
    "the garden irrigation",
    "the jazz concert",
    "tax deductions",
    "the database migration",
    "a birthday party",
    "the chess opening",
    "solar panels",
    "the book club",
    "the onboarding plan",
    "photosynthesis",
    "the bicycle repair",
    "a job interview",
    "the weather",
    "the flight booking",
    "the invoice backlog",
    "the support tickets",
    "the team dinner",
    "the conference talk",
]


def text_message(role: str, text: str) -> dict[str, Any]:
    """A Strands message of one text block."""
    return {"role": role, "content": [{"text": text}]}


def code(rng: random.Random, prefix: str) -> str:
    """A reference code shaped like ``QF-1234-AB``."""
    letters = "".join(rng.choice(string.ascii_uppercase) for _ in range(2))
    return f"{prefix}-{rng.randint(1000, 9999)}-{letters}"


def filler_turn(rng: random.Random) -> tuple[str, str]:
    """One user turn and the assistant's reply, on a random everyday or technical topic, with look-alike details."""
    topic = rng.choice(TOPICS)
    detail = rng.choice(
        [
            f"{rng.choice(NAMES)} will review it on {rng.choice(DAYS)} at {rng.choice(TIMES)}",
            f"the reference {code(rng, rng.choice(['QF', 'INV', 'TCK', 'ORD']))} is in the shared folder",
            f"it cost about {rng.randint(20, 900)} euros last time",
            f"we might move it to {rng.choice(CITIES)} next year",
            f"{rng.choice(NAMES)} suggested {rng.choice(TECH)} for it",
            f"the {rng.choice(MEETINGS)} should cover it",
            f"there are {rng.randint(2, 30)} open items left",
            f"the {rng.choice(ITEMS)} arrived damaged again",
        ]
    )
    user = rng.choice(
        [
            f"Quick update on {topic}: {detail}.",
            f"Can we talk about {topic}? {detail.capitalize()}.",
            f"About {topic} - {detail}, does that sound right?",
            f"Reminder for {topic}: {detail}.",
        ]
    )
    assistant = rng.choice(
        [
            f"Understood. For {topic}, I'd keep a short checklist so nothing slips.",
            f"That makes sense; {topic} usually needs a follow-up after that.",
            f"Thanks. I'll keep {topic} in mind and we can revisit it later.",
            f"Good to know. Is there a deadline for {topic}?",
        ]
    )
    return user, assistant


def filler_messages(count: int, seed: int = 0) -> list[dict[str, Any]]:
    """``count`` filler messages (alternating user and assistant), reproducible from ``seed``."""
    rng = random.Random(seed)
    messages: list[dict[str, Any]] = []
    while len(messages) < count:
        user, assistant = filler_turn(rng)
        messages.extend([text_message("user", user), text_message("assistant", assistant)])
    return messages[:count]
