"""Build logsleuth/facts/raise_sites-<engine>.zip: where each indexed SGLang and vLLM release raises, asserts or logs an
error, under which condition, reading which settings, and in which of the indexed releases each check exists; and
raise_sites-<package>.zip, the same for the flashinfer, sgl-kernel, xgrammar and transformers versions those
releases pin (PACKAGE_DISTRIBUTIONS; no `messages/` members: a package's messages tell neither engine; they are
filed, for all four packages, in raise_sites-package_messages.zip: scripts/engine_index/package_messages.py).

    python scripts/engine_index/build.py            (make engine-index)
    python scripts/engine_index/build.py --check    (is the shipped index what this script builds?)

Each release's Python files come from its wheel on PyPI, over HTTP Range requests and only those the cache lacks
(fetch.py); nothing is installed or imported.  Each distinct file is read with `ast` once (extract.py), on
WORKERS processes.  A site is the same check in two releases when its file, function, kind, type, message,
condition and guards are the same; its line numbers may differ, and are kept per release.
The output is one zip per engine (a lookup opens only its frame's engine's), with one JSON member per source file
(`sglang/srt/server_args.py.json`, `vllm/config/parallel.py.json`), so a lookup reads only the file its frame
names; `messages/<N>.json`, the engine's raise and assert message templates filed by word in 64 shards, each with
the modules (file, function) that raise it (which engine's code raises a message, and where); and `index.json`: the releases, in order, and their wheels.  A site's lines are kept as runs of consecutive releases with the same lines:
[first release, last release, first line, last line], release indexes into that engine's list.  Deterministic
(sorted, fixed member times), so --check compares the files byte for byte.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import package_messages  # noqa: E402
from extract import Site, sites  # noqa: E402
from fetch import DEFAULT_CACHE, Cache, Release, fetch_release  # noqa: E402
from wheel_files import TRANSFER  # noqa: E402  (fetch.py put scripts/ on the path)

from logsleuth.facts import requires  # noqa: E402
from logsleuth.facts.engine_messages import LOGGED, OPENINGS, RAISED, filed_openings, filed_templates  # noqa: E402
from logsleuth.versions import version_key  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
OUTPUT_DIR = REPO / "logsleuth" / "facts"  # raise_sites-sglang.zip, raise_sites-vllm.zip
EXTRACTOR = Path(__file__).with_name("extract.py")
# The releases indexed.  SGLang: those with a flag catalog (logsleuth/fixes/catalogs/), 0.4.6.post2 (a real log's
# frames match it, issue 29), and every 0.5 release that is not a post-release.  vLLM: those with a flag catalog
# (0.11.2, 0.33.0) and every release PyPI received in the twelve months before 2026-12-04 (0.13.0, 2025-12-19, to
# 0.34.0; 0.12.0 came on 2025-12-03); and the three older releases the project's vLLM pattern fixtures are written
# for (0.6.6.post1, V0's code; 0.10.1.1; 0.11.0), whose checks moved or were reworded later: +0.3 MB, and the
# corpora's vLLM failures at a raise or assert statement placed go from 63 to 82 of 89.
# And the last release of each older minor line, so that a bare message only one engine's code ever raised names its
# engine (issue 28: 5 of 34 failure logs of a blind split were one exception line, often from 2024 to mid-2025):
# SGLang 0.3.6.post3, 0.4.0.post2, 0.4.3.post4, 0.4.5.post3 (2024-11 to 2025-04); vLLM 0.5.5, 0.6.3.post1, 0.7.3,
# 0.8.5.post1, 0.9.2 (2024-08 to 2025-07).  A template both engines hold at any indexed release decides nothing.
RELEASES = {
    "sglang": (
        "0.3.6.post3", "0.4.0.post2", "0.4.3.post4", "0.4.5.post3", "0.4.6.post2", "0.4.10.post2", "0.5.1", "0.5.2", "0.5.3", "0.5.4", "0.5.5", "0.5.6", "0.5.7", "0.5.8", "0.5.9",
        "0.5.10", "0.5.11", "0.5.12", "0.5.13", "0.5.14", "0.5.15", "0.5.16", "0.5.17", "0.5.18", "0.5.19", "0.5.20",
        "0.5.21", "0.5.22", "0.5.23",
    ),
    "vllm": (
        "0.5.5", "0.6.3.post1", "0.6.6.post1", "0.7.3", "0.8.5.post1", "0.9.2", "0.10.1.1", "0.11.0", "0.11.2", "0.13.0", "0.14.0", "0.14.1", "0.15.0", "0.15.1", "0.16.0", "0.17.0", "0.17.1", "0.18.0", "0.18.1",
        "0.19.0", "0.19.1", "0.20.0", "0.20.1", "0.20.2", "0.21.0", "0.22.0", "0.22.1", "0.23.0", "0.24.0", "0.25.0",
        "0.25.1", "0.26.0", "0.27.0", "0.27.1", "0.28.0", "0.29.0", "0.30.0", "0.31.0", "0.32.0", "0.33.0", "0.34.0",
    ),
}
# Only the server's code: SGLang's frontend language and benchmarks raise nothing a launch meets; vLLM's
# benchmarks are `vllm bench`, and its third_party/ is other projects' code vendored.
# The releases indexed for their own code only: the packages they pin are not (several of those versions have no
# wheel for CPython 3.11 on PyPI, sgl-kernel 0.0.3.post6; and a package's sites serve a frame in that package,
# which such old pastes rarely show).
PINS_NOT_INDEXED = {"sglang": ("0.3.6.post3", "0.4.0.post2", "0.4.3.post4", "0.4.5.post3"),
                    "vllm": ("0.5.5", "0.6.3.post1", "0.7.3", "0.8.5.post1", "0.9.2")}
INDEXED_PREFIXES: dict[str, tuple[str, ...]] = {"sglang": ("sglang/srt/", "sglang/launch_server.py"), "vllm": ("vllm/",)}
LEFT_OUT_PREFIXES: dict[str, tuple[str, ...]] = {"sglang": (), "vllm": ("vllm/third_party/", "vllm/benchmarks/")}

# The packages whose code the engines run (issue 29 item 5), by their import names; PyPI's names are in fetch.py.
# Each is indexed for exactly the versions the indexed engine releases pin with `==` (facts/requires.json): what a
# release's range allows on the day it was installed is not knowable offline.  transformers, which vLLM pins by a
# range, also for: the last 4.x release (4.57.6, 2026-01-16), which every vLLM range `<5` (0.11.2 to 0.19.0) installs
# since; the newest release within the range of the newest vLLM indexed (5.22.2, vLLM 0.34.0's `<5.23.0`); and the
# newest on PyPI (5.25.0, 2026-12-01) when this list was written, 2026-12-04.
PACKAGE_DISTRIBUTIONS = {"flashinfer": "flashinfer-python", "sgl_kernel": "sgl-kernel", "xgrammar": "xgrammar",
                         "transformers": "transformers"}
NEWEST_RELEASES = {"transformers": ("4.57.6", "5.22.2", "5.25.0")}
# Pins PyPI has no file for: vLLM 0.34.0 pins flashinfer-python 0.7.3, which PyPI does not list (its wheels come
# from flashinfer's own index).
UNPUBLISHED = {"flashinfer": ("0.7.3",)}
# transformers' models/ tree is ~90% of its Python (one module per architecture, ~400 of them, each release); a
# serving engine meets transformers' code at loading a model's config, tokenizer and processor, resolving a remote
# or auto class, and quantization: those modules are indexed, models/ only for models/auto/ (which resolves a
# config's model_type).  An architecture's own modeling file raises in training or in transformers' own generate,
# which an engine does not run.  flashinfer/data/ is vendored code (CUTLASS's Python), not flashinfer's.
INDEXED_PREFIXES |= {
    "flashinfer": ("flashinfer/",), "sgl_kernel": ("sgl_kernel/",), "xgrammar": ("xgrammar/",),
    "transformers": tuple(f"transformers/{name}" for name in (
        "configuration_utils.py", "tokenization_", "processing_utils.py", "image_processing", "feature_extraction",
        "video_processing", "modeling_utils.py", "modeling_rope_utils.py", "core_model_loading.py",
        "dynamic_module_utils.py", "convert_slow_tokenizer.py", "generation/configuration_utils.py", "utils/",
        "integrations/", "quantizers/", "models/auto/")),
}
LEFT_OUT_PREFIXES |= {"flashinfer": ("flashinfer/data/",), "sgl_kernel": (), "xgrammar": (), "transformers": ()}
WORKERS = 2  # processes reading sources with ast: this machine's cores
BATCH = 64  # contents per worker job


def package_releases() -> dict[str, tuple[str, ...]]:
    """Each package's versions to index, oldest first: those the indexed engine releases pin with `==`, and
    NEWEST_RELEASES."""
    found: dict[str, tuple[str, ...]] = {}
    for package, distribution in PACKAGE_DISTRIBUTIONS.items():
        pinned = {specifier.removeprefix("==") for engine, versions in RELEASES.items() for version in versions
                  if version not in PINS_NOT_INDEXED[engine] and (pin := requires.pin(engine, version, distribution)) is not None
                  and re.fullmatch(r"==[\w.]+", specifier := pin.specifier)}
        chosen = (pinned | set(NEWEST_RELEASES.get(package, ()))) - set(UNPUBLISHED.get(package, ()))
        found[package] = tuple(sorted(chosen, key=version_key))
    return found


# SGLang's code logs a warning and, in its CI only, raises the same words (`logger.warning(msg)` then `if
# crash_on_warnings(): raise ValueError(msg)`, sglang/srt/utils: crash_on_warnings() is SGLANG_IS_IN_CI; the model
# registry's "Ignore import error when loading …", the sampler's "Detected errors during sampling! NaN in the
# logits."): in a user's run those words are a warning, so they are not filed as a message the engine raises (a
# paste's last record reading so is no failure).  The site itself stays in the index, where a traceback places it.
TEST_MODE_GUARDS = ("crash_on_warnings()", "is_in_ci()", "SGLANG_IS_IN_CI")


def raised_only_in_ci(site: Site) -> bool:
    return any(guard in condition for condition in site.guards for guard in TEST_MODE_GUARDS)


def indexed(engine: str, name: str) -> bool:
    return name.startswith(INDEXED_PREFIXES[engine]) and not name.startswith(LEFT_OUT_PREFIXES[engine])


def _sites_of(database: Path, keys: list[str]) -> dict[str, str]:
    """A worker's job: the sites of a batch of contents, as JSON records, each source read from the cache."""
    cache = Cache(database.parent, read_only=True)
    return {key: json.dumps([site.record() for site in sites(cache.source(key).decode("utf-8", "replace"),
                                                             key.rsplit(":", 2)[0])])
            for key in keys}


