"""Loading patterns from the user's layers: broken files and catastrophic regexes are
reported and skipped, through the real CLI (a subprocess) and in-process."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from logsleuth.diagnosis import library, match
from logsleuth.diagnosis.library import load_patterns, parse_pattern
from logsleuth.diagnosis.match import match_failure
from logsleuth.errors import PatternError
from logsleuth.fixes.builders import BUILDERS
from logsleuth.models import ExceptionBlock, Failure
from logsleuth.versions import matches as version_matches

REPO = Path(__file__).resolve().parents[2]
OOM_LOG = REPO / "tests" / "fixtures" / "patterns" / "sglang-gpu-oom-kv-cache" / "positive-0.5.9.log"

GOOD = """\
id = "user-good"
title = "A user pattern"
category = "gpu-oom"
root_cause = "mine"

[[match]]
message = "never matches anything 1f0c2e"
"""

BAD_TOML = """\
id = "user-bad-toml"
title = "Broken"
category = "gpu-oom
root_cause = "x"
"""

BAD_REGEX = """\
id = "user-bad-regex"
title = "Broken regex"
category = "gpu-oom"
root_cause = "x"

[[match]]
exception_type = "ValueError"
message = "unclosed (group"
"""

UNKNOWN_KEY = """\
id = "user-unknown-key"
title = "Unknown key"
category = "gpu-oom"
root_cause = "x"

[[match]]
exception_type = "ValueError"
mesage = "typo"
"""


def run_cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "logsleuth", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
    )


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


def test_broken_user_patterns_are_reported_with_file_and_line_and_skipped(tmp_path: Path) -> None:
    user = tmp_path / "patterns"
    user.mkdir()
    write(user, "good.toml", GOOD)
    toml_file = write(user, "bad-toml.toml", BAD_TOML)
    regex_file = write(user, "bad-regex.toml", BAD_REGEX)
    key_file = write(user, "unknown-key.toml", UNKNOWN_KEY)

    proc = run_cli("diagnose", str(OOM_LOG), "--patterns", str(user), "--no-user-patterns", "--format", "json")

    assert proc.returncode == 1, proc.stderr  # a failure was found: the run went on
    assert f"{toml_file}:3: invalid TOML" in proc.stderr
    assert f"{regex_file}:8: match.message: invalid regular expression" in proc.stderr
    assert f"{key_file}:8: unknown match key(s): mesage" in proc.stderr
    assert proc.stderr.count("pattern skipped") == 3
    assert '"pattern": "sglang-gpu-oom-kv-cache"' in proc.stdout  # bundled patterns still work


def test_missing_pattern_directory_is_reported(tmp_path: Path) -> None:
    proc = run_cli("diagnose", str(OOM_LOG), "--patterns", str(tmp_path / "nope"), "--no-user-patterns", "--format", "json")
    assert proc.returncode == 1
    assert "pattern directory not found" in proc.stderr


CATASTROPHIC = """\
id = "user-catastrophic"
title = "Backtracking forever"
category = "invalid-flag-value"
priority = 1
root_cause = "never"

