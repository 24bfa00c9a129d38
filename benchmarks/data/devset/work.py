"""Work threads of the second development set: code review, incident response, project management."""

from __future__ import annotations

import random
from collections.abc import Sequence

from .grammar import bumped, clock, code, later_day, money, say_date, version
from .model import Advice, Domain, Event, Slot, ValueContext

_LIBRARIES = {
    "Python": ("SQLAlchemy", "FastAPI", "Celery", "pydantic", "httpx", "boto3"),
    "Go": ("pgx", "grpc-go", "zap", "chi", "sarama"),
    "TypeScript": ("Prisma", "Express", "Next.js", "zod", "TypeORM"),
    "Kotlin": ("Ktor", "Exposed", "kotlinx.coroutines", "Jackson"),
    "Rust": ("tokio", "axum", "sqlx", "serde", "reqwest"),
}
_SERVICES = (
    "billing-api",
    "ingest-worker",
    "search-gateway",
    "notifications-service",
    "ledger-sync",
    "auth-proxy",
    "media-transcoder",
    "checkout-web",
    "inventory-feed",
    "payout-scheduler",
    "audit-log-writer",
    "geo-lookup",
)
_FEATURES = (
    "idempotency keys",
    "cursor pagination",
    "bulk export",
    "webhook retries",
    "per-tenant rate limits",
    "soft deletes",
    "the new invoice PDF renderer",
    "request tracing",
    "the settings page",
    "the CSV importer",
)
_DATABASES = ("PostgreSQL", "MySQL", "DynamoDB", "MongoDB", "Cassandra", "CockroachDB", "SQLite on the edge nodes")
_REGIONS = ("us-east-1", "us-west-2", "eu-west-1", "eu-central-1", "ap-southeast-2", "ap-northeast-1")
_CAUSES = (
    "connection pool exhaustion in the {service} workers",
    "a config push that halved the pool size",
    "a slow query on the orders table after the index was dropped",
    "DNS resolution timeouts from the sidecar",
    "a memory leak in the image resizing path",
    "a retry storm from the mobile clients",
    "an expired TLS certificate on the internal load balancer",
    "clock skew on two of the cache nodes",
    "a deadlock between the reconciliation job and the API writes",
    "the new feature flag evaluating on every request",
)
_PROJECTS = ("Atlas", "Juniper", "Northstar", "Halcyon", "Beacon", "Tidewater", "Kestrel", "Lumen", "Saffron")
_DELIVERABLES = (
    "the data migration",
    "the mobile onboarding flow",
    "the partner API",
    "the pricing page redesign",
    "the warehouse scanner rollout",
    "the SSO integration",
    "the reporting dashboard",
    "the support chatbot",
)
_VENDORS = ("Brightline", "Corvid Labs", "Northwind Consulting", "Parallax Data", "Quill & Stone", "Ridgeway IT")


def _others(people: Sequence[str], previous: str | None, rng: random.Random) -> str:
    return rng.choice([p for p in people if p != previous])


def _software_fields(rng: random.Random, people: Sequence[str]) -> dict[str, str]:
    language = rng.choice(sorted(_LIBRARIES))
    return {
        "service": rng.choice(_SERVICES),
        "language": language,
        "lib": rng.choice(_LIBRARIES[language]),
        "feature": rng.choice(_FEATURES),
        "lead": rng.choice(people),
        "module": rng.choice(("handlers", "storage", "client", "jobs", "middleware", "serializers")),
    }


def _timeout(rng: random.Random, context: ValueContext) -> str:
    choices = [s for s in (5, 8, 10, 15, 20, 30, 45, 60, 90) if f"{s} seconds" != context.previous]
    return f"{rng.choice(choices)} seconds"


