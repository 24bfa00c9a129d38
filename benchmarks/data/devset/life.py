"""Personal threads of the second development set: travel, a home move, money, training, an event to organize."""

from __future__ import annotations

import random
from collections.abc import Sequence

from .grammar import CITIES, STREETS, clock, later_day, money, say_date
from .model import Advice, Domain, Event, Slot, ValueContext

_HOTEL_WORDS = ("Harbor", "Lantern", "Cork", "Tile", "Olive", "Cedar", "Granary", "Saltworks", "Orchard", "Atlas")
_AIRLINES = ("TP", "LH", "KL", "AF", "BA", "IB", "AC", "JL", "NH", "SK")
_PAINTS = (
    "Swiss Coffee",
    "Hale Navy",
    "Sage Whisper",
    "Agreeable Gray",
    "Chantilly Lace",
    "Evergreen Fog",
    "Pale Oak",
    "Tricorn Black",
    "Urbane Bronze",
    "Iron Ore",
)
_FIRMS = (
    "Mendez & Sons",
    "Brightwork Renovations",
    "Oakline Builders",
    "Keystone Remodeling",
    "True North Carpentry",
    "Blue Door Interiors",
)
_BANKS = ("Ally", "Marcus", "Schwab", "Fidelity", "a credit union", "Wealthfront", "Vanguard")
_RACES = ("a 10K", "a half marathon", "a full marathon", "a 50K trail race", "an Olympic-distance triathlon")
_VENUES = (
    "the Foundry Hall",
    "the rooftop at the Meridian",
    "Larkspur Barn",
    "the Granary event space",
    "the old customs house",
    "the botanical garden pavilion",
)
_CATERERS = ("Salt & Ember", "Green Fork Catering", "Little Kitchen Co.", "Mesa Catering", "Brass Pot")


def _hotel(rng: random.Random, context: ValueContext) -> str:
    while True:
        name = rng.choice(("the {} Hotel", "Casa {}", "the {} House", "Hotel {}")).format(rng.choice(_HOTEL_WORDS))
        if name != context.previous:
            return name


def _travel_fields(rng: random.Random, people: Sequence[str]) -> dict[str, str]:
    return {
        "city": rng.choice(CITIES),
        "companion": rng.choice(people),
        "purpose": rng.choice(("a friend's wedding", "a conference", "a week of vacation", "a family visit")),
        "month": rng.choice(("April", "May", "June", "September", "October")),
    }