[[match]]
exception_type = "ValueError"
message = '^(a|a)*$'
"""


def test_catastrophic_user_regex_is_stopped_and_reported(tmp_path: Path) -> None:
    user = tmp_path / "patterns"
    user.mkdir()
    write(user, "catastrophic.toml", CATASTROPHIC)
    log = tmp_path / "server.log"
    message = "a" * 60 + "b"
    log.write_text(
        "Traceback (most recent call last):\n"
        '  File "/opt/venv/lib/python3.11/site-packages/sglang/srt/server_args.py", line 5131, in check_server_args\n'
        "    raise ValueError(message)\n"
        f"ValueError: {message}\n",
        encoding="utf-8",
    )
    started = time.monotonic()
    proc = run_cli("diagnose", str(log), "--patterns", str(user), "--no-user-patterns", "--format", "json")
    elapsed = time.monotonic() - started
    assert proc.returncode == 1, proc.stderr
    assert "user-catastrophic" in proc.stderr and "timed out" in proc.stderr
    assert elapsed < 60  # cut by the pattern's time limit: a bound only a hang fails


def test_match_failure_reports_timeouts_to_on_error() -> None:
    pattern = parse_pattern(CATASTROPHIC, "catastrophic.toml", "--patterns")
    failure = Failure(
        kind="bare", exceptions=(ExceptionBlock("ValueError", "a" * 60 + "b"),), line=1, offset=0, end_offset=10
    )
    errors: list[str] = []
    assert match_failure([pattern], failure, on_error=errors.append) is None
    assert errors and "timed out" in errors[0]


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        (BAD_TOML, "x.toml:3", "invalid TOML"),
        (BAD_REGEX, "x.toml:8", "invalid regular expression"),
        (UNKNOWN_KEY, "x.toml:8", "unknown match key"),
        (GOOD.replace('category = "gpu-oom"', 'category = "gpu-oops"'), "x.toml:3", "unknown category"),
        (GOOD.replace('id = "user-good"', 'id = "User Good"'), "x.toml:1", "id must be"),
        (GOOD + 'versions = ["~0.5"]\n', "x.toml", "versions"),
        (GOOD + '\n[fix]\nbuilder = "no_such_builder"\n', "x.toml", "not a known fix builder"),
        (GOOD + '\n[fix]\nsumary = "typo"\n', "x.toml", "unknown fix key"),
        (GOOD.replace('root_cause = "mine"\n', ""), "x.toml:1", "missing required key 'root_cause'"),
    ],
)
def test_parse_errors_name_file_and_line(text: str, where: str, message: str) -> None:
    with pytest.raises(PatternError) as info:
        parse_pattern(text, "x.toml", "user", known_builders=BUILDERS)
    assert str(info.value).startswith(where)
    assert message in str(info.value)


def test_every_builder_name_resolves_to_a_function() -> None:
    # the registry imports a builder at its first look-up: a typo in a module or function name would otherwise surface
    # only when a pattern naming it fires (review L6 of stop 48)
    assert len(BUILDERS) >= 30
    assert all(callable(BUILDERS[name]) for name in BUILDERS)


def test_bundled_patterns_load_strictly() -> None:
    patterns = load_patterns(include_user=False, strict=True, known_builders=BUILDERS)
    assert not patterns.errors
    assert len(patterns.patterns) >= 30


@pytest.mark.parametrize(
    ("versions", "version", "expected"),
    [
        ((), "0.5.9", True),
        (("<0.5.23",), None, True),
        (("<0.5.23",), "0.4.10.post2", True),
        (("<0.5.23",), "0.5.9", True),
        (("<0.5.23",), "0.5.23", False),
        ((">=0.5.23",), "0.5.23", True),
        ((">=0.5,<0.5.23", "0.4.10.post2"), "0.4.10.post2", True),
        ((">=0.5,<0.5.23",), "0.4.10.post2", False),
        ((">0.4.10",), "0.4.10.post2", True),
        (("<0.5.0",), "0.5.0rc1", True),  # a release candidate comes before the release
        ((">=0.5.0",), "0.5.0rc1", False),
    ],
)
def test_version_constraints(versions: tuple[str, ...], version: str | None, expected: bool) -> None:
    assert version_matches(versions, version) is expected


# -- the parsed-TOML cache (logsleuth/toml_cache.py) ---------------------------------------------------------


def test_cached_patterns_equal_the_freshly_parsed_ones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_memory_cache: None) -> None:
    from logsleuth import toml_cache as pattern_cache

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    first = load_patterns(include_user=False)  # parses the TOML and writes the cache
    (cache_file,) = (tmp_path / "logsleuth").glob("patterns-*.json")
    written = cache_file.read_text()
    second = load_patterns(include_user=False)  # reads it
    assert cache_file.read_text() == written
    assert second.patterns == first.patterns
    fresh = [
        parse_pattern(text, path)
        for path, text in library.bundled_files()
        if not library.is_health_pattern(tomllib.loads(text))
    ]
    assert {p.id: p for p in fresh} == {p.id: p for p in second.patterns}
    assert pattern_cache.cache_dir() == tmp_path / "logsleuth"


@pytest.fixture
def no_memory_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """The on-disk cache alone: every load parses (library._bundled_patterns keeps the parsed layer in memory
    for as long as the files are unchanged, which would answer these tests without reading the disk cache)."""
    monkeypatch.setattr(library, "_bundled_patterns", library._parse_bundled)


def test_the_parsed_layer_is_kept_in_memory_until_a_file_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A copy of the bundled directory: the same objects while it is unchanged; an edited file is read again."""
    import shutil

    copy = tmp_path / "patterns"
    shutil.copytree(library.paths.bundled_patterns_dir(), copy)
    monkeypatch.setattr(library.paths, "bundled_patterns_dir", lambda: copy)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    first = load_patterns(include_user=False).patterns
    assert load_patterns(include_user=False).patterns[0] is first[0]
    edited = next(copy.glob("sglang/*.toml"))
    text = edited.read_text()
    edited.write_text(text.replace('title = "', 'title = "EDITED ', 1) + "\n")  # a new size: a new signature
    again = load_patterns(include_user=False).patterns
    assert any(p.title.startswith("EDITED ") for p in again)
    assert not any(p.title.startswith("EDITED ") for p in first)