SOFTWARE = Domain(
    name="code review",
    fields=_software_fields,
    slots=(
        Slot(
            "lib_version",
            "{lib} version",
            lambda rng, c: bumped(c.previous, rng) if c.previous else version(rng),
            (
                "{service} pins {lib} at {value}, if that matters.",
                "For context, the lockfile has {lib} {value}.",
                "We're on {lib} {value} in {service} right now.",
            ),
            (
                "We bumped {lib} to {value} in {service} yesterday.",
                "The upgrade PR merged, so {service} is on {lib} {value} now instead of {old}.",
                "Quick update: {lib} went from {old} to {value} last night.",
            ),
            (
                "Which version of {lib} does {service} use now?",
                "What {lib} version is {service} running at the moment?",
            ),
            ("Which {lib} version was {service} on before the upgrade?",),
            (
                "Since you're on {lib} {value}, the older workaround isn't needed anymore.",
                "With {lib} {value} the deprecation warning you mentioned goes away.",
            ),
            history=("Which {lib} versions has {service} been on?",),
        ),
        Slot(
            "timeout",
            "upstream timeout",
            _timeout,
            (
                "The upstream timeout in {service} is {value}.",
                "Right now we give the upstream calls {value} before giving up.",
            ),
            (
                "We raised the upstream timeout in {service} to {value}.",
                "Changed the upstream timeout from {old} to {value} this morning.",
            ),
            (
                "What is the upstream timeout in {service} set to now?",
                "How long does {service} wait for upstream calls?",
            ),
            ("What was the upstream timeout in {service} before we changed it?",),
            ("At {value} you still have headroom before the load balancer cuts the connection.",),
        ),
        Slot(
            "reviewer",
            "reviewer",
            lambda rng, c: _others(c.people, c.previous, rng),
            ("{value} is reviewing my PR for {feature}.", "I asked {value} to review the {feature} change."),
            (
                "{old} is out this week, so {value} picked up the review of the {feature} PR.",
                "Change of plan: {value} is reviewing the {feature} PR now.",
            ),
            ("Who is reviewing the {feature} pull request?", "Who's the reviewer on the {feature} PR at this point?"),
            ("Who was originally reviewing the {feature} PR?",),
            ("{value} will probably ask about the migration path, so mention it in the description.",),
        ),
        Slot(
            "database",
            "database",
            lambda rng, c: rng.choice([d for d in _DATABASES if d != c.previous]),
            ("{service} keeps all of its state in {value}.", "The storage layer of {service} is {value}."),
            ("We finished moving {service} off {old}; it runs on {value} now.",),
            ("Which database does {service} store its data in?", "What does {service} use for storage?"),
            changes=False,
        ),
        Slot(
            "branch",
            "branch",
            lambda rng, c: (
                f"feature/{rng.choice(('idem', 'cursor', 'bulk', 'retry', 'ratelimit', 'pdf'))}-{rng.randint(100, 999)}"
            ),
            ("The work lives on the branch {value}.", "I pushed everything to {value}."),
            ("I rebased and moved the work to {value}.",),
            ("What's the name of the branch with the {feature} work?",),
            changes=False,
        ),
    ),
    events=(
        Event(
            ("We finally merged the {feature} change.", "The {feature} PR is merged!"),
            "merging the {feature} change",
            ("When did we merge the {feature} change?",),
        ),
        Event(
            ("CI went red on main today because of a flaky test in the {module} package.",),
            "the flaky test breaking CI",
            ("When did CI break because of the flaky {module} test?",),
        ),
        Event(
            ("We cut the release branch for {service} this afternoon.",),
            "cutting the {service} release branch",
            ("When was the {service} release branch cut?",),
        ),
        Event(
            ("I paired with {lead} on the {module} refactor for most of the day.",),
            "pairing with {lead} on the {module} refactor",
            ("When did I pair with {lead} on the {module} refactor?",),
        ),
    ),
    advice=(
        Advice(
            (
                "For the flaky integration test, give each test its own schema and drop it afterwards instead of "
                "sharing one database between workers.",
            ),
            ("What did you suggest to fix the flaky integration test?",),
        ),
        Advice(
            (
                "Put the idempotency key check inside the same transaction as the insert, or two retries can both pass it.",
            ),
            ("Where did you say the idempotency key check should go?",),
        ),
        Advice(
            (
                "Log the request id at the boundary and pass it down through a context variable rather than as an argument.",
            ),
            ("How did you recommend passing the request id through the code?",),
        ),
        Advice(
            ("Cap the exponential backoff at thirty seconds and add full jitter, otherwise the retries synchronize.",),
            ("What did you recommend for the retry backoff?",),
        ),
        Advice(
            (
                "Replace the offset pagination with a keyset cursor on (created_at, id); the offset scan is what gets slow.",
            ),
            ("What did you propose instead of offset pagination?",),
        ),
    ),
    requests=(
        "Can you review this diff for {service}? Mostly changes in the {module} module.",
        "I'm adding {feature} to {service}. What's the cleanest way to structure it?",
        "Could you look over my approach for {feature}? I want to keep the {module} layer thin.",
        "What tests would you write for {feature}?",
        "Help me write the PR description for the {feature} work.",
        "Is there a better pattern than what I have in {module}? It feels tangled.",
        "How should I handle errors coming back from {lib} in {service}?",
        "We keep arguing about naming in the {module} package. Any conventions you'd suggest for {language}?",
        "Can you explain what this {language} code in {service} does? I inherited it.",
        "What would you check before approving a change like this?",
    ),
    topics=(
        (
            "Looking at the diff, the {module} change is {mostly fine|reasonable|close}, but the error path swallows the "
            "original exception.",
            "I'd {wrap|re-raise} it with context so the caller can still see what {lib} reported.",
            "Right now a failure there turns into a generic 500 and the log line {says nothing useful|has no request id}.",
            "It's also worth separating retryable errors from permanent ones at this layer.",
            "Timeouts and connection resets can be retried; validation errors should fail fast.",
            "That split makes the metrics far easier to read when something goes wrong at night.",
        ),
        (
            "On testing, I'd {start with|focus first on} the boundaries of {feature} rather than the happy path.",
            "Write one test per failure mode you can name: empty input, duplicate request, partial write, and a slow "
            "dependency.",
            "Fakes are fine for the slow dependency, but keep at least one test that talks to a real {language} "
            "client against a throwaway database.",
            "Property-based tests pay off for anything that parses or paginates.",
            "If a test needs a sleep to pass, treat that as a design smell rather than a test problem.",
            "Name the tests after the behaviour, not the function, so the failure message tells the story.",
        ),
        (
            "Structurally, the {module} module is doing two jobs: translating requests and deciding business rules.",
            "I'd pull the rules into plain functions that take data and return data, with no framework types.",
            "Then the handlers become thin adapters, and the rules are testable without spinning anything up.",
            "You don't need a big refactor for this; move one rule at a time as you touch it.",
            "The {feature} work is a good first candidate because it's new code anyway.",
            "Keep the public signatures stable while you do it so the rest of {service} doesn't notice.",
        ),
        (
            "Performance-wise, nothing here worries me {much|yet}, with one exception.",
            "The loop over the results issues one query per row, which is fine at ten rows and painful at ten thousand.",
            "Batch the lookups, or join once and build a dictionary in memory.",
            "Before optimizing further, measure it with a realistic dataset; intuition about hot paths is usually wrong.",
            "A flame graph from a load test will tell you more in ten minutes than an afternoon of guessing.",
            "If the endpoint has a latency budget, write it down in the PR so reviewers can hold the line.",
        ),
        (
            "About concurrency: two requests for the same record can interleave between the read and the write.",
            "A unique constraint or a conditional update closes that window; a lock in application code doesn't "
            "survive a second replica.",
            "Think about what happens if the process dies halfway through {feature}.",
            "If the answer is a half-written record, wrap the steps in a transaction or make each one idempotent.",
            "{lib} supports this directly, so it shouldn't cost much code.",
            "It's the kind of bug that only shows up under load, which is exactly when you can't debug it.",
        ),
        (
            "For the PR description, lead with the why: what problem {feature} solves and for whom.",
            "Then list the behaviour changes a reviewer should verify, and anything deliberately left out.",
            "Call out the migration, if there is one, and how to roll it back.",
            "Screenshots or a short curl example help the reviewer more than a paragraph of prose.",
            "Link the ticket, but don't make the reviewer open it to understand the change.",
            "End with how you tested it, including what you did not test.",
        ),
        (
            "On naming, {language} conventions matter less than consistency inside {service}.",
            "Pick one verb per kind of operation: fetch for remote reads, load for local ones, and stick to it.",
            "Avoid names like manager, helper or util; they attract unrelated code over time.",
            "If a name needs a comment to explain it, try the comment as the name.",
            "Module names should say what's inside, not how it's used.",
            "Renames are cheap now and expensive after other teams import the package.",
        ),
    ),
    steps=(
        "run the full test suite locally with the race detector on",
        "add a regression test for the bug before fixing it",
        "check the migration against a copy of production data",
        "update the API docs and the changelog",
        "ask for a second reviewer on the {module} changes",
        "add metrics for the new error path",
        "put the behaviour behind a feature flag for the first rollout",
        "confirm the dashboards still load after the rename",
    ),
    snippets=(
        "```python\ndef fetch_page(session, cursor, limit=100):\n    query = select(Order).where(Order.id > cursor)\n"
        "    rows = session.execute(query.order_by(Order.id).limit(limit)).scalars().all()\n"
        "    next_cursor = rows[-1].id if rows else None\n    return rows, next_cursor\n```",
        "```go\nfunc withRetry(ctx context.Context, attempts int, fn func() error) error {{\n"
        "    var err error\n    for i := 0; i < attempts; i++ {{\n        if err = fn(); err == nil {{\n"
        "            return nil\n        }}\n        time.Sleep(backoff(i))\n    }}\n    return err\n}}\n```",
        "```typescript\nexport async function handler(req: Request): Promise<Response> {{\n"
        "  const body = schema.parse(await req.json());\n  const result = await service.apply(body);\n"
        "  return Response.json(result, {{ status: 201 }});\n}}\n```",
        "```sql\nCREATE UNIQUE INDEX CONCURRENTLY idx_requests_key ON requests (tenant_id, idempotency_key);\n```",
    ),
    lexicon={
        "thing": (
            "the retry loop",
            "the cache layer",
            "the serializer",
            "the connection pool",
            "the auth middleware",
            "the migration script",
            "the background job",
            "the feature flag check",
            "the rate limiter",
            "the webhook dispatcher",
            "the query builder",
            "the config loader",
            "the health check",
            "the pagination helper",
            "the error handler",
            "the event consumer",
            "the batch writer",
            "the session store",
            "the CSV parser",
            "the dependency injection setup",
            "the test fixtures",
        ),
        "problem": (
            "holds a lock longer than it needs to",
            "allocates a new buffer per request",
            "ignores the request deadline",
            "logs the full payload, tokens included",
            "retries errors that will never succeed",
            "reads the config file on every call",
            "hides the original stack trace",
            "assumes the input is already sorted",
            "mixes UTC and local time",
            "silently drops the last page",
            "opens a new connection for every query",
            "swallows cancellation",
            "depends on test execution order",
            "leaks goroutines on shutdown",
            "returns null where callers expect an empty list",
            "blocks the event loop while it hashes",
            "recomputes the same value in a hot loop",
            "treats a timeout as success",
        ),
        "fix": (
            "pass the deadline through explicitly",
            "log only the ids",
            "retry only on timeouts and 503s",
            "load the config once at startup",
            "wrap the error with context",
            "sort once at the boundary",
            "store every timestamp in UTC",
            "loop until the cursor comes back empty",
            "reuse a pooled connection",
            "add a regression test first",
            "move the blocking work to a thread pool",
            "return an empty list",
            "cache the computed value per request",
            "make the handler idempotent",
            "split the function in two",
            "put the change behind a flag",
            "add a metric before changing anything",
            "delete the dead branch",
        ),
        "measure": (
            "p99 latency",
            "the allocation rate",
            "the error budget",
            "the queue depth",
            "the test runtime",
            "the build time",
            "cold start time",
            "the number of open connections",
            "CPU usage under load",
            "the flaky test rate",
        ),
    },
)