TRAVEL = Domain(
    name="travel planning",
    fields=_travel_fields,
    slots=(
        Slot(
            "hotel",
            "hotel",
            _hotel,
            ("I booked {value} in {city}.", "We're staying at {value} for the {city} trip."),
            (
                "I cancelled {old} and switched us to {value} for {city}.",
                "Change of plans, we'll stay at {value} in {city} instead.",
            ),
            ("Where are we staying in {city}?", "Which hotel did I end up booking for {city}?"),
            ("Which hotel had I booked in {city} before I switched?",),
            ("{value} is close to the old town, so you can walk to most of these.",),
            history=("Which hotels have I booked for the {city} trip?",),
        ),
        Slot(
            "rate",
            "nightly rate",
            lambda rng, c: money(rng, 90, 420, 5) + " a night",
            ("The room is {value}.", "It's {value} including breakfast."),
            (
                "The {city} hotel rate went up to {value} when I changed the dates.",
                "The hotel in {city} dropped the price to {value}.",
            ),
            ("How much is the hotel in {city} per night?",),
            ("What was the nightly rate in {city} before it changed?",),
        ),
        Slot(
            "flight",
            "flight",
            lambda rng, c: f"{rng.choice(_AIRLINES)} {rng.randint(100, 2999)} at {clock(rng)}",
            ("My flight to {city} is {value}.", "I'm flying out on {value}."),
            (
                "The airline cancelled my flight to {city}, so I'm rebooked on {value}.",
                "I moved to an earlier flight to {city}: {value}.",
            ),
            ("Which flight am I taking to {city}?", "What's my flight to {city} now?"),
            ("What was my original flight to {city}?",),
            ("With {value} you'll land in time for a late lunch.",),
        ),
        Slot(
            "arrival",
            "arrival date",
            lambda rng, c: say_date(later_day(c.day, rng, 15, 60), rng),
            ("We arrive in {city} on {value}.",),
            ("We pushed the arrival in {city} to {value}.",),
            ("When do we arrive in {city}?",),
            ("When were we originally arriving in {city}?",),
        ),
    ),
    events=(
        Event(
            ("I renewed my passport today, finally.",),
            "renewing my passport",
            ("When did I renew my passport?",),
        ),
        Event(
            ("Bought travel insurance for the {city} trip this evening.",),
            "buying travel insurance",
            ("When did I buy the travel insurance for {city}?",),
        ),
        Event(
            ("I cancelled the rental car since we'll use trains.",),
            "cancelling the rental car",
            ("When did I cancel the rental car?",),
        ),
        Event(
            ("Booked the cooking class in {city} for the second day.",),
            "booking the cooking class",
            ("When did I book the cooking class in {city}?",),
        ),
    ),
    advice=(
        Advice(
            ("Buy the rechargeable transit card at the airport station; single tickets cost almost twice as much.",),
            ("What did you say about transit tickets in {city}?",),
        ),
        Advice(
            ("Book the day trip for a weekday morning, when the tour buses haven't arrived yet.",),
            ("When did you suggest doing the day trip?",),
        ),
        Advice(
            ("Keep a photo of your passport in your email and a paper copy in a separate bag.",),
            ("What did you tell me to do with a copy of my passport?",),
        ),
    ),
    requests=(
        "Can you plan a three-day itinerary for {city}?",
        "What neighbourhoods in {city} are good to stay in?",
        "I'm going to {city} for {purpose} in {month}. What should I pack?",
        "Any restaurants in {city} you'd recommend for a group?",
        "How do I get from the airport to the center of {city}?",
        "What's the best way to split costs with {companion} on this trip?",
        "Is {month} a good time to visit {city}?",
        "What day trips from {city} are worth it?",
    ),
    pastes=(
        "Here's my rough plan for {city}:\n\nDay 1: arrive, check in, walk the old town, dinner near the river\n"
        "Day 2: museum in the morning, market for lunch, cooking class at 4\nDay 3: day trip, back by 7\n"
        "Day 4: free morning, airport by 2\n\nDoes the pacing look realistic?",
    ),
    topics=(
        (
            "For {city}, I'd anchor each day around one big thing and leave the rest loose.",
            "Mornings are best for museums and popular viewpoints, before the crowds build.",
            "Afternoons suit markets and neighbourhood walks, with a long lunch in between.",
            "Evenings are for food; book the one dinner you really care about ahead of time.",
            "Build in a slow half-day; travel days are more tiring than they look on paper.",
            "And check opening days, since many museums close on Mondays.",
        ),
        (
            "For packing in {month}, layers beat one heavy coat.",
            "Bring comfortable walking shoes you've already broken in; {city} is best on foot.",
            "A light rain jacket that folds small is worth the space.",
            "For {purpose}, one smarter outfit covers most situations.",
            "Pack a universal adapter and a small power bank.",
            "Leave some room in the bag for whatever you bring home.",
        ),
        (
            "Getting in from the airport is usually easiest by train or metro, depending on the time you land.",
            "Taxis have a fixed fare to the center in many cities, so ask before you get in.",
            "Ride-hailing apps work, but pickup points can be a long walk from arrivals.",
            "If you land late at night, pre-booking a transfer removes the stress.",
            "Keep some local currency for the first hour, even if cards work almost everywhere.",
            "Download an offline map before you leave home.",
        ),
        (
            "For a group dinner, look for places that take reservations for six or more; many small spots don't.",
            "Set menus make splitting the bill painless.",
            "Ask about dietary needs before you book, not at the table.",
            "Neighbourhood places away from the main square are usually better and cheaper.",
            "Lunch menus are a great way to try a fancier restaurant for less.",
            "And tipping customs vary, so check what's normal locally.",
        ),
        (
            "To split costs with {companion}, a shared expense app avoids awkward arithmetic at the end.",
            "Decide up front which costs are shared and which are personal.",
            "Settle up every couple of days rather than at the end of the trip.",
            "For big items like the hotel, one person pays and the other transfers their half straight away.",
            "Keep receipts for anything you might claim back.",
            "It's simpler than it sounds once the rules are agreed.",
        ),
    ),
    steps=(
        "check passport validity and visa rules",
        "download offline maps of {city}",
        "tell the bank you'll be travelling",
        "book the one restaurant that matters most",
        "print or save the hotel confirmation",
        "pack a small first-aid kit",
    ),
    lexicon={
        "thing": (
            "the old town",
            "the night train",
            "the harbour walk",
            "the food market",
            "the museum pass",
            "the airport bus",
            "the cathedral",
            "the hilltop viewpoint",
            "the ferry",
            "the wine region tour",
            "the flea market",
            "the botanical garden",
            "the castle",
            "the street food district",
            "the thermal baths",
            "the coastal path",
        ),
        "problem": (
            "gets crowded after ten",
            "closes early on Sundays",
            "sells out weeks ahead",
            "is a steep climb in the heat",
            "runs less often in the off season",
            "only takes cash",
            "is packed with tour groups at midday",
            "changes its timetable in summer",
            "needs a reservation for groups",
            "is further from the center than it looks",
            "has a long queue at the entrance",
        ),
        "fix": (
            "go right at opening",
            "book online the day before",
            "take the early train",
            "carry some cash",
            "check the timetable the night before",
            "buy the combined ticket",
            "go on a weekday",
            "take a taxi up and walk down",
            "reserve a table for lunch",
            "pack water and a hat",
            "leave a free afternoon in the plan",
        ),
        "measure": (
            "the total cost",
            "travel time between stops",
            "how tired you are by day three",
            "the weather forecast",
            "walking distance",
            "the time you have left at the airport",
        ),
    },
)


