#!/usr/bin/env python3
"""What every SGLang and vLLM release pins, read from its real wheel: logsleuth/facts/requires.json.

    python scripts/facts/requires_dist.py                  # add the releases the index offers that the file lacks
    python scripts/facts/requires_dist.py --refresh        # read every release again
    python scripts/facts/requires_dist.py --engine sglang --version 0.5.9 --version 0.5.23

For each release `pip index versions` lists, `pip download --no-deps` fetches its wheel (its sdist where the
release has no wheel: vLLM 0.0.1 to 0.1.3) into a temporary directory; nothing is installed, and the file is
deleted once read.  Requires-Dist is read from the wheel's `*.dist-info/METADATA`; for an sdist from its
PKG-INFO, else the `*.egg-info/requires.txt` setuptools wrote into it, else pyproject.toml's
[project].dependencies.  No pin is ever typed by hand: a release the index does not offer, or whose file
cannot be read, is listed under "unread" with the reason.

What is kept of each release (`release_entry`), for Linux GPU servers (x86_64 and aarch64, Python 3.9-3.13):
- "requires": {distribution: specifier} of what a plain `pip install <engine>==V` installs;
- "extras": {extra: {distribution: specifier}} of what only an extra adds, as the extra declares it, and
  "includes": {extra: [extra, ...]} where an extra names others of the same engine (`sglang[srt]` needs
  `sglang[runtime_common]`); the extras for the engine's own development (test, dev, dev-*) and the ones
  that only bundle others (all, all-*) are left out;
- "markers": {distribution: ["specifier; marker", ...]} for a requirement that holds only on some of those
  platforms or Pythons; one that holds on none (macOS, s390x only) is dropped;
- "file" and "sha256": the file it was read from, so every pin can be checked against PyPI.
Distribution and extra names are normalized (PEP 503: `flashinfer_python` -> `flashinfer-python`).
"""

from __future__ import annotations

import argparse
import email.parser
import hashlib
import json
import re
import subprocess
import sys
import tarfile
import tempfile
import tomllib
import zipfile
from collections.abc import Iterable
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

ROOT = Path(__file__).resolve().parent.parent.parent
OUT = ROOT / "logsleuth" / "facts" / "requires.json"
ENGINES = ("sglang", "vllm")
# The platforms a requirement must hold on to be kept: Linux GPU servers.
PLATFORMS = tuple(
    {
        "sys_platform": "linux",
        "platform_system": "Linux",
        "os_name": "posix",
        "platform_machine": machine,
        "python_version": python,
        "python_full_version": f"{python}.0",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
    }
    for machine in ("x86_64", "aarch64")
    for python in ("3.9", "3.10", "3.11", "3.12", "3.13")
)
LEFT_OUT_EXTRAS = re.compile(r"(test|tests|dev|dev-.*|all|all-.*|docs?|lint)")


def normalize(name: str) -> str:
    """PEP 503: `Flashinfer_Python` -> `flashinfer-python`."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _holds(marker: Marker | None, extra: str, environment: dict[str, str]) -> bool:
    return marker is None or marker.evaluate({**environment, "extra": extra})


def _scope(requirement: Requirement) -> tuple[str, list[bool]] | None:
    """The extra a requirement belongs to ("" for none) and where it holds (one bool per platform), or None
    when it holds nowhere a server runs."""
    marker = requirement.marker
    for extra in ("", *re.findall(r'extra\s*==\s*"([^"]*)"', str(marker or ""))):
        where = [_holds(marker, extra, platform) for platform in PLATFORMS]
        if any(where):
            return normalize(extra), where
    return None


def _platform_marker(marker: Marker | None) -> str:
    """The marker's text without its `extra == "x"` clause (what is left names platforms or Pythons)."""
    text = str(marker) if marker is not None else ""
    text = re.sub(r'\s*and\s+extra\s*==\s*"[^"]*"|extra\s*==\s*"[^"]*"\s*(and\s+)?', "", text).strip()
    return text