def _incident_fields(rng: random.Random, people: Sequence[str]) -> dict[str, str]:
    service = rng.choice(_SERVICES)
    return {
        "service": service,
        "region": rng.choice(_REGIONS),
        "metric": rng.choice(("p99 latency", "5xx rate", "queue depth", "CPU steal", "connection count")),
        "dashboard": rng.choice(("the golden signals board", "the {service} overview", "the SLO dashboard")).replace(
            "{service}", service
        ),
        "lead": rng.choice(people),
        "team": rng.choice(("platform", "payments", "storage", "edge", "identity")),
    }


def _cause(rng: random.Random, context: ValueContext) -> str:
    options = [c.replace("{service}", context.fields["service"]) for c in _CAUSES]
    return rng.choice([c for c in options if c != context.previous])


def _rate(rng: random.Random, context: ValueContext) -> str:
    return f"{rng.choice((0.4, 0.8, 1.2, 2.5, 3.1, 4.7, 6.0, 8.5, 12.0))}%"


INCIDENT = Domain(
    name="incident response",
    fields=_incident_fields,
    slots=(
        Slot(
            "oncall",
            "on-call engineer",
            lambda rng, c: _others(c.people, c.previous, rng),
            ("{value} is on call for {team} this week.", "Primary on-call for {team} right now is {value}."),
            (
                "{old} swapped shifts, so {value} is on call for {team} now.",
                "Heads up, the {team} on-call changed to {value}.",
            ),
            ("Who is on call for the {team} team?", "Who should I page on {team} at the moment?"),
            ("Who was on call for {team} before the swap?",),
            ("Loop in {value} early since they hold the pager.",),
        ),
        Slot(
            "ticket",
            "incident ticket",
            lambda rng, c: code(rng, rng.choice(("OPS", "INC", "SEV"))),
            ("We're tracking the {service} problem in {value}.", "I opened {value} for the {service} issue."),
            ("{old} got merged into {value}, so use that one.",),
            ("What's the ticket number for the {service} incident?",),
            changes=False,
        ),
        Slot(
            "root_cause",
            "suspected root cause",
            _cause,
            (
                "Our best guess for the {service} outage is {value}.",
                "It looks like the root cause is {value}.",
            ),
            (
                "Turns out it wasn't {old} after all. The actual cause was {value}.",
                "New finding on {service}: the real culprit is {value}.",
            ),
            (
                "What do we think caused the {service} outage?",
                "What's the root cause of the {service} incident as far as we know now?",
            ),
            ("What did we first suspect caused the {service} outage?",),
            ("If it really is {value}, the fix is mostly configuration.",),
            history=("Which root causes have we considered for the {service} incident?",),
        ),
        Slot(
            "error_rate",
            "error rate",
            _rate,
            ("The {metric} alarm fired and errors are at {value}.", "Error rate on {service} is sitting at {value}."),
            ("Errors on {service} are at {value} now.", "The {service} error rate moved from {old} to {value}."),
            ("What's the current error rate on {service}?",),
            ("What was the error rate on {service} before it changed?",),
        ),
        Slot(
            "region",
            "affected region",
            lambda rng, c: rng.choice([r for r in _REGIONS if r != c.previous]),
            ("Only {value} is affected so far.", "The failures are all in {value}."),
            ("The {service} incident spread: {value} is the region hurting the most now.",),
            ("Which region is hit hardest by the {service} incident?",),
            ("Which region was affected first?",),
        ),
    ),
    events=(
        Event(
            ("We rolled back the {service} deploy about an hour ago.", "Rolled back {service} to the previous build."),
            "rolling back the {service} deploy",
            ("When did we roll back the {service} deploy?",),
        ),
        Event(
            ("We failed traffic over away from {region} this morning.",),
            "the failover away from {region}",
            ("When did we fail over away from {region}?",),
        ),
        Event(
            ("The postmortem review for the {service} outage was today.",),
            "the {service} postmortem review",
            ("When was the {service} postmortem?",),
        ),
        Event(
            ("We paged the database team in the middle of the night.",),
            "paging the database team",
            ("When did we page the database team?",),
        ),
    ),
    advice=(
        Advice(
            (
                "Set the connection pool to twice the worker count and give requests a queue timeout shorter than the "
                "client's, so they fail fast instead of piling up.",
            ),
            ("How did you suggest sizing the connection pool?",),
        ),
        Advice(
            (
                "Add a canary stage that takes five percent of traffic for twenty minutes and blocks on the error budget "
                "burn rate.",
            ),
            ("What kind of canary did you recommend?",),
        ),
        Advice(
            ("Write the timeline in UTC with one line per observation, and keep speculation in a separate section.",),
            ("How did you say the incident timeline should be written?",),
        ),
        Advice(
            ("Alert on the burn rate over one hour and six hours together instead of on raw error counts.",),
            ("What did you recommend alerting on?",),
        ),
    ),
    requests=(
        "{service} is throwing errors again. Where should I look first?",
        "Can you help me read {dashboard}? The {metric} graph looks wrong.",
        "Help me draft the status page update for the {service} incident.",
        "What should go in the postmortem for this?",
        "How do I tell whether this is the database or the network?",
        "Can you walk me through how to capture a heap profile from {service} in production?",
        "Give me a checklist for the incident handoff to the next shift.",
        "What would you try next? Restarting hasn't helped.",
    ),
    pastes=(
        "Here are the logs from the last few minutes:\n\n"
        '2024-03-02T03:14:07Z ERROR {service} upstream request failed err="context deadline exceeded" '
        "route=/v2/orders attempt=3\n2024-03-02T03:14:07Z WARN {service} pool wait exceeded waited_ms=5012 "
        "in_use=64 idle=0\n2024-03-02T03:14:08Z ERROR {service} upstream request failed "
        'err="connection reset by peer" route=/v2/orders attempt=1\n2024-03-02T03:14:09Z INFO {service} '
        "health check ok latency_ms=4\n2024-03-02T03:14:11Z ERROR {service} handler panic recovered "
        'err="nil map write" route=/v2/refunds\n\nDoes anything jump out?',
        "Pasting the alert history from {dashboard}:\n\n- 02:51 {metric} above threshold in {region}\n"
        "- 02:58 synthetic checks failing for /login and /checkout\n- 03:05 autoscaler added 6 instances\n"
        "- 03:12 {metric} still rising, error budget burn 14x\n- 03:20 manual restart of two pods, no change\n\n"
        "What's the pattern here?",
    ),
    topics=(
        (
            "First, separate the symptom from the cause: the {metric} spike is what users feel, not what broke.",
            "Check whether the errors started with a deploy, a config change or a traffic shift; the change log "
            "usually answers it faster than the graphs.",
            "If nothing changed on our side, look at dependencies: the database, DNS and any third-party API.",
            "Compare {region} with a healthy region on the same graph; differences jump out that way.",
            "Keep notes with timestamps as you go, because you'll need them for the timeline later.",
            "And resist restarting everything at once, since it destroys the evidence you need.",
        ),
        (
            "For the status page, say what users see, not what we think is broken internally.",
            "Something like: some requests to {service} are failing or slow, and we're working on it.",
            "Give a time for the next update and keep it even if there's nothing new.",
            "Avoid promising a fix time until you're confident in the cause.",
            "When it's resolved, post a short all-clear and say a full review will follow.",
            "Customers forgive outages much more readily than silence.",
        ),
        (
            "To tell the database from the network, look at where the time goes in a single slow request.",
            "If traces show long spans inside the query itself, it's the database; if they show time before the "
            "query starts, it's connection acquisition or the network.",
            "Pool wait metrics are the quickest signal: waits near the timeout mean the pool is exhausted.",
            "On the network side, retransmits and DNS latency on the hosts are worth a glance.",
            "Don't trust averages here; the p99 tells the real story.",
            "Once you know which side it is, the next step usually becomes obvious.",
        ),
        (
            "A postmortem should be blameless and specific: what happened, when, what we knew at each point, and "
            "why the system allowed it.",
            "The timeline is the backbone, so build it first from the alerts, chat logs and deploy history.",
            "Then the contributing factors, with an honest account of what made detection or mitigation slow.",
            "Action items need owners and dates, or they quietly disappear.",
            "Prefer a few items that change the system over many that ask people to be more careful.",
            "Share the draft with everyone involved before the review meeting.",
        ),
        (
            "For a heap profile, the safest route is to enable the profiling endpoint on one instance only.",
            "Take two profiles a few minutes apart and compare them; a single snapshot rarely shows a leak.",
            "Look for allocations that grow between the two, especially caches and buffers keyed by request data.",
            "If the process is close to its memory limit, raise the limit temporarily so the profile completes.",
            "Remember to turn the endpoint off again afterwards.",
            "The {team} runbook has the exact commands if you want a copy.",
        ),
    ),
    steps=(
        "confirm the blast radius: which regions, which endpoints, which customers",
        "freeze deploys for {service} until the cause is known",
        "capture a heap profile and thread dump before any restart",
        "post a status update every thirty minutes",
        "hand off with a written summary, not just a call",
        "open follow-up tickets for every manual step we took",
    ),
    snippets=(
        "```bash\nkubectl -n {team} top pods -l app={service} --sort-by=memory\n"
        "kubectl -n {team} logs deploy/{service} --since=15m | grep -c 'pool wait exceeded'\n```",
        '```promql\nsum(rate(http_requests_total{{service="{service}",code=~"5.."}}[5m]))\n'
        '  / sum(rate(http_requests_total{{service="{service}"}}[5m]))\n```',
    ),
    lexicon={
        "thing": (
            "the load balancer",
            "the primary database",
            "the read replica",
            "the message queue",
            "the CDN",
            "the DNS resolver",
            "the autoscaler",
            "the circuit breaker",
            "the cache cluster",
            "the deploy pipeline",
            "the sidecar proxy",
            "the cron scheduler",
            "the TLS terminator",
            "the service mesh",
            "the log shipper",
            "the paging integration",
            "the synthetic checks",
            "the node pool",
        ),
        "problem": (
            "flaps under load",
            "drops connections during failover",
            "lags a few minutes behind",
            "fills up faster than consumers drain it",
            "serves stale content after a purge",
            "times out on a cold cache",
            "scales up too late",
            "trips on a single slow dependency",
            "evicts the hot keys first",
            "deploys to every region at once",
            "hides the real client IP",
            "fires twice at midnight",
            "pages the wrong rotation",
            "loses logs when the disk fills",
            "reports healthy while requests fail",
        ),
        "fix": (
            "drain the node before restarting it",
            "fail over manually and watch replication lag",
            "raise the consumer count",
            "purge the cache by tag instead of by path",
            "pre-warm the cache",
            "scale on queue depth instead of CPU",
            "add a fallback for the slow dependency",
            "roll out one region at a time",
            "pin the previous image",
            "add jitter to the schedule",
            "make the health check exercise the database",
            "page the secondary as well",
            "snapshot the disk first",
            "turn on debug logging for one instance only",
        ),
        "measure": (
            "the 5xx rate",
            "replication lag",
            "queue depth",
            "the error budget burn rate",
            "p99 latency",
            "saturation on the database",
            "the number of pages per week",
            "time to mitigate",
        ),
    },
)


