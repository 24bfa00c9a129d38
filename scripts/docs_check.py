"""Open the built site in headless Chromium and check that every mermaid diagram rendered, offline.

Run by ``bash scripts/docs-check.sh``, which builds the site and serves ``site/`` on localhost; by hand::

    python scripts/docs_check.py --url http://127.0.0.1:8000/ --site site --out build/docs-check

Each page of ``site/`` whose HTML has a mermaid fence (``<pre class="mermaid">``) is opened; the front page must be
one of them. Material for MkDocs replaces the fence with a ``<div class="mermaid">`` that holds the SVG in a
*closed* shadow root, which neither JavaScript nor ``--dump-dom`` can see into, so the page is read through the
DevTools protocol (over ``--remote-debugging-pipe``, standard library only), whose DOM pierces shadow roots. A page
passes when every fence became a host with an ``<svg>`` that holds the diagram's labels, no diagram source is left
in the page's visible text, no script failed, and no script came from outside the local server: every host name
resolves to nothing, so a CDN copy of mermaid cannot stand in for the local one (other requests that fail offline,
the theme's web fonts, are listed as notes). For each page it writes a PNG
screenshot and the SVG of each diagram into ``--out``. The exit status is 0 when every page passes, 1 otherwise
(one line per failure), 2 when Chromium cannot be driven.
"""

from __future__ import annotations

import argparse
import base64
import fcntl
import html
import json
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
    "--hide-scrollbars",
    "--mute-audio",
    # Offline: no host name resolves but the local server's address.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    "--remote-debugging-pipe",
]
WIDTH, HEIGHT = 1280, 1000
FENCE = re.compile(r'<pre class="mermaid"><code>(.*?)</code></pre>', re.DOTALL)
# A node's label (id[label], id([label]), id[("label")], id["label"]) or an edge's (-- "label" -->).
LABEL = re.compile(r'\[\(?"?([^\]"(]+)|--\s*"([^"]+)"\s*-->')


class CheckError(Exception):
    """Chromium could not be started or driven."""


class Browser:
    """Headless Chromium driven through the DevTools protocol over a pipe (fds 3 and 4 of the browser)."""

    def __init__(self, chromium: str, profile: Path) -> None:
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # Numbers above 4, so that moving them to 3 and 4 in the child never overwrites one with the other.
        ends = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10) for fd in (to_browser_r, from_browser_w)]
        for fd in (to_browser_r, from_browser_w):
            os.close(fd)

        def _pipes_to_3_and_4() -> None:
            os.dup2(ends[0], 3)
            os.dup2(ends[1], 4)

        self.process = subprocess.Popen(
            [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            close_fds=False,  # every other descriptor of this process is close-on-exec
            preexec_fn=_pipes_to_3_and_4,
        )
        for fd in ends:
            os.close(fd)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []

    def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        """Send one command and return its result; events that arrive meanwhile are kept in ``events``."""
        self._next_id += 1
        message: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._receive(timeout=60)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise CheckError(f"{method}: {reply['error'].get('message', reply['error'])}")
                result: dict[str, Any] = reply.get("result", {})
                return result
            self.events.append(reply)

    def pump(self, seconds: float) -> None:
        """Keep the events that arrive in the next ``seconds``."""
        self.wait_for("", timeout=seconds)

    def wait_for(self, method: str, timeout: float) -> bool:
        """Wait until an event named ``method`` has arrived (or had already); False after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while not any(event.get("method") == method for event in self.events):
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            try:
                self.events.append(self._receive(timeout=left))
            except TimeoutError:
                return False
        return True

    def _receive(self, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_browser], [], [], left)[0]:
                raise TimeoutError("no answer from Chromium")
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise CheckError(f"Chromium exited: {self._stderr_tail()}")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        parsed: dict[str, Any] = json.loads(message)
        return parsed

    def _stderr_tail(self) -> str:
        try:
            self.process.wait(timeout=5)
            lines = (self.process.stderr.read() if self.process.stderr else b"").decode(errors="replace").splitlines()
        except subprocess.TimeoutExpired:
            lines = []
        return lines[-1] if lines else f"exit status {self.process.returncode}"

    def close(self) -> None:
        """Ask Chromium to quit; stop it if it does not."""
        try:
            if self.process.poll() is None:
                os.write(self._to_browser, json.dumps({"id": 0, "method": "Browser.close"}).encode() + b"\0")
        except OSError:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass
        if self.process.stderr:
            self.process.stderr.close()


def _walk(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every node under ``node``, shadow roots included (``DOM.getDocument`` with ``pierce``)."""
    yield node
    for child in [*node.get("shadowRoots", []), *node.get("children", [])]:
        yield from _walk(child)


def _classes(node: dict[str, Any]) -> list[str]:
    attributes = node.get("attributes", [])
    pairs = dict(zip(attributes[::2], attributes[1::2], strict=False))
    return pairs.get("class", "").split()


def _text(node: dict[str, Any]) -> str:
    return " ".join(n.get("nodeValue", "") for n in _walk(node) if n.get("nodeType") == 3)


def _labels(source: str) -> list[str]:
    """The node labels of a flowchart's source (``id[label]``, ``id([label])``, ``id[("label")]``, ...)."""
    labels = []
    for match in LABEL.finditer(source):
        label = (match.group(1) or match.group(2) or "").split("<br")[0].strip().strip('"')
        if label:
            labels.append(label)
    return labels


def check_page(browser: Browser, url: str, fences: list[str], out: Path, name: str) -> list[str]:
    """Open ``url`` and return what is wrong with its diagrams (nothing: they rendered)."""
    target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    problems: list[str] = []
    try:
        for domain in ("Page", "Network", "Runtime"):
            browser.send(f"{domain}.enable", session=session)
        browser.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False},
            session=session,
        )
        browser.events.clear()
        opened = browser.send("Page.navigate", {"url": url}, session=session)
        if opened.get("errorText"):
            return [f"{url}: the page could not be opened: {opened['errorText']}"]
        if not browser.wait_for("Page.loadEventFired", timeout=60):
            return [f"{url}: the page did not finish loading within 60 s"]

        hosts: list[dict[str, Any]] = []
        deadline = time.monotonic() + 30
        while True:  # mermaid renders after the load event
            root = browser.send("DOM.getDocument", {"depth": -1, "pierce": True}, session=session)["root"]
            hosts = [
                node
                for node in _walk(root)
                if node.get("localName") == "div"
                and "mermaid" in _classes(node)
                and any(n.get("localName") == "svg" for s in node.get("shadowRoots", []) for n in _walk(s))
            ]
            if len(hosts) >= len(fences) or time.monotonic() > deadline:
                break
            browser.pump(0.5)

        if len(hosts) < len(fences):
            problems.append(
                f"{url}: {len(fences) - len(hosts)} of {len(fences)} mermaid diagram(s) did not become an SVG"
            )
        visible = browser.send(
            "Runtime.evaluate", {"expression": "document.body.innerText", "returnByValue": True}, session=session
        )["result"].get("value", "")
        for source in fences:
            first = source.strip().splitlines()[0].strip()
            if first and first in visible:
                problems.append(f"{url}: the diagram's source ({first!r}) is still shown as text")
        for index, (host, source) in enumerate(zip(hosts, fences, strict=False), start=1):
            shown = _text(host)
            missing = [label for label in _labels(source) if label not in shown]
            if missing:
                problems.append(f"{url}: diagram {index} lacks the labels {missing}")
            svg = next(n for s in host["shadowRoots"] for n in _walk(s) if n.get("localName") == "svg")
            markup = browser.send("DOM.getOuterHTML", {"nodeId": svg["nodeId"]}, session=session)["outerHTML"]
            (out / f"{name}.diagram-{index}.svg").write_text(markup, encoding="utf-8")

        origin = "{0.scheme}://{0.netloc}".format(urlsplit(url))
        for event in browser.events:
            if event.get("method") == "Network.requestWillBeSent":
                asked, kind = event["params"]["request"]["url"], event["params"].get("type", "Other")
                if asked.startswith((origin, "data:", "blob:", "about:")):
                    continue
                if kind == "Script":  # a CDN's mermaid would render the diagrams where there is a network
                    problems.append(f"{url}: the page loads a script from outside the site: {asked}")
                else:  # the theme's web fonts, the repository's star count: the page works without them
                    print(f"docs check: note: {page_name(url)} asked for {asked} ({kind}, unreachable here)")
            elif event.get("method") == "Runtime.exceptionThrown":
                details = event["params"]["exceptionDetails"]
                thrown = str(details.get("exception", {}).get("description") or details.get("text"))
                problems.append(f"{url}: a script failed: {thrown.splitlines()[0] if thrown else '?'}")

        if hosts:  # the screenshot shows the first diagram (the front page's is near the top already)
            browser.send("DOM.scrollIntoViewIfNeeded", {"nodeId": hosts[0]["nodeId"]}, session=session)
        shot = browser.send("Page.captureScreenshot", {"format": "png"}, session=session)["data"]
        (out / f"{name}.png").write_bytes(base64.b64decode(shot))
    finally:
        browser.send("Target.closeTarget", {"targetId": target})
    return list(dict.fromkeys(problems))  # once each