def release_entry(requires_dist: Iterable[str], engine: str) -> dict:
    """What one release pins (the module docstring), from its Requires-Dist lines."""
    base: dict[str, str] = {}
    by_extra: dict[str, dict[str, str]] = {}
    includes: dict[str, list[str]] = {}
    markers: dict[str, list[str]] = {}
    for line in requires_dist:
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            continue
        found = _scope(requirement)
        if found is None:
            continue
        extra, where = found
        name = normalize(requirement.name)
        if name == engine:  # sglang[runtime_common]: that extra's requirements, not a requirement
            includes.setdefault(extra, []).extend(normalize(x) for x in requirement.extras)
            continue
        specifier = f"@ {requirement.url}" if requirement.url else str(requirement.specifier)
        if not all(where):
            markers.setdefault(name, []).append(f"{specifier}; {_platform_marker(requirement.marker)}")
        table = by_extra.setdefault(extra, {}) if extra else base
        # Two lines for one distribution (one per platform): the one that holds on x86_64 is the table's.
        if name not in table or where[0]:
            table[name] = specifier
    kept = {
        extra: dict(sorted(table.items()))
        for extra, table in by_extra.items()
        if not LEFT_OUT_EXTRAS.fullmatch(extra)
        for table in [{name: spec for name, spec in table.items() if name not in base}]
        if table
    }
    entry: dict = {"requires": dict(sorted(base.items())), "extras": dict(sorted(kept.items()))}
    named = {
        extra: sorted({name for name in names if name in kept})
        for extra, names in includes.items()
        if extra and not LEFT_OUT_EXTRAS.fullmatch(extra)
    }
    if any(named.values()):
        entry["includes"] = {extra: names for extra, names in sorted(named.items()) if names}
    if markers:
        entry["markers"] = dict(sorted(markers.items()))
    return entry


def metadata_requires(text: str) -> list[str]:
    """The Requires-Dist lines of a METADATA or PKG-INFO file."""
    return email.parser.Parser().parsestr(text, headersonly=True).get_all("Requires-Dist") or []


def requirements_txt(text: str) -> list[str]:
    """setuptools' `egg-info/requires.txt`: plain lines, then `[extra]` or `[extra:marker]` sections."""
    lines: list[str] = []
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        extra, _, marker = section.partition(":")
        clauses = [f"({marker})"] if marker else []
        clauses += [f'extra == "{extra}"'] if extra else []
        lines.append(f"{line}; {' and '.join(clauses)}" if clauses else line)
    return lines


def read_archive(path: Path) -> list[str]:
    """The Requires-Dist lines of a downloaded wheel or sdist (the module docstring)."""
    if path.suffix == ".whl":
        with zipfile.ZipFile(path) as wheel:
            name = next(n for n in wheel.namelist() if n.count("/") == 1 and n.endswith(".dist-info/METADATA"))
            return metadata_requires(wheel.read(name).decode())
    with tarfile.open(path) as sdist:
        members = {member.name.split("/", 1)[-1]: member for member in sdist.getmembers() if member.isfile()}

        def text(name: str) -> str:
            handle = sdist.extractfile(members[name])
            return handle.read().decode() if handle else ""

        if "PKG-INFO" in members:
            requires = metadata_requires(text("PKG-INFO"))
            if requires:
                return requires
        egg = next((name for name in members if re.fullmatch(r"[^/]+\.egg-info/requires\.txt", name)), None)
        if egg is not None:
            return requirements_txt(text(egg))
        if "pyproject.toml" in members:
            project = tomllib.loads(text("pyproject.toml")).get("project", {})
            optional = project.get("optional-dependencies", {})
            lines = list(project.get("dependencies", []))
            lines += [f'{line}; extra == "{extra}"' for extra, group in optional.items() for line in group]
            return lines
    raise ValueError(f"{path.name}: no Requires-Dist, requires.txt or pyproject dependencies")


def _pip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pip", *args], capture_output=True, text=True, check=False)


def index_versions(engine: str) -> list[str]:
    """The releases the package index offers (`pip index versions`), oldest first."""
    done = _pip("index", "versions", engine)
    found = re.search(r"Available versions:\s*(.+)", done.stdout)
    if found is None:
        raise SystemExit(f"pip index versions {engine}: {done.stderr.strip() or done.stdout.strip()}")
    return sorted((v.strip() for v in found.group(1).split(",")), key=_order)