def read_releases(cache: Cache, releases: dict[str, tuple[str, ...]]) -> dict[tuple[str, str], Release]:
    """Every release's files in the cache (fetched where missing), and every indexed content's sites.  The workers
    read a release's new contents with ast while the next release is fetched."""
    extractor = hashlib.sha256(EXTRACTOR.read_bytes()).hexdigest()[:16]
    found: dict[tuple[str, str], Release] = {}
    submitted: set[str] = set()
    pending: list[Future[dict[str, str]]] = []
    started = time.monotonic()

    def store(done: list[Future[dict[str, str]]]) -> None:
        for future in done:
            cache.add_sites(extractor, future.result())
            pending.remove(future)

    with ProcessPoolExecutor(WORKERS) as pool:
        for engine, versions in releases.items():
            for version in versions:
                # A package's release keeps only what is indexed (transformers' models/ is never fetched); an
                # engine's keeps all its Python files, as its cached releases do.
                wanted = None if engine in RELEASES else (lambda name, engine=engine: indexed(engine, name))
                release = found[engine, version] = fetch_release(engine, version, cache, wanted)
                keys = sorted({key for name, key in release.files.items() if indexed(engine, name)} - submitted)
                submitted.update(keys)
                missing = sorted(set(keys) - set(cache.sites(extractor, keys)))
                pending.extend(pool.submit(_sites_of, cache.path, missing[start:start + BATCH])
                               for start in range(0, len(missing), BATCH))
                store([future for future in pending if future.done()])
        store(list(pending))
    print(f"fetched and read the sources with ast in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return found


def release_sites(cache: Cache, release: Release, extractor: str, memo: dict[str, list[Site]]) -> list[Site]:
    wanted = sorted(key for name, key in release.files.items() if indexed(release.engine, name))
    unread = [key for key in wanted if key not in memo]
    for key, text in cache.sites(extractor, unread).items():
        memo[key] = [Site.from_record(record) for record in json.loads(text)]
    return [site for key in wanted for site in memo[key]]


def merged(versions: tuple[str, ...], per_release: dict[str, list[Site]]) -> dict[str, list[dict[str, object]]]:
    """Source file -> one entry per check, with its lines in each release that holds it."""
    entries: dict[tuple[str, ...], dict[str, object]] = {}
    lines_of: dict[tuple[str, ...], dict[int, tuple[int, int]]] = {}
    for number, version in enumerate(versions):
        for site in per_release[version]:
            key = site.identity()
            entries.setdefault(key, {
                "function": site.function, "kind": site.kind, "type": site.type, "message": site.message,
                "condition": site.condition, "guards": list(site.guards), "fields": list(site.fields),
                "text": list(site.text),
            })
            lines_of.setdefault(key, {})[number] = (site.first_line, site.last_line)
    by_file: dict[str, list[dict[str, object]]] = {}
    for key, entry in entries.items():
        entry["lines"] = _runs(lines_of[key])
        by_file.setdefault(key[0], []).append(entry)
    for file_entries in by_file.values():
        file_entries.sort(key=lambda e: json.dumps(e, sort_keys=True))
    return by_file


def _runs(lines: dict[int, tuple[int, int]]) -> list[list[int]]:
    """Consecutive releases with the same lines, as [first, last, first line, last line]."""
    runs: list[list[int]] = []
    for number in sorted(lines):
        first, last = lines[number]
        if runs and runs[-1][1] == number - 1 and runs[-1][2:] == [first, last]:
            runs[-1][1] = number
        else:
            runs.append([number, number, first, last])
    return runs


def _member(archive: zipfile.ZipFile, name: str, data: object) -> None:
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, json.dumps(data, sort_keys=True, separators=(",", ":")), compresslevel=9)