def _address(rng: random.Random, context: ValueContext) -> str:
    while True:
        value = f"{rng.randint(12, 1890)} {rng.choice(STREETS)}, apartment {rng.randint(1, 9)}{rng.choice('ABCD')}"
        if value != context.previous:
            return value


def _home_fields(rng: random.Random, people: Sequence[str]) -> dict[str, str]:
    return {
        "room": rng.choice(("kitchen", "bathroom", "living room", "home office")),
        "home_city": rng.choice(CITIES),
        "partner": rng.choice(people),
        "landlord": rng.choice(people),
    }


HOME = Domain(
    name="home and moving",
    fields=_home_fields,
    slots=(
        Slot(
            "address",
            "new address",
            _address,
            ("Our new place is at {value}.", "We signed the lease for {value}."),
            (
                "The first apartment fell through, so we're moving to {value} instead.",
                "Update on the move: the new address is {value}, not {old}.",
            ),
            ("What's my new address?", "Where are we moving to?"),
            ("What was the address of the apartment that fell through?",),
            ("Make sure the post office forwards mail to {value}.",),
            history=("Which addresses have we had lined up for the move?",),
        ),
        Slot(
            "contractor",
            "contractor",
            lambda rng, c: rng.choice([f for f in _FIRMS if f != c.previous]),
            ("We hired {value} for the {room}.", "{value} is doing the {room} renovation."),
            ("We let {old} go and hired {value} for the {room}.", "{value} took over the {room} job."),
            ("Who is doing the {room} renovation?", "Which contractor is working on the {room} now?"),
            ("Which contractor did we have for the {room} before?",),
            ("Ask {value} for a written schedule with the inspection dates.",),
        ),
        Slot(
            "quote",
            "quote",
            lambda rng, c: money(rng, 4_000, 60_000, 250),
            ("The quote for the {room} came in at {value}.", "They quoted {value} for the {room}."),
            ("The revised quote for the {room} is {value}.", "The {room} quote went from {old} to {value}."),
            ("How much is the {room} renovation going to cost?", "What's the latest quote for the {room}?"),
            ("What was the first quote for the {room}?",),
            ("At {value} I'd still hold back ten percent as contingency.",),
        ),
        Slot(
            "paint",
            "paint color",
            lambda rng, c: rng.choice([p for p in _PAINTS if p != c.previous]),
            ("We picked {value} for the {room} walls.", "{partner} and I agreed on {value} for the {room}."),
            ("We changed our minds and went with {value} for the {room}.",),
            ("What color are we painting the {room}?",),
            ("Which paint color did we pick for the {room} first?",),
            ("{value} will look warmer in the evening light.",),
        ),
        Slot(
            "move_date",
            "moving day",
            lambda rng, c: say_date(later_day(c.day, rng, 10, 45), rng),
            ("Moving day is {value}.",),
            ("The movers could only do {value}, so that's the new moving day.",),
            ("When is moving day?",),
            ("When was moving day originally planned?",),
        ),
    ),
    events=(
        Event(
            ("The demolition in the {room} finished today.",),
            "the end of the {room} demolition",
            ("When did the {room} demolition finish?",),
        ),
        Event(
            ("The electrical inspection passed this morning.",),
            "passing the electrical inspection",
            ("When did the electrical inspection pass?",),
        ),
        Event(
            ("I booked the movers today.",),
            "booking the movers",
            ("When did I book the movers?",),
        ),
        Event(
            ("We got the keys to the new place this afternoon!",),
            "getting the keys",
            ("When did we get the keys to the new place?",),
        ),
    ),
    advice=(
        Advice(
            (
                "Photograph every wall and floor of the old apartment on the last day, with the date visible, before "
                "you hand back the keys.",
            ),
            ("What did you suggest doing before handing back the keys?",),
        ),
        Advice(
            ("Pay the contractor in stages tied to finished work, never more than a third up front.",),
            ("How did you recommend paying the contractor?",),
        ),
        Advice(
            ("Label each box with the room and a number, and keep the list of numbers on your phone.",),
            ("How did you tell me to label the moving boxes?",),
        ),
    ),
    requests=(
        "Can you make me a moving checklist?",
        "How do I compare quotes for the {room}?",
        "What should be in the contract with the contractor?",
        "We're repainting the {room}. Any tips for picking a color?",
        "How do I get my deposit back from {landlord}?",
        "What utilities do I need to set up in {home_city}?",
        "How long should a {room} renovation take?",
        "Help me write an email to the contractor about the delays.",
    ),
    topics=(
        (
            "For the move, work backwards from moving day in weekly blocks.",
            "Four weeks out, book movers and start clearing things you won't take.",
            "Two weeks out, set up utilities and internet at the new place so they're live on day one.",
            "The last week is for packing room by room, starting with what you use least.",
            "Keep an essentials box with chargers, toiletries, a kettle and tools, and move it yourself.",
            "On the day, walk through the old place once more before you leave.",
        ),
        (
            "When comparing quotes, make sure they cover the same scope; cheap quotes often leave things out.",
            "Ask each contractor to break the price into labour, materials and allowances.",
            "Allowances for fixtures are where budgets quietly grow.",
            "Check licences and insurance, and call at least two references.",
            "A detailed quote is usually a sign of a careful contractor.",
            "Don't pick on price alone; pick the one who asks the best questions.",
        ),
        (
            "The contract should list the scope, the price, the payment schedule and the timeline.",
            "Include how changes are priced and approved, in writing.",
            "Specify who gets the permits and who pays for them.",
            "Add a clause about cleanup and debris removal.",
            "Warranty terms for workmanship matter as much as the price.",
            "Read it with the quote side by side and make sure they match.",
        ),
        (
            "For paint, test samples on two walls and look at them morning and evening.",
            "North-facing rooms make cool colors look colder.",
            "Sheen matters too: eggshell hides flaws, semi-gloss is easier to clean.",
            "Buy a little more than you need for touch-ups later.",
            "Write down the exact color code somewhere you'll find it in two years.",
            "And prime over dark colors, or you'll need a third coat.",
        ),
    ),
    steps=(
        "confirm the moving date with the building",
        "transfer the internet contract",
        "update the address with the bank and employer",
        "measure doorways for the large furniture",
        "schedule the final walkthrough with {landlord}",
        "keep receipts for everything related to the move",
    ),
    lexicon={
        "thing": (
            "the moving truck",
            "the storage unit",
            "the kitchen cabinets",
            "the bathroom tiles",
            "the electrical panel",
            "the flooring",
            "the boiler",
            "the internet installation",
            "the windows",
            "the deposit",
            "the inventory report",
            "the parking permit",
            "the shower valve",
            "the countertops",
        ),
        "problem": (
            "arrives later than promised",
            "costs more than the quote",
            "needs a permit nobody mentioned",
            "doesn't fit through the door",
            "takes three weeks to order",
            "fails the inspection",
            "was installed slightly off level",
            "needs a second visit",
            "gets booked up on weekends",
        ),
        "fix": (
            "get it in writing",
            "order it now",
            "measure twice",
            "ask for a second quote",
            "book the slot a month ahead",
            "photograph everything",
            "hold back the final payment",
            "call the building manager",
            "keep the receipts in one folder",
            "check the warranty terms",
        ),
        "measure": (
            "the total budget",
            "the schedule",
            "the contingency fund",
            "how long you're without a kitchen",
            "the monthly bills",
            "the deposit deductions",
        ),
    },
)