def test_a_corrupt_cache_is_parsed_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_memory_cache: None) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    expected = load_patterns(include_user=False).patterns
    (cache_file,) = (tmp_path / "logsleuth").glob("patterns-*.json")
    for garbage in ("{not json", "[]", '{"a": 1}', "[1, 2]"):
        cache_file.write_text(garbage)
        assert load_patterns(include_user=False).patterns == expected
        rewritten = json.loads(cache_file.read_text())  # parsed over and written again
        assert isinstance(rewritten, list) and len(rewritten) == len(list(library.bundled_files()))


def test_an_unwritable_cache_directory_is_no_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    assert len(load_patterns(include_user=False).patterns) >= 30


def test_an_edited_pattern_file_misses_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_memory_cache: None) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    load_patterns(include_user=False)
    files = list(library.bundled_files())
    path, text = files[0]
    edited = text.replace('title = "', 'title = "EDITED ', 1)
    assert edited != text
    monkeypatch.setattr(library, "bundled_files", lambda: iter([(path, edited), *files[1:]]))
    patterns = load_patterns(include_user=False).patterns
    assert patterns[0].title.startswith("EDITED ") or any(p.title.startswith("EDITED ") for p in patterns)
    assert len(list((tmp_path / "logsleuth").glob("patterns-*.json"))) == 2


def test_a_cache_miss_removes_files_no_run_used_for_a_month(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_memory_cache: None) -> None:
    """Each upgrade leaves its cache files behind; a later miss clears those unused for 30 days, and only those."""
    import os
    import time

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    cache = tmp_path / "logsleuth"
    cache.mkdir()
    long_ago = time.time() - 40 * 24 * 3600
    stale, recent, other_kind = cache / "patterns-old.json", cache / "patterns-recent.json", cache / "facts-old.json"
    for file in (stale, recent, other_kind):
        file.write_text("[]")
    for file in (stale, other_kind):
        os.utime(file, (long_ago, long_ago))
    load_patterns(include_user=False)  # a miss: parses, writes its own file, prunes its kind
    assert not stale.exists()
    assert recent.exists() and other_kind.exists()
    (written,) = [f for f in cache.glob("patterns-*.json") if f != recent]
    os.utime(written, (long_ago, long_ago))
    load_patterns(include_user=False)  # a hit marks the file used again
    assert written.stat().st_mtime > long_ago + 24 * 3600


# -- hardening: timeouts disable a pattern, bad entries are named, the cache is never trusted blindly --------

CATASTROPHIC_TYPE = CATASTROPHIC.replace("exception_type = \"ValueError\"\nmessage = '^(a|a)*$'",
                                         "exception_type = '(a|a)*'")


def test_a_catastrophic_exception_type_regex_is_contained() -> None:
    """exception_type is matched with fullmatch: it must be guarded by the timeout like every other key."""
    pattern = parse_pattern(CATASTROPHIC_TYPE, "catastrophic.toml", "--patterns")
    failure = Failure(kind="bare", exceptions=(ExceptionBlock("a" * 60 + "c", "m"),), line=1, offset=0, end_offset=1)
    errors: list[str] = []
    assert match_failure([pattern], failure, on_error=errors.append) is None
    assert errors and "timed out" in errors[0]


def test_a_pattern_that_timed_out_is_skipped_for_the_rest_of_the_run() -> None:
    pattern = parse_pattern(CATASTROPHIC, "catastrophic.toml", "--patterns")
    disabled: set[str] = set()
    errors: list[str] = []
    for number in range(20):
        failure = Failure(
            kind="bare", exceptions=(ExceptionBlock("ValueError", "a" * 60 + f"b{number}"),), line=1, offset=0, end_offset=1
        )
        assert match_failure([pattern], failure, on_error=errors.append, disabled=disabled) is None
    assert disabled == {"user-catastrophic"}
    assert len(errors) == 1 and "disabled for this run" in errors[0]