def build(cache: Cache, directory: Path) -> None:
    """Each engine's index, `raise_sites-<engine>.zip`, into `directory`."""
    everything = {**RELEASES, **package_releases()}
    found = read_releases(cache, everything)
    extractor = hashlib.sha256(EXTRACTOR.read_bytes()).hexdigest()[:16]
    for engine, versions in everything.items():
        memo: dict[str, list[Site]] = {}
        per_release = {version: release_sites(cache, found[engine, version], extractor, memo) for version in versions}
        with zipfile.ZipFile(directory / output_name(engine), "w") as archive:
            for file, entries in sorted(merged(versions, per_release).items()):
                _member(archive, f"{file}.json", entries)
            if engine not in RELEASES:  # a package's messages are no evidence for either engine
                _member(archive, "index.json", _index(engine, versions, found))
                continue
            # Which engine raises a message (logsleuth/facts/engine_messages.py): its raise, assert and build
            # templates, by anchor word and by opening word; and which logs it as an error.
            # (with the module, file and function, of each check that raises it: where a message shown without
            # frames was raised)
            raised = sorted({(site.type, site.message, site.file, site.function) for sites_ in per_release.values()
                             for site in sites_ if site.kind != "log" and not raised_only_in_ci(site)})
            logged = sorted({("log", site.message, site.file, site.function) for sites_ in per_release.values()
                             for site in sites_ if site.kind == "log"})
            shard_sets: tuple[tuple[str, dict[int, Any]], ...] = (
                (RAISED, filed_templates(raised)), (OPENINGS, filed_openings(raised)), (LOGGED, filed_templates(logged)))
            for members, shards in shard_sets:
                for number, shard in shards.items():
                    _member(archive, f"{members}/{number}.json", shard)
            _member(archive, "index.json", {
                "schema": 2, "engine": engine, "releases": list(versions),
                "wheels": [found[engine, version].wheel for version in versions],
                "how": "scripts/engine_index/build.py: each release's Python files from its wheel on PyPI, read with ast",
            })