def page_name(url: str) -> str:
    """The path of ``url`` on the server, for messages."""
    return urlsplit(url).path or "/"


def pages_with_diagrams(site: Path) -> dict[str, list[str]]:
    """The pages of ``site`` that have mermaid fences: path relative to the site, and each fence's source."""
    found = {}
    for page in sorted(site.rglob("*.html")):
        fences = [html.unescape(source) for source in FENCE.findall(page.read_text(encoding="utf-8"))]
        if fences:
            found[page.relative_to(site).as_posix()] = fences
    return found


def main() -> int:
    """Check every page with a diagram; 0 when all rendered."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="where site/ is served, e.g. http://127.0.0.1:8000/")
    parser.add_argument("--site", type=Path, default=Path("site"), help="the built site (default: site)")
    parser.add_argument("--out", type=Path, default=Path("build/docs-check"), help="screenshots and SVGs")
    parser.add_argument("--chromium", default=os.environ.get("CHROMIUM", "/usr/bin/chromium"))
    parser.add_argument("--profile", type=Path, help="Chromium's profile folder (default: a new temporary one)")
    args = parser.parse_args()

    pages = pages_with_diagrams(args.site)
    if "index.html" not in pages:
        print(f"docs check: FAILED: {args.site}/index.html has no mermaid diagram to check", file=sys.stderr)
        return 1
    chromium = shutil.which(args.chromium)
    if chromium is None:
        print(f"docs check: cannot run: no Chromium at {args.chromium} (apt-get install chromium)", file=sys.stderr)
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="docs-check-") as scratch:
        browser = Browser(chromium, args.profile or Path(scratch, "profile"))
        try:
            for page, fences in pages.items():
                name = page.removesuffix(".html").replace("/", "-") or "index"
                found = check_page(browser, urljoin(args.url, page.removesuffix("index.html")), fences, args.out, name)
                status = "FAILED" if found else "ok"
                print(f"docs check: {page}: {len(fences)} diagram(s), {status} (screenshot {args.out / name}.png)")
                problems += found
        except (CheckError, TimeoutError, OSError) as error:
            print(f"docs check: cannot drive Chromium: {error}", file=sys.stderr)
            return 2
        finally:
            browser.close()
    for problem in problems:
        print(f"docs check: FAILED: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