def test_one_bad_entry_does_not_disable_the_directory(tmp_path: Path) -> None:
    import os

    user = tmp_path / "patterns"
    user.mkdir()
    write(user, "good.toml", GOOD)
    (user / "subdir.toml").mkdir()
    os.mkfifo(user / "fifo.toml")
    unreadable = write(user, "unreadable.toml", GOOD.replace("user-good", "user-hidden"))
    unreadable.chmod(0)
    (user / "zero.toml").symlink_to("/dev/zero")
    loaded = load_patterns([user], include_user=False)
    assert "user-good" in {pattern.id for pattern in loaded.patterns}
    text = "\n".join(loaded.errors)
    assert "subdir.toml: a directory" in text
    assert "fifo.toml: not a regular file" in text
    assert "zero.toml: not a regular file" in text
    if os.geteuid() != 0:  # root reads any file
        assert "unreadable.toml: cannot read" in text


def test_a_wrong_but_well_formed_cache_falls_back_to_the_toml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_memory_cache: None) -> None:
    from logsleuth import toml_cache as pattern_cache

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    fresh = load_patterns(include_user=False)
    (cache_file,) = (tmp_path / "cache" / "logsleuth").glob("patterns-*.json")
    entries = json.loads(cache_file.read_text())
    cache_file.write_text(json.dumps([{"id": "x"} for _ in entries]))  # valid JSON, right length, wrong content
    loaded = load_patterns(include_user=False)
    assert [p.id for p in loaded.patterns] == [p.id for p in fresh.patterns]
    assert json.loads(cache_file.read_text()) == entries, "the cache is rewritten from the TOML"
    assert pattern_cache.cache_dir() == tmp_path / "cache" / "logsleuth"


def test_an_unreadable_config_directory_is_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Path.is_dir() raises PermissionError under a directory the user cannot search.  CI runs as root, who
    can search any directory, so the error is injected (a stand-in for the unreadable ~/.config)."""
    config = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    real_is_dir = Path.is_dir

    def is_dir(self: Path) -> bool:
        if str(self).startswith(str(config)):
            raise PermissionError(13, "Permission denied", str(self))
        return real_is_dir(self)

    monkeypatch.setattr(Path, "is_dir", is_dir)
    loaded = load_patterns()
    assert any("cannot read user patterns: Permission denied" in error for error in loaded.errors)
    assert loaded.patterns, "the bundled patterns still load"


def test_a_timed_out_pattern_costs_one_timeout_per_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """200 distinct failures and a catastrophic user regex: one timeout, one warning, then the pattern is off
    (before: a 0.25 s timeout for every failure)."""
    from logsleuth.api import DiagnoseOptions, diagnose_text

    user = tmp_path / "patterns"
    user.mkdir()
    write(user, "catastrophic.toml", CATASTROPHIC)
    log = "".join(f"ValueError: {'a' * 60}b{number}\n" for number in range(200))
    patterns = load_patterns([user], include_user=False)
    timeouts = []
    real_search = match._search

    def counting_search(pattern: object, text: str) -> object:
        try:
            return real_search(pattern, text)  # type: ignore[arg-type]
        except match.PatternTimeout:
            timeouts.append(text)
            raise

    monkeypatch.setattr(match, "_search", counting_search)
    report = diagnose_text(log, DiagnoseOptions(all_failures=True, include_user_patterns=False), patterns=patterns)
    warnings = [warning for warning in report.warnings if "timed out" in warning]
    assert len(report.failures) >= 100
    assert len(timeouts) == 1
    assert len(warnings) == 1 and "disabled for this run" in warnings[0]


def test_aliases_are_kept_and_a_later_pattern_with_a_former_id_replaces_the_renamed_one(tmp_path: Path) -> None:
    """A pattern renamed from `user-old-name` keeps it in `aliases`: a user's override written for the old id
    still replaces it, instead of both matching."""
    renamed = GOOD.replace('id = "user-good"', 'id = "user-new-name"\naliases = ["user-old-name"]')
    assert parse_pattern(renamed, "x.toml", "user").aliases == ("user-old-name",)
    base = tmp_path / "base"
    base.mkdir()
    write(base, "new-name.toml", renamed)
    override = tmp_path / "override"
    override.mkdir()
    write(override, "old-name.toml", GOOD.replace('id = "user-good"', 'id = "user-old-name"'))
    ids = {p.id for p in load_patterns([base, override], include_user=False).patterns}
    assert "user-old-name" in ids and "user-new-name" not in ids