def _project_fields(rng: random.Random, people: Sequence[str]) -> dict[str, str]:
    return {
        "project": rng.choice(_PROJECTS),
        "deliverable": rng.choice(_DELIVERABLES),
        "sponsor": rng.choice(people),
        "lead": rng.choice(people),
        "vendor": rng.choice(_VENDORS),
    }


PROJECT = Domain(
    name="project management",
    fields=_project_fields,
    slots=(
        Slot(
            "deadline",
            "launch date",
            lambda rng, c: say_date(later_day(c.day, rng, 20, 80), rng),
            (
                "We're targeting {value} for the {project} launch.",
                "{project} is supposed to ship on {value}.",
                "The {project} go-live is set for {value}.",
            ),
            (
                "The {project} launch slipped to {value}.",
                "Leadership moved the {project} date from {old} to {value}.",
                "New date for {project}: {value}.",
            ),
            ("When is the {project} launch now?", "What's the latest go-live date for {project}?"),
            ("What was the {project} launch date before it moved?",),
            ("With {value} as the date, the buffer for testing is about two weeks.",),
            history=("Which launch dates has {project} had?",),
        ),
        Slot(
            "owner",
            "owner of {deliverable}",
            lambda rng, c: _others(c.people, c.previous, rng),
            ("{value} owns {deliverable} on {project}.", "{deliverable} is {value}'s piece of {project}."),
            (
                "{old} moved to another team, so {value} owns {deliverable} now.",
                "We reassigned {deliverable}: {value} has it.",
            ),
            ("Who owns {deliverable} for {project}?", "Who is responsible for {deliverable} at this point?"),
            ("Who owned {deliverable} before it was reassigned?",),
            ("Make sure {value} signs off on the revised scope.",),
        ),
        Slot(
            "budget",
            "budget",
            lambda rng, c: money(rng, 40_000, 400_000, 5_000),
            ("The {project} budget is {value} for this phase.", "Finance approved {value} for {project}."),
            ("Finance revised the {project} budget to {value}.", "The {project} budget went from {old} to {value}."),
            ("How much budget does {project} have?", "What's the approved budget for {project} now?"),
            ("What was the {project} budget before the revision?",),
            ("At {value} you can afford one more contractor for about a quarter.",),
        ),
        Slot(
            "sync",
            "weekly sync",
            lambda rng, c: f"{rng.choice(('Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday'))}s at {clock(rng)}",
            ("Our {project} sync is on {value}.", "The weekly {project} meeting happens {value}."),
            ("We moved the {project} sync to {value}.",),
            ("When is the weekly {project} sync?", "What time is the {project} meeting these days?"),
            ("When was the {project} sync before it moved?",),
        ),
        Slot(
            "vendor",
            "vendor",
            lambda rng, c: (
                c.fields["vendor"] if c.previous is None else rng.choice([v for v in _VENDORS if v != c.previous])
            ),
            ("We signed with {value} for the implementation work.",),
            ("We dropped {old} and brought in {value} instead.",),
            ("Which vendor is doing the implementation for {project}?",),
            changes=False,
        ),
    ),
    events=(
        Event(
            ("The {project} kickoff was today and it went well.",),
            "the {project} kickoff",
            ("When was the {project} kickoff meeting?",),
        ),
        Event(
            ("Design review for {deliverable} happened this morning.",),
            "the design review of {deliverable}",
            ("When did the design review for {deliverable} take place?",),
        ),
        Event(
            ("The beta of {project} went out to the first ten customers.",),
            "the {project} beta release",
            ("When did the {project} beta go out?",),
        ),
        Event(
            ("The steering committee approved the scope cut for {project}.",),
            "the approval of the {project} scope cut",
            ("When did the steering committee approve the scope cut?",),
        ),
    ),
    advice=(
        Advice(
            (
                "Split the milestone in two: a thin end-to-end slice first, then the hardening work, so the risky "
                "integration shows up early.",
            ),
            ("How did you suggest splitting the milestone?",),
        ),
        Advice(
            ("Keep a one-page decision log with the date, the decision, who made it and what was rejected.",),
            ("What did you say to keep track of decisions?",),
        ),
        Advice(
            (
                "Report status as red, amber or green against dates the team committed to, never against the original "
                "plan.",
            ),
            ("How did you recommend reporting project status?",),
        ),
        Advice(
            ("Give the vendor acceptance criteria per deliverable and tie each invoice to one of them.",),
            ("What did you suggest for managing the vendor's invoices?",),
        ),
    ),
    requests=(
        "Can you help me write the {project} status update for {sponsor}?",
        "How should I plan the next quarter of {project}?",
        "I need to explain a delay on {deliverable} to stakeholders. How do I frame it?",
        "What risks am I missing on {project}?",
        "Draft an agenda for the {project} planning session.",
        "How do I push back on new scope without sounding defensive?",
        "Can you turn these notes into a short plan?",
        "What should I ask the vendor before we sign the next statement of work?",
    ),
    pastes=(
        "Notes from today's {project} meeting:\n\n- {deliverable}: blocked on access to the staging environment\n"
        "- QA wants two more weeks for regression testing\n- {sponsor} asked for a cost breakdown by team\n"
        "- open question: do we keep the legacy export or drop it\n- next check-in with the vendor is Thursday\n\n"
        "Can you turn this into action items?",
    ),
    topics=(
        (
            "For the status update, lead with the headline: on track, at risk or off track, and why in one sentence.",
            "Then progress since the last update, in terms the reader cares about, not task names.",
            "List the risks with what you're doing about each, and the decisions you need from {sponsor}.",
            "Keep it short enough to read on a phone between meetings.",
            "If something slipped, say so plainly and give the new expectation.",
            "Bad news delivered early builds far more trust than good news delivered late.",
        ),
        (
            "When you explain the delay on {deliverable}, separate the facts from the plan.",
            "Say what changed, what it costs in time, and what you considered to recover it.",
            "Offer options with their trade-offs rather than a single answer, so stakeholders own the choice.",
            "Avoid blaming individuals or other teams, even when it's tempting.",
            "Close with the next point at which you'll know more.",
            "People mostly want to know whether they need to change their own plans.",
        ),
        (
            "On risks, the ones teams miss most often are dependencies on other teams' calendars.",
            "Holidays, on-call rotations and other launches all compete for the same people.",
            "Integration with the vendor is another: assume their environment will be late.",
            "Data quality in {deliverable} is a classic hidden risk; sample it early.",
            "Write each risk with a trigger that tells you it is happening, not just a probability.",
            "Review the list weekly and retire the ones that no longer matter.",
        ),
        (
            "For the planning session, timebox it and start with the outcome you want by the end of the quarter.",
            "Work backwards to the milestones, then ask the team to size them.",
            "Leave twenty percent of capacity unplanned; something always comes up.",
            "Agree on what you are explicitly not doing this quarter and write it down.",
            "End with owners for each milestone and a date for the first check-in.",
            "Send the notes the same day while everyone remembers the discussion.",
        ),
        (
            "Pushing back on scope works best when you make the trade-off visible.",
            "Say yes to the request and show what it would displace, then ask which they prefer.",
            "Most people withdraw a request once the cost is concrete.",
            "Keep a parking lot of good ideas so nothing feels rejected outright.",
            "Revisit the parking lot at the start of each planning cycle.",
            "And thank people for the ideas; you want them to keep coming.",
        ),
    ),
    steps=(
        "confirm the milestone dates with each team lead",
        "update the risk register and share it with {sponsor}",
        "book the retrospective before the launch, not after",
        "get written sign-off on the revised scope",
        "check the budget burn against the plan",
        "send the stakeholder update every Friday",
    ),
    lexicon={
        "thing": (
            "the roadmap",
            "the risk register",
            "the weekly status report",
            "the launch checklist",
            "the staffing plan",
            "the dependency map",
            "the budget forecast",
            "the stakeholder list",
            "the acceptance criteria",
            "the statement of work",
            "the milestone plan",
            "the retro notes",
            "the RACI chart",
            "the change request process",
            "the QA schedule",
            "the training plan",
        ),
        "problem": (
            "hasn't been updated since the kickoff",
            "hides the real critical path",
            "mixes goals with tasks",
            "assumes everyone is available all quarter",
            "has no owner for half the items",
            "lists risks without triggers",
            "counts work that is already paid for twice",
            "leaves out the legal review",
            "promises dates nobody agreed to",
            "is too long for anyone to read",
            "treats every request as urgent",
            "ignores the holiday freeze",
        ),
        "fix": (
            "name one owner per item",
            "review it every Monday",
            "cut it to one page",
            "add a trigger to each risk",
            "re-baseline the dates with the team",
            "separate goals from tasks",
            "ask finance for the actuals",
            "book the legal review now",
            "share it with the sponsor first",
            "move the low-value items to a parking lot",
            "agree on a change request form",
            "timebox the discussion",
            "put the assumptions in writing",
        ),
        "measure": (
            "the burn rate",
            "scope creep",
            "the number of open risks",
            "schedule variance",
            "team morale",
            "time spent in meetings",
            "stakeholder confidence",
            "the defect backlog",
        ),
    },
)
