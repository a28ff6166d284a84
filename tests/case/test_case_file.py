"""The case file (issue 18, item 1): of every pattern fixture and every wild fixture, within 12,000 characters,
with the engine version and the catalog rows of the flags the failure touches; secrets never in it.

Every log here is a real fixture (real CPython tracebacks in the engine's log format), diagnosed in-process."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose
from logsleuth.case import CASE_LIMIT, build_case, case_json, case_json_text, case_markdown
from logsleuth.case.model import Case
from logsleuth.fixes import catalog as catalogs
from logsleuth.models import Fix, Report

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
LOGS = sorted(
    [*FIXTURES.glob("patterns/*/*.log"), *FIXTURES.glob("sglang/*/*.log"), *FIXTURES.glob("wild/*/*.log")]
)
EAGLE_INCIDENT = REPO / "examples" / "eagle3-incident.log"
ESCAPES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _diagnose(path: Path) -> Report:
    return diagnose([str(path)], DiagnoseOptions(include_user_patterns=False))


def _fix_flags(fix: Fix | None) -> set[str]:
    if fix is None:
        return set()
    return {op.flag for op in fix.flags} | {flag for alt in fix.alternatives for flag in _fix_flags(alt)}


def _id(path: Path) -> str:
    return str(path.relative_to(FIXTURES).with_suffix(""))


@pytest.mark.slow  # make test-slow (CI runs it): keeps make test under 10 minutes
@pytest.mark.parametrize("log", LOGS, ids=_id)
def test_case_of_every_fixture_fits_and_names_version_and_flags(log: Path) -> None:
    report = _diagnose(log)
    case = build_case(report)
    markdown = case_markdown(report)
    json_text = case_json_text(report)
    assert len(markdown) <= CASE_LIMIT
    assert len(json_text) <= CASE_LIMIT
    assert not ESCAPES.search(markdown.replace("\n", "")), "terminal escapes or control characters in the case"
    assert json.loads(json_text)["schema"] == "logsleuth.case/1"
    primary = report.primary
    if primary is None:
        assert "no failure found" in markdown
        return
    if report.launch.engine_version:
        assert report.launch.engine_version in markdown
    # the flags logsleuth's fix changes that the consulted catalogs know are rows, with their real defaults (of
    # the case uncut: the flag table is logsleuth's text, which goes before any line of the log to fit)
    if case.flags != build_case(report, limit=10**9).flags:
        assert any("flag" in note for note in case.left_out)
    case = build_case(report, limit=10**9)
    markdown = case_markdown(report, limit=10**9)
    rows = {row.flag: row for row in case.flags}
    known = [catalogs.load(case.engine or "sglang", version) for version in case.catalogs]
    for flag in _fix_flags(primary.diagnosis.fix if primary.diagnosis else None):
        infos = [info for catalog in known if catalog and (info := catalog.find(flag))]
        if infos:
            name = infos[0].name
            assert name in rows, f"{flag} is in logsleuth's fix but not in the case's flag rows"
            assert repr(infos[0].default) in markdown
    if case.failure and case.failure.kind != "killed":
        named = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*[a-z0-9]", primary.failure.final.message))
        for flag in named:
            if any(catalog and catalog.find(flag) for catalog in known):
                assert any(flag == row.flag or flag in _aliases(case, row.flag) for row in case.flags), flag


def _aliases(case: Case, name: str) -> tuple[str, ...]:
    for version in case.catalogs:
        catalog = catalogs.load(case.engine or "sglang", version)
        info = catalog.find(name) if catalog else None
        if info:
            return info.aliases
    return ()


def test_eagle_seed_lists_the_three_speculative_sizes_with_their_catalog_defaults() -> None:
    report = _diagnose(EAGLE_INCIDENT)
    case = build_case(report)
    markdown = case_markdown(report)
    assert report.launch.engine_version is None  # the seed log does not name it: every shipped catalog is consulted
    assert "0.5.9" in case.catalogs and "0.5.23" in case.catalogs
    rows = {row.flag: row for row in case.flags}
    for flag in ("--speculative-num-steps", "--speculative-eagle-topk", "--speculative-num-draft-tokens"):
        assert flag in rows, flag
        facts = {fact.version: fact for fact in rows[flag].facts}
        default = catalogs.load("sglang", "0.5.9").find(flag).default  # type: ignore[union-attr]
        assert facts["0.5.9"].present and facts["0.5.9"].default == repr(default)
        assert re.search(rf"\| `{flag}` \|[^\n]*\| `{re.escape(repr(default))}` \|", markdown), flag
    # what the launch gave, read from its command
    assert rows["--speculative-eagle-topk"].given == "1"
    assert rows["--speculative-num-draft-tokens"].given == "16"
    assert rows["--speculative-num-steps"].given is None
    assert "the log does not name the version" in markdown
    assert "_handle_speculative_decoding" in case.failure.headline  # type: ignore[union-attr]


def test_the_ten_lines_before_the_failure_are_the_logs_own(tmp_path: Path) -> None:
    from tests.logs import noise

    log = tmp_path / "server.log"  # too long to be shown whole: the case shows the lines before the failure
    log.write_text(noise(2000) + EAGLE_INCIDENT.read_text(encoding="utf-8"), encoding="utf-8")
    report = _diagnose(log)
    case = build_case(report)
    assert not case.paste
    lines = log.read_text(encoding="utf-8").splitlines()
    start = lines.index("Traceback (most recent call last):")
    expected = [line for line in lines[:start] if line.strip()][-10:]
    assert list(case.lines_before) == [line.rstrip() for line in expected]
    assert case.lines_before_origin == "the log"


def test_known_version_uses_that_catalog_and_says_where_the_version_came_from(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("sglang version: 0.5.9\n" + EAGLE_INCIDENT.read_text(encoding="utf-8"), encoding="utf-8")
    case = build_case(_diagnose(log))
    assert case.engine_version == "0.5.9"
    assert case.catalogs == ("0.5.9",)
    given = build_case(diagnose([str(log)], DiagnoseOptions(include_user_patterns=False, engine_version="0.5.12")))
    assert given.catalogs == ("0.5.12",)  # its own release's static catalog, not the nearest older one
    assert "read from its source" in given.catalog_note and "not which values" in given.catalog_note
    assert "--engine-version" in given.version_origin


# -- secrets --------------------------------------------------------------------------------------------------

HF_TOKEN = "hf_" + "Q7x" * 12
API_KEY = "sk-proj-" + "a1B2" * 8
PASSWORD = "hunter2-Corr3ct-Horse"
PLANTED = (HF_TOKEN, API_KEY, PASSWORD)


def _plant(text: str) -> str:
    """The log with secrets where logs carry them: the launch command, an env dump just before the failure, a
    URL with a password, and the exception message itself."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if re.search(r"(?i)traceback|error|terminate|fatal", line) and i)
    planted = [
        f"+ HF_TOKEN={HF_TOKEN} python -m sglang.launch_server --model-path m --api-key {API_KEY} --tp 2",
        f"[2026-03-14 09:26:50] WARNING env: OPENAI_API_KEY={API_KEY} HF_TOKEN={HF_TOKEN}",
        f"[2026-03-14 09:26:51] WARNING proxy https://admin:{PASSWORD}@proxy.internal:3128 unreachable",
    ]
    lines[start:start] = planted
    message_line = next(i for i in range(len(lines) - 1, -1, -1) if re.search(r"(?i)error|exception", lines[i]))
    lines[message_line] += f" (token {HF_TOKEN})"
    return "\n".join(lines) + "\n"