def _index(package: str, versions: tuple[str, ...], found: dict[tuple[str, str], Release]) -> dict[str, object]:
    """A package's index.json: its releases, their files, and which indexed engine releases pin each."""
    pinned_by = {version: [f"{engine} {release}" for engine, releases in RELEASES.items() for release in releases
                           if (pin := requires.pin(engine, release, PACKAGE_DISTRIBUTIONS[package])) is not None
                           and pin.specifier == f"=={version}"] for version in versions}
    return {
        "schema": 2, "engine": package, "distribution": PACKAGE_DISTRIBUTIONS[package], "releases": list(versions),
        "wheels": [found[package, version].wheel for version in versions], "pinned_by": pinned_by,
        "indexed": list(INDEXED_PREFIXES[package]), "left_out": list(LEFT_OUT_PREFIXES[package]),
        "how": "scripts/engine_index/build.py: each release's Python files from its wheel (or sdist) on PyPI, read with ast",
    }


def output_name(engine: str) -> str:
    return f"raise_sites-{engine}.zip"


def ship(output: Path, data: bytes, check: bool, script: str) -> int:
    """Write a built facts file, or (`check`) say whether the shipped one is byte for byte what `script` builds."""
    if check:
        if not output.exists() or output.read_bytes() != data:
            print(f"{output} is not what {script} builds: run `make engine-index`", file=sys.stderr)
            return 1
        return 0
    output.write_bytes(data)
    print(f"{output}: {len(data)} bytes")
    return 0