def _finance_fields(rng: random.Random, people: Sequence[str]) -> dict[str, str]:
    return {"partner": rng.choice(people), "goal": rng.choice(("a house deposit", "a sabbatical", "a new car"))}


FINANCE = Domain(
    name="personal finance",
    fields=_finance_fields,
    slots=(
        Slot(
            "rent",
            "rent",
            lambda rng, c: money(rng, 900, 3_600, 25) + " a month",
            ("My rent is {value}.", "We pay {value} in rent."),
            ("The landlord raised the rent to {value}.", "Rent went up from {old} to {value}."),
            ("How much is my rent?", "What am I paying in rent these days?"),
            ("What was my rent before the increase?",),
            ("With rent at {value}, the fifty-thirty-twenty split is tight but workable.",),
        ),
        Slot(
            "savings",
            "monthly savings target",
            lambda rng, c: money(rng, 200, 2_500, 50) + " a month",
            ("I'm putting {value} toward {goal}.", "My savings target for {goal} is {value}."),
            ("I bumped the savings for {goal} to {value}.", "I cut the savings target for {goal} to {value} for now."),
            ("How much am I saving each month for {goal}?",),
            ("What was my monthly savings target before I changed it?",),
        ),
        Slot(
            "bank",
            "savings account provider",
            lambda rng, c: rng.choice([b for b in _BANKS if b != c.previous]),
            ("My savings account is with {value}.",),
            ("I moved my savings from {old} to {value} for the better rate.",),
            ("Where is my savings account?", "Which provider holds my savings now?"),
            ("Where did I keep my savings before I moved them?",),
        ),
        Slot(
            "insurance",
            "car insurance premium",
            lambda rng, c: money(rng, 600, 2_400, 10) + " a year",
            ("Car insurance costs me {value}.",),
            ("The renewal came in at {value} for the car insurance.",),
            ("How much is my car insurance?",),
            ("What was my car insurance before the renewal?",),
        ),
    ),
    events=(
        Event(("I filed my taxes today.",), "filing my taxes", ("When did I file my taxes?",)),
        Event(
            ("Opened the brokerage account this morning.",),
            "opening the brokerage account",
            ("When did I open the brokerage account?",),
        ),
        Event(
            ("Paid off the last of the car loan!",),
            "paying off the car loan",
            ("When did I pay off the car loan?",),
        ),
    ),
    advice=(
        Advice(
            ("Automate the transfer to savings for the day after payday, so the money moves before you see it.",),
            ("When did you suggest scheduling the savings transfer?",),
        ),
        Advice(
            ("Keep three months of expenses in cash before investing anything for {goal}.",),
            ("How much cash did you say to keep before investing?",),
        ),
    ),
    requests=(
        "Can you help me set up a monthly budget?",
        "How should {partner} and I split shared expenses?",
        "Is it better to pay down debt or save for {goal} first?",
        "How do I pick an index fund?",
        "What should I track in a spending spreadsheet?",
        "How big should my emergency fund be?",
    ),
    topics=(
        (
            "A budget works best when it's boring: fixed costs first, then savings, then everything else.",
            "Take the last three months of statements and sort every line into a few categories.",
            "The surprises are usually in small recurring charges.",
            "Set the savings amount as if it were a bill, not whatever is left at the end of the month.",
            "Review it monthly for the first quarter, then quarterly.",
            "Don't aim for perfection; aim for a plan you'll actually follow.",
        ),
        (
            "For shared expenses with {partner}, splitting by income share often feels fairer than fifty-fifty.",
            "A joint account for bills, fed by both of you, keeps it simple.",
            "Keep some money each that needs no discussion.",
            "Agree on a threshold above which purchases are discussed first.",
            "Revisit the arrangement when either income changes.",
            "Money conversations are easier when they're scheduled rather than triggered by a problem.",
        ),
        (
            "Whether to pay down debt first depends mostly on the interest rate.",
            "Anything above six or seven percent is usually worth clearing before investing.",
            "Low-rate debt like a mortgage can sit alongside saving for {goal}.",
            "Always take an employer match first; it's an instant return.",
            "Keep paying at least the minimum on everything to protect your credit.",
            "The best plan is the one you can stick with for years.",
        ),
    ),
    steps=(
        "list every fixed monthly cost",
        "automate the savings transfer",
        "check the interest rate on each debt",
        "set a monthly money check-in with {partner}",
        "cancel subscriptions you haven't used in a month",
    ),
    lexicon={
        "thing": (
            "the emergency fund",
            "the credit card balance",
            "the index fund",
            "the subscription list",
            "the grocery budget",
            "the retirement account",
            "the joint account",
            "the tax refund",
            "the car loan",
            "the spending spreadsheet",
            "the high-yield savings account",
        ),
        "problem": (
            "keeps creeping up",
            "charges a fee nobody noticed",
            "sits in cash earning nothing",
            "gets raided for non-emergencies",
            "renews automatically every year",
            "is hard to track by hand",
            "has a rate that changed without notice",
            "mixes personal and shared costs",
        ),
        "fix": (
            "automate the transfer",
            "review it once a month",
            "cancel what you haven't used",
            "move it to a better rate",
            "pay more than the minimum",
            "set a hard limit",
            "split it into categories",
            "write the rule down together",
        ),
        "measure": (
            "the savings rate",
            "net worth",
            "monthly cash flow",
            "the interest paid",
            "fees",
            "how many months of expenses you have saved",
        ),
    },
)