SECRET_FIXTURES = [
    EAGLE_INCIDENT,
    FIXTURES / "patterns" / "sglang-gpu-oom-kv-cache" / "positive-0.5.9.log",
    *sorted(FIXTURES.glob("wild/argparse-invalid-choice/*.log"))[:1],
    *sorted(FIXTURES.glob("wild/nccl-watchdog-timeout/*.log"))[:1],
]


@pytest.mark.parametrize("fixture", SECRET_FIXTURES, ids=lambda path: path.stem)
def test_planted_secrets_never_reach_the_case_file(fixture: Path, tmp_path: Path) -> None:
    log = tmp_path / fixture.name
    log.write_text(_plant(fixture.read_text(encoding="utf-8")), encoding="utf-8")
    report = _diagnose(log)
    for text in (case_markdown(report), case_json_text(report), case_markdown(report, anonymize=True)):
        for secret in PLANTED:
            assert secret not in text
        assert "REDACTED" in text or "$HF_TOKEN" in text


def test_secret_in_the_lines_before_is_redacted_even_when_wrapped(tmp_path: Path) -> None:
    text = EAGLE_INCIDENT.read_text(encoding="utf-8")
    wrapped = f"token: hf_{HF_TOKEN[3:20]}\n{HF_TOKEN[20:]}\n"  # a token the terminal wrapped over two lines
    log = tmp_path / "server.log"
    log.write_text(text.replace("Traceback (most recent", wrapped + "Traceback (most recent", 1), encoding="utf-8")
    case = build_case(_diagnose(log))
    joined = "\n".join(case.lines_before)
    assert HF_TOKEN[3:20] not in joined and HF_TOKEN[20:] not in joined


# -- fitting the limit --------------------------------------------------------------------------------------


