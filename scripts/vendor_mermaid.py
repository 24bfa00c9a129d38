"""Put a pinned copy of mermaid into docs/assets/vendor/mermaid/, so the site's diagrams render offline.

Material for MkDocs loads mermaid from a CDN unless the page already defines it; ``overrides/main.html`` loads this
copy on every page with a diagram. The folder is git-ignored: ``bash scripts/docs.sh`` runs this script before each
build or serve. The npm package's tarball is checked against its pinned sha512 integrity (the registry's
``dist.integrity``) before ``dist/mermaid.min.js`` and the licence are taken out of it; a copy that is already in
place is checked against the digest recorded when it was extracted, and kept.

Where the tarball comes from, in order: ``$SSM_MERMAID_TARBALL`` (a local copy of the tarball, for a machine
without network), ``npm pack`` when npm is installed, else a download from the registry
(``$npm_config_registry``, default https://registry.npmjs.org/). When none works, one line says so and the
exit status is 1.

To move to another version: ``npm view mermaid@<version> dist.integrity``, then change the two constants below.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request
from pathlib import Path

MERMAID_VERSION = "11.17.2"  # the major version Material 9.x loads from its CDN (mermaid@11)
MERMAID_INTEGRITY = "sha512-V6K3C8EBdEsPFZXSKMJe6ppQOENxuHARr9GvHX4hh47lAbhMRD9qf4oEK7LoaRQxULMa80/qt5gHO73aCleBBg=="

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "docs" / "assets" / "vendor" / "mermaid"
STAMP = TARGET / "VERSION.json"
MEMBERS = {"package/dist/mermaid.min.js": "mermaid.min.js", "package/LICENSE": "LICENSE"}


class FetchError(Exception):
    """The tarball could not be obtained, or is not the pinned one."""


def _sha512(data: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode("ascii")


def _sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _in_place() -> bool:
    """True when the pinned version is extracted and unchanged since."""
    try:
        stamp = json.loads(STAMP.read_text(encoding="utf-8"))
        return (
            stamp.get("version") == MERMAID_VERSION
            and stamp.get("integrity") == MERMAID_INTEGRITY
            and all(_sha256_file(TARGET / name) == stamp["sha256"][name] for name in MEMBERS.values())
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return False


def _from_npm(npm: str) -> bytes:
    with tempfile.TemporaryDirectory() as folder:
        done = subprocess.run(
            [npm, "pack", f"mermaid@{MERMAID_VERSION}", "--loglevel=error", "--pack-destination", folder],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=600,
        )
        tarballs = list(Path(folder).glob("mermaid-*.tgz"))
        if done.returncode != 0 or len(tarballs) != 1:
            raise FetchError(f"npm pack failed: {_npm_reason(done.stderr) or f'exit status {done.returncode}'}")
        return tarballs[0].read_bytes()


def _npm_reason(stderr: str) -> str:
    """The line of npm's error report that says what went wrong (npm prints the code, the stack, a log path)."""
    lines = [line.removeprefix("npm error").strip() for line in stderr.splitlines() if line.startswith("npm error")]
    for line in lines:
        if "reason:" in line:
            return line
    told = [line for line in lines if line and not line.startswith(("code ", "syscall ", "errno ", "at "))]
    return told[0] if told else ""


def _from_registry() -> bytes:
    registry = os.environ.get("npm_config_registry") or os.environ.get("NPM_CONFIG_REGISTRY")
    url = f"{(registry or 'https://registry.npmjs.org/').rstrip('/')}/mermaid/-/mermaid-{MERMAID_VERSION}.tgz"
    try:
        with urllib.request.urlopen(url, timeout=120) as response:
            data: bytes = response.read()
            return data
    except OSError as error:
        raise FetchError(f"{url}: {getattr(error, 'reason', None) or error}") from error


def _tarball() -> bytes:
    local = os.environ.get("SSM_MERMAID_TARBALL")
    if local:
        try:
            return Path(local).read_bytes()
        except OSError as error:
            raise FetchError(f"SSM_MERMAID_TARBALL={local}: {error.strerror or error}") from error
    npm = shutil.which("npm")
    return _from_npm(npm) if npm else _from_registry()


def _extract(data: bytes) -> None:
    found = _sha512(data)
    if found != MERMAID_INTEGRITY:
        raise FetchError(f"the tarball's integrity is {found}, not the pinned {MERMAID_INTEGRITY}")
    TARGET.mkdir(parents=True, exist_ok=True)
    digests = {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        for member, name in MEMBERS.items():
            source = archive.extractfile(member)
            if source is None:
                raise FetchError(f"the tarball has no {member}")
            content = source.read()
            partial = TARGET / f".{name}.partial"
            partial.write_bytes(content)
            partial.replace(TARGET / name)
            digests[name] = hashlib.sha256(content).hexdigest()
    stamp = {"version": MERMAID_VERSION, "integrity": MERMAID_INTEGRITY, "sha256": digests}
    STAMP.write_text(json.dumps(stamp, indent=2) + "\n", encoding="utf-8")


def main() -> int:
    """Fetch, check and extract the pinned mermaid unless it is already in place; 1 on failure."""
    where = TARGET.relative_to(ROOT)
    if _in_place():
        print(f"==> mermaid {MERMAID_VERSION} already in {where}")
        return 0
    print(f"==> fetching mermaid {MERMAID_VERSION} into {where} (the diagrams, served with the site)")
    try:
        _extract(_tarball())
    except (FetchError, OSError, tarfile.TarError, subprocess.TimeoutExpired) as error:
        print(
            f"error: cannot fetch mermaid {MERMAID_VERSION} for the site's diagrams ({error}); "
            "connect to the npm registry, or set SSM_MERMAID_TARBALL to a copy of "
            f"mermaid-{MERMAID_VERSION}.tgz",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