def _health_fields(rng: random.Random, people: Sequence[str]) -> dict[str, str]:
    return {"coach": rng.choice(people), "park": rng.choice(("the river path", "the reservoir loop", "the hill trail"))}


HEALTH = Domain(
    name="training and health",
    fields=_health_fields,
    slots=(
        Slot(
            "race",
            "target race",
            lambda rng, c: rng.choice([r for r in _RACES if r != c.previous]),
            ("I signed up for {value} in the autumn.", "My goal this year is {value}."),
            ("I switched my race registration to {value}.", "I'm aiming for {value} now instead of {old}."),
            ("Which race am I training for?", "What race is my training plan aimed at now?"),
            ("Which race was I originally training for?",),
            ("For {value}, the long run matters more than the speed work.",),
        ),
        Slot(
            "mileage",
            "weekly distance",
            lambda rng, c: f"{rng.randrange(15, 85, 5)} km a week",
            ("I'm running about {value}.",),
            ("My running is up to {value} now.", "I dropped my running back to {value} after the knee flared up."),
            ("How much am I running per week?",),
            ("How much was I running per week before?",),
        ),
        Slot(
            "appointment",
            "physio appointment",
            lambda rng, c: f"{say_date(later_day(c.day, rng, 3, 30), rng)} at {clock(rng)}",
            ("My physio appointment is {value}.",),
            ("The physio moved my appointment to {value}.",),
            ("When is my physio appointment?",),
            ("When was the physio appointment before it was moved?",),
        ),
    ),
    events=(
        Event(("I ran my first 20K today!",), "my first 20K run", ("When did I run my first 20K?",)),
        Event(
            ("Rolled my ankle on {park} this morning.",),
            "rolling my ankle",
            ("When did I roll my ankle?",),
        ),
        Event(("Bought new running shoes today.",), "buying new running shoes", ("When did I buy new running shoes?",)),
    ),
    advice=(
        Advice(
            ("Keep four out of five runs at an easy, conversational pace; the fifth can be hard.",),
            ("How did you say to split easy and hard runs?",),
        ),
        Advice(
            ("Do calf raises and single-leg squats twice a week; they protect the knees more than stretching does.",),
            ("What strength exercises did you recommend?",),
        ),
    ),
    requests=(
        "Can you build me a training plan?",
        "How do I avoid getting injured while increasing mileage?",
        "What should I eat before a long run?",
        "My knee hurts after runs. What could it be?",
        "How should I taper before the race?",
        "Is it okay to run on consecutive days?",
    ),
    topics=(
        (
            "A good plan builds volume slowly, by about ten percent a week, with a lighter week every third or fourth.",
            "Most runs should feel easy; the improvement comes from consistency, not heroics.",
            "One long run a week builds endurance, and one session of faster work builds speed.",
            "Sleep and food are part of the plan, not extras.",
            "If something hurts for more than a few days, back off before it becomes an injury.",
            "{coach} will probably want to see your log, so keep one.",
        ),
        (
            "Before a long run, eat something familiar and easy to digest two or three hours ahead.",
            "Practice your race-day breakfast on training days so nothing is new.",
            "Take water or a sports drink for anything over ninety minutes.",
            "Afterwards, a mix of protein and carbohydrate within an hour helps recovery.",
            "Don't try new gels on race day.",
            "Your stomach is trainable, just like your legs.",
        ),
        (
            "Knee pain after runs is often about load rather than damage.",
            "Too much too soon, worn shoes or a sudden change in terrain are common triggers.",
            "Pain on the outside of the knee often points to the IT band; pain under the kneecap to the patellar "
            "tendon.",
            "A physio can tell you which and give you targeted exercises.",
            "In the meantime, reduce volume rather than stopping completely.",
            "And check the mileage on your shoes.",
        ),
    ),
    steps=(
        "log every run with distance and how it felt",
        "schedule a rest day after each long run",
        "replace shoes every 600 to 800 km",
        "book a check-in with {coach}",
        "practice race nutrition on long runs",
    ),
    lexicon={
        "thing": (
            "the long run",
            "the interval session",
            "the rest day",
            "the strength routine",
            "the warm-up",
            "the cool-down",
            "the race-day breakfast",
            "the shoe rotation",
            "the foam roller",
            "the hill repeats",
            "the tempo run",
            "the sleep schedule",
        ),
        "problem": (
            "gets skipped when the week is busy",
            "is run too fast",
            "leaves you sore for days",
            "comes too soon after a hard session",
            "is new every time",
            "gets cut short",
            "happens too late in the evening",
        ),
        "fix": (
            "keep it easy",
            "schedule it first in the week",
            "cut the volume by a third",
            "add a rest day after it",
            "practice it on a training day",
            "stop while it still feels good",
            "go to bed half an hour earlier",
            "write it in the log",
        ),
        "measure": (
            "resting heart rate",
            "weekly distance",
            "how your legs feel the next morning",
            "sleep",
            "your easy pace",
            "soreness",
        ),
    },
)