def _storm_log(path: Path, ranks: int = 64) -> Path:
    """A long log: a long launch command, GPU lines, an OOM with a 40-line message on many ranks, hundreds of
    lines after it, other failure groups."""
    from tests.helpers import real_traceback
    from tests.logs import crash_record, noise

    deep = "\n".join(f"def f{i}():\n    f{i + 1}()" for i in range(150)) + "\ndef f150():\n    raise RuntimeError('CUDA out of memory. Tried to allocate 2.00 GiB.\\n' + '\\n'.join('detail line %d ' % i * 8 for i in range(40)))\nf0()\n"
    traceback = real_traceback(deep, "site-packages/sglang/srt/model_executor/model_runner.py")
    flags = " ".join(f"--flag-number-{i} {i}" for i in range(150))
    parts = [f"+ python -m sglang.launch_server --model-path m {flags}\n", noise(50)]
    parts += [f"[2026-03-14 09:26:5{i % 10} TP{i}] Load weight end. type=X, dtype=torch.bfloat16, avail mem={70 - i}.5 GB, mem usage=9.9 GB.\n" for i in range(8)]
    parts += [crash_record("2026-03-14 09:27:00", f"TP{rank}", traceback) for rank in range(ranks)]
    parts += [f"[2026-03-14 09:27:01 TP{i}] Received sigquit from a child process. It usually means the child failed.\n" for i in range(200)]
    path.write_text("".join(parts), encoding="utf-8")
    return path


def test_a_case_too_big_drops_the_least_useful_parts_first_and_says_so(tmp_path: Path) -> None:
    report = _diagnose(_storm_log(tmp_path / "storm.log"))
    full = build_case(report, limit=10**9)
    assert len(full.failure.chain[-1].frames) > 60  # type: ignore[union-attr]
    case = build_case(report)
    markdown = case_markdown(report)
    assert len(markdown) <= CASE_LIMIT
    assert case.left_out, "something had to go"
    assert "#### Left out to fit 20,000 characters" in markdown
    # logsleuth's parsed failure goes first: the log's own lines of it stay, their middle said as left out; the
    # exception and the innermost frame always stay
    assert not case.parsed_shown and "the failure as logsleuth parsed it" in markdown
    region = "\n".join(case.failure_lines)
    assert "RuntimeError: CUDA out of memory" in region and ", in f150" in region
    assert case.failure_lines_left_out > 0 and re.search(r"\[\.\.\. \d+ lines left out here to fit \.\.\.\]", markdown)
    # without the log's lines (read from nowhere), the parsed failure is the evidence and is cut the old way
    from logsleuth.case.model import LogWindow

    parsed = build_case(report, window=LogWindow(origin="nowhere"))
    final = parsed.failure.chain[-1]  # type: ignore[union-attr]
    assert final.type == "RuntimeError" and final.message[0].startswith("CUDA out of memory")
    assert final.frames[-1].function == "f150"
    assert final.frames_left_out > 0
    assert "frames in the middle of the traceback" in parsed.left_out


@pytest.mark.parametrize("limit", [4000, 6000])
def test_smaller_limits_are_kept_too(limit: int, tmp_path: Path) -> None:
    report = _diagnose(_storm_log(tmp_path / "storm.log"))
    assert len(case_markdown(report, limit=limit)) <= limit
    assert len(case_json_text(report, limit=limit)) <= limit
    assert case_json(report, limit=limit)["left_out"]


def test_gpu_and_memory_facts_come_from_the_log(tmp_path: Path) -> None:
    report = _diagnose(_storm_log(tmp_path / "storm.log", ranks=2))
    case = build_case(report, limit=10**9)
    assert any("avail mem=63.5 GB" in fact for fact in case.gpu_facts)
    assert len(case.gpu_facts) <= 8


def test_no_failure_is_a_short_case(tmp_path: Path) -> None:
    log = tmp_path / "ok.log"
    log.write_text("[2026-03-14 09:26:55] The server is fired up and ready to roll!\n", encoding="utf-8")
    markdown = case_markdown(_diagnose(log))
    assert "no failure found in the log" in markdown
    assert len(markdown) < 1000


def test_general_guidance_is_not_called_a_known_pattern(tmp_path: Path) -> None:
    """A failure no pattern names gets the honest category (basis "general", issue 28): the case file must not
    tell the assistant that a bundled pattern matched it."""
    log = tmp_path / "key.log"
    log.write_text("KeyError: 'lm_head.bias'\n", encoding="utf-8")
    report = _diagnose(log)
    assert report.failures[0].diagnosis is not None and report.failures[0].diagnosis.basis == "general"
    assert build_case(report).known_pattern is None


def test_a_version_the_log_names_without_an_engine_names_no_engine(tmp_path: Path) -> None:
    """A version label alone names no engine (the report leaves it unnamed), so the case file must not call it SGLang's
    either: it named a vLLM paste's version `sglang 0.7.3` (stop 49, split 13's assistant run)."""
    log = tmp_path / "label.log"
    log.write_text('vllm: 0.7.3\nTraceback (most recent call last):\n  File "/app/run.py", line 3, in <module>\n'
                   "    run()\nValueError: something odd\n")
    report = _diagnose(log)
    assert report.launch.engine is None and report.launch.engine_version == "0.7.3"
    case = build_case(report)
    assert case.engine is None
    assert "- **Engine:** not named in the log (it names a version, `0.7.3`, not whose)" in case_markdown(report)