def ship_main(doc: str, output: Path, built: Callable[[Cache], bytes], script: str) -> int:
    """The command line of a script that writes one facts file from the cache (module_names.py, classes.py,
    architectures.py): write it, or with --check say whether the shipped one is what `built` makes."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the shipped file differs")
    args = parser.parse_args()
    return ship(output, built(Cache(DEFAULT_CACHE)), args.check, script)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the shipped index differs")
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help=f"sources and sites (default {DEFAULT_CACHE})")
    args = parser.parse_args()
    started = time.monotonic()
    try:
        with tempfile.TemporaryDirectory(prefix="logsleuth-engine-index-") as tmp:
            build(Cache(args.cache), Path(tmp))
            package_messages.write(Path(tmp))  # the packages' message shards, from the package zips just written
            names = [output_name(engine) for engine in (*RELEASES, *PACKAGE_DISTRIBUTIONS, package_messages.PACKAGE_MESSAGES)]
            if args.check:
                stale = [name for name in names
                         if not (OUTPUT_DIR / name).exists() or (OUTPUT_DIR / name).read_bytes() != (Path(tmp) / name).read_bytes()]
                print(f"{', '.join(stale)} differ: run make engine-index" if stale else "the shipped index is up to date",
                      file=sys.stderr)
                return 1 if stale else 0
            for name in names:
                (OUTPUT_DIR / name).write_bytes((Path(tmp) / name).read_bytes())
                print(f"wrote {OUTPUT_DIR / name} ({(OUTPUT_DIR / name).stat().st_size >> 10} KiB)", file=sys.stderr)
        return 0
    finally:
        if TRANSFER.requests:  # releases missing from the cache were read from PyPI
            print(f"read {TRANSFER.bytes / 1e6:.1f} MB from PyPI in {TRANSFER.requests} requests", file=sys.stderr)
        print(f"took {time.monotonic() - started:.0f} s", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