def _event_fields(rng: random.Random, people: Sequence[str]) -> dict[str, str]:
    return {
        "occasion": rng.choice(("the team offsite", "my sister's 40th birthday", "the alumni dinner", "our wedding")),
        "cohost": rng.choice(people),
        "speaker": rng.choice(people),
    }


EVENT = Domain(
    name="event planning",
    fields=_event_fields,
    slots=(
        Slot(
            "venue",
            "venue",
            lambda rng, c: rng.choice([v for v in _VENUES if v != c.previous]),
            ("We booked {value} for {occasion}.", "{occasion} will be at {value}."),
            (
                "{old} double-booked us, so {occasion} moved to {value}.",
                "We switched the venue for {occasion} to {value}.",
            ),
            ("Where is {occasion} being held?", "What's the venue for {occasion} now?"),
            ("Which venue did we have for {occasion} first?",),
            ("{value} has its own sound system, so skip renting speakers.",),
            history=("Which venues have we booked for {occasion}?",),
        ),
        Slot(
            "headcount",
            "guest count",
            lambda rng, c: f"{rng.randrange(20, 180, 5)} guests",
            ("We're expecting {value} at {occasion}.",),
            ("RSVPs are in: {value} for {occasion}.", "The guest list for {occasion} grew to {value}."),
            ("How many people are coming to {occasion}?",),
            ("How many guests did we expect at first?",),
            ("For {value} you'll want at least two bartenders.",),
        ),
        Slot(
            "caterer",
            "caterer",
            lambda rng, c: rng.choice([k for k in _CATERERS if k != c.previous]),
            ("{value} is catering {occasion}.",),
            ("We switched caterers for {occasion}: {value} instead of {old}.",),
            ("Who is catering {occasion}?",),
            ("Which caterer did we have before the switch?",),
        ),
        Slot(
            "event_date",
            "date",
            lambda rng, c: say_date(later_day(c.day, rng, 25, 90), rng),
            ("{occasion} is on {value}.",),
            ("We moved {occasion} to {value}.",),
            ("What date is {occasion}?",),
            ("What date was {occasion} planned for originally?",),
        ),
    ),
    events=(
        Event(
            ("Sent out the invitations for {occasion} today.",),
            "sending the invitations",
            ("When did I send the invitations for {occasion}?",),
        ),
        Event(
            ("We did the venue walkthrough with {cohost}.",),
            "the venue walkthrough",
            ("When was the venue walkthrough?",),
        ),
        Event(
            ("Confirmed the photographer this afternoon.",),
            "confirming the photographer",
            ("When did I confirm the photographer?",),
        ),
    ),
    advice=(
        Advice(
            ("Send the invitations with a reply-by date two weeks before the caterer needs final numbers.",),
            ("What reply-by date did you suggest for the invitations?",),
        ),
        Advice(
            ("Ask {cohost} to own the run-of-show on the day, so you can actually talk to guests.",),
            ("Who did you suggest should run the schedule on the day?",),
        ),
    ),
    requests=(
        "Can you help me plan {occasion}?",
        "What should the run-of-show look like for {occasion}?",
        "How far ahead should I book things for {occasion}?",
        "Help me write the invitation text.",
        "What do people usually forget when planning something like {occasion}?",
        "How do I handle dietary restrictions for a big group?",
    ),
    topics=(
        (
            "For {occasion}, lock the date and the venue first; everything else depends on them.",
            "Then catering and any entertainment, which book out months ahead in busy seasons.",
            "Invitations can go six to eight weeks before, with a clear reply-by date.",
            "Keep a single spreadsheet of vendors, deposits and deadlines.",
            "Agree with {cohost} who decides what, so you don't both chase the same vendor.",
            "A week before, confirm every booking by phone.",
        ),
        (
            "The run-of-show is a minute-by-minute plan for the day, shared with everyone working it.",
            "Start with arrival and setup times for each vendor.",
            "Then the guest timeline: arrival, welcome, food, speeches, and the end.",
            "Leave buffers; things always run ten minutes late.",
            "Name one person as the contact for vendors on the day.",
            "Print copies, because phones die at the worst moment.",
        ),
        (
            "What people forget most: rain plans, accessibility, and how guests get home.",
            "Also a quiet corner for anyone who needs a break.",
            "Name tags help more than people expect at mixed groups.",
            "Check noise rules and the time the venue must be cleared.",
            "Budget for tips and last-minute taxis.",
            "And eat something yourself before guests arrive.",
        ),
    ),
    steps=(
        "confirm the final guest count with the caterer",
        "share the run-of-show with every vendor",
        "prepare a rain plan",
        "order name tags and signage",
        "collect dietary requirements from the RSVPs",
    ),
    lexicon={
        "thing": (
            "the seating plan",
            "the guest list",
            "the playlist",
            "the signage",
            "the bar tab",
            "the welcome drinks",
            "the speeches",
            "the photo booth",
            "the dessert table",
            "the coat check",
            "the shuttle",
            "the rain plan",
            "the decorations",
        ),
        "problem": (
            "keeps changing",
            "runs over budget",
            "takes longer than planned",
            "needs more staff than expected",
            "depends on the weather",
            "has no owner",
            "clashes with the venue's rules",
        ),
        "fix": (
            "freeze it a week before",
            "give it one owner",
            "set a budget cap",
            "confirm it by phone",
            "keep it to ten minutes",
            "book a backup",
            "share it with the venue",
        ),
        "measure": (
            "the total budget",
            "the timeline",
            "guest comfort",
            "the noise curfew",
            "the headcount",
            "how stressed you are",
        ),
    },
)

DOMAINS = (TRAVEL, HOME, FINANCE, HEALTH, EVENT)
"""The personal domains, in a fixed order (the generator's seeds depend on it)."""