def _order(version: str) -> tuple[int, Version | str]:
    try:
        return 0, Version(version)
    except InvalidVersion:
        return 1, version


def fetch_release(engine: str, version: str, *, sdist: bool = False) -> dict:
    """One release's entry, read from the file pip downloads: its wheel, or with `sdist` its source archive
    (pip prepares an sdist's metadata, which installs its build requirements: minutes, so sdists come last)."""
    with tempfile.TemporaryDirectory(prefix="logsleuth-requires-") as tmp:
        kind = f"--no-binary={engine}" if sdist else "--only-binary=:all:"  # its build requirements as wheels
        done = _pip("download", "--no-deps", "--no-cache-dir", "--quiet", kind, "--dest", tmp, f"{engine}=={version}")
        files = sorted(Path(tmp).iterdir())
        if done.returncode != 0 or not files:
            raise ValueError((done.stderr.strip().splitlines() or ["pip download failed"])[-1])
        path = files[0]
        entry = release_entry(read_archive(path), engine)
        return {"file": path.name, "sha256": hashlib.sha256(path.read_bytes()).hexdigest(), **entry}


def load(path: Path) -> dict:
    if path.exists():
        return json.loads(path.read_text())
    return {}


def write(path: Path, data: dict) -> None:
    """Compact, one release per line: the file stays readable in a diff."""
    lines = ["{"]
    lines.append(f'"source": {json.dumps(data["source"])},')
    lines.append('"engines": {')
    engines = list(data["engines"].items())
    for e, (engine, releases) in enumerate(engines):
        lines.append(f"{json.dumps(engine)}: {{")
        items = sorted(releases.items(), key=lambda item: _order(item[0]))
        for r, (version, entry) in enumerate(items):
            comma = "," if r < len(items) - 1 else ""
            lines.append(f"{json.dumps(version)}: {json.dumps(entry, separators=(',', ':'))}{comma}")
        lines.append("}" + ("," if e < len(engines) - 1 else ""))
    lines.append("},")
    lines.append(f'"unread": {json.dumps(data.get("unread", {}), sort_keys=True)}')
    lines.append("}")
    path.write_text("\n".join(lines) + "\n")


SOURCE = (
    "Requires-Dist of each release's wheel on PyPI (its sdist's PKG-INFO or egg-info/requires.txt where the release "
    "has no wheel), downloaded with `pip download --no-deps` and read by scripts/facts/requires_dist.py (make facts); "
    "'file' and 'sha256' name the file read.  Never edited by hand."
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engine", choices=ENGINES, action="append", help="only this engine (repeatable)")
    parser.add_argument("--version", action="append", help="only this release (repeatable)")
    parser.add_argument("--refresh", action="store_true", help="read again the releases the file already has")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    data = load(args.out)
    data["source"] = SOURCE
    data.setdefault("engines", {})
    unread: dict[str, dict[str, str]] = data.setdefault("unread", {})
    for engine in args.engine or ENGINES:
        releases = data["engines"].setdefault(engine, {})
        versions = args.version or index_versions(engine)
        wanted = [version for version in reversed(versions) if args.refresh or version not in releases]
        for sdist in (False, True):  # every wheel first, newest release first; then the releases without one
            for version in wanted:
                if sdist and version in releases and version not in unread.get(engine, {}):
                    continue
                try:
                    releases[version] = fetch_release(engine, version, sdist=sdist)
                    unread.get(engine, {}).pop(version, None)
                    print(f"{engine} {version}: {releases[version]['file']}", flush=True)
                except (ValueError, OSError, StopIteration) as error:
                    unread.setdefault(engine, {})[version] = str(error)[:200]
                    print(f"{engine} {version}: not read: {error}", file=sys.stderr, flush=True)
                write(args.out, data)  # after each release: a long run interrupted keeps what it read
    data["unread"] = {engine: versions for engine, versions in unread.items() if versions}
    write(args.out, data)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
