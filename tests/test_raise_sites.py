"""The raise site index (issue 29, first part): the engine's own check behind a failure, read from the released
wheels with ast (scripts/engine_index/), looked up from a traceback's innermost engine frame."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.facts.raise_sites import find

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts" / "engine_index"))
from build import merged  # noqa: E402
from extract import sites  # noqa: E402

SEED = (REPO / "examples" / "eagle3-incident.log").read_text(encoding="utf-8")
SPEC_FLAGS = ("--speculative-num-steps", "--speculative-eagle-topk", "--speculative-num-draft-tokens")


def _traceback_only(text: str) -> str:
    """The seed's traceback without the lines around it: no launch command, no version."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Traceback"))
    end = next(i for i, line in enumerate(lines) if line.startswith("AssertionError"))
    return "\n".join(lines[start:end + 1]) + "\n"


def test_the_seed_without_version_or_command_shows_the_asserts_condition_and_its_three_flags() -> None:
    report = diagnose_text(_traceback_only(SEED))
    raised = " ".join(report.failures[0].diagnosis.raised_at)  # type: ignore[union-attr]
    assert "self.speculative_eagle_topk is None and self.speculative_num_draft_tokens is None" in raised
    assert "self.speculative_num_steps is None" in raised  # the guard: SGLang chooses the sizes itself
    for flag in SPEC_FLAGS:
        assert flag in raised
    assert "given:" not in raised  # no launch command: no values claimed
    assert "match SGLang 0.5.9" in raised  # the frames' line numbers name the release


def test_a_known_release_is_named_and_the_launch_values_are_shown() -> None:
    report = diagnose_text(SEED, DiagnoseOptions(engine_version="0.5.9"))
    raised = " ".join(report.failures[0].diagnosis.raised_at)  # type: ignore[union-attr]
    assert "Your release, SGLang 0.5.9, has this check" in raised
    assert "given: --speculative-eagle-topk 1" in raised and "not given: --speculative-num-steps" in raised


def test_a_frame_outside_the_engine_finds_nothing() -> None:
    assert find("sglang", "/home/me/train.py", "main", 10, "assert x", None) is None
    assert find("sglang", "/x/site-packages/sglang/srt/server_args.py", "no_such_function", 1, "assert x", None) is None
    text = 'Traceback (most recent call last):\n  File "/home/me/app.py", line 3, in <module>\n    assert ok\nAssertionError\n'
    assert all(not group.diagnosis or not group.diagnosis.raised_at for group in diagnose_text(text).failures)


SOURCE = '''
import logging
logger = logging.getLogger(__name__)

class ServerArgs:
    def check(self):
        if self.speculative_algorithm == "EAGLE":
            if self.speculative_num_steps is None:
                assert self.speculative_eagle_topk is None, "give all three"
        else:
            raise ValueError(f"unknown algorithm {self.speculative_algorithm}")
        if self.tp_size % 2:
            logger.error("tp %s is odd", self.tp_size)
'''


def test_the_extractor_reads_conditions_guards_messages_and_settings() -> None:
    found = {site.kind: site for site in sites(SOURCE, "pkg/server_args.py")}
    assert found["assert"].function == "ServerArgs.check"
    assert found["assert"].condition == "self.speculative_eagle_topk is None"
    assert found["assert"].guards == ("self.speculative_algorithm == 'EAGLE'", "self.speculative_num_steps is None")
    assert found["assert"].fields == ("speculative_eagle_topk", "speculative_algorithm", "speculative_num_steps")
    assert found["assert"].message == "give all three"
    assert found["raise"].type == "ValueError" and found["raise"].message == "unknown algorithm {}"
    assert found["raise"].guards == ("not self.speculative_algorithm == 'EAGLE'",)
    assert found["log"].message == "tp {} is odd" and found["log"].fields == ("tp_size",)


@pytest.mark.oracle
def test_an_index_of_two_real_releases_knows_the_seeds_check_and_its_range() -> None:
    """Built from two installed SGLang releases' server_args.py (the oracle venvs; `make oracle-setup`)."""
    from logsleuth.fixes import catalog

    roots = {v: next(Path.home().glob(f".cache/logsleuth/oracle/sglang-{v}/lib/python3*/site-packages"), None)
             for v in ("0.4.10.post2", "0.5.9")}
    if any(root is None for root in roots.values()):
        pytest.skip("the oracle venvs are not set up (make oracle-setup)")
    versions = ("0.4.10.post2", "0.5.9")
    per_release = {v: list(sites((roots[v] / "sglang/srt/server_args.py").read_text(), "sglang/srt/server_args.py"))  # type: ignore[operator]
                   for v in versions}
    entries = merged(versions, per_release)["sglang/srt/server_args.py"]
    seed = [e for e in entries if e["kind"] == "assert" and "self.speculative_eagle_topk is None" in str(e["condition"])
            and any("speculative_num_steps is None" in g for g in e["guards"])]  # type: ignore[attr-defined]
    assert seed, "the seed's assert is indexed"
    numbers = {n for e in seed for run in e["lines"] for n in range(run[0], run[1] + 1)}  # type: ignore[attr-defined]
    assert 1 in numbers  # 0.5.9 holds it
    cat = catalog.load("sglang", "0.5.9")
    assert cat is not None
    flags = {cat.by_field(f).name for e in seed for f in e["fields"] if cat.by_field(f) is not None}  # type: ignore[attr-defined, union-attr]
    assert set(SPEC_FLAGS) <= flags


def test_a_traceback_without_its_source_lines_is_placed_by_the_frames_line_number() -> None:
    """Some loggers print frames without their source lines: the release's line ranges place the frame."""
    lines = _traceback_only(SEED).splitlines()
    bare = [line for line in lines if line.startswith(("Traceback", "  File ", "AssertionError"))]
    report = diagnose_text("\n".join(bare) + "\n")
    raised = " ".join(report.failures[0].diagnosis.raised_at)  # type: ignore[union-attr]
    assert "self.speculative_eagle_topk is None and self.speculative_num_draft_tokens is None" in raised


def test_the_values_a_check_reads_never_repeat_a_secret() -> None:
    from logsleuth.models import LaunchInfo
    from logsleuth.reasoning.raise_site import _given

    secret = "sk-" + "Q" * 30
    given = _given(["--api-key", "--tp-size"], LaunchInfo(command=f"python -m sglang.launch_server --api-key {secret} --tp-size 2"))
    assert secret not in given and "--api-key" in given and "--tp-size 2" in given


def _layout_guess_traceback(tmp_path: Path, assert_line: int) -> str:
    """A traceback real CPython prints for SGLang's multi-node DP assert standing at `assert_line` of
    `sglang/srt/server_args.py`, called through `sglang/srt/utils.py`: a file whose layout alone makes logsleuth
    guess 0.4.10.post2 (ingest/launch.py)."""
    srt = tmp_path / "site-packages" / "sglang" / "srt"
    srt.mkdir(parents=True)
    (srt / "utils.py").write_text("def run(call):\n    return call()\n")
    check = (
        "class ServerArgs:\n"
        "    dp_size, nnodes, enable_dp_attention = 2, 2, False\n"
        "    def check_server_args(self):\n"
        "        assert not (\n"
        "            self.dp_size > 1 and self.nnodes != 1 and not self.enable_dp_attention\n"
        '        ), "multi-node data parallel is not supported unless dp attention!"\n'
    )
    (srt / "server_args.py").write_text("\n" * (assert_line - 4) + check)
    main = tmp_path / "launch.py"
    main.write_text("from sglang.srt import utils, server_args\nutils.run(server_args.ServerArgs().check_server_args)\n")
    ran = subprocess.run([sys.executable, str(main)], capture_output=True, text=True, cwd=tmp_path,
                         env={"PYTHONPATH": str(tmp_path / "site-packages"), "PATH": "/usr/bin:/bin"}, check=False)
    assert "AssertionError: multi-node data parallel" in ran.stderr, ran.stderr
    return ran.stderr


def test_a_release_guessed_from_the_layout_gives_way_to_the_one_the_frames_match(tmp_path: Path) -> None:
    """Issue 29: the layout guessed 0.4.10.post2 where the raising frame's line matches 0.4.6.post2 only (the
    index: this assert stands at line 1283 in 0.4.6.post2, 1922 in 0.4.10.post2).  One version per report."""
    report = diagnose_text(_layout_guess_traceback(tmp_path, 1283))
    assert report.launch.engine_version == "0.4.6.post2" and report.launch.engine_version_source == "inferred"
    raised = " ".join(report.failures[0].diagnosis.raised_at)  # type: ignore[union-attr]
    assert "match SGLang 0.4.6.post2 only" in raised


def test_the_frames_release_survives_a_failure_folded_into_the_root(tmp_path: Path) -> None:
    """An empty traceback header after the failure (a paste that ends there) folds into it as a line of what followed
    (diagnosis/restated.py), and the header still shows the release the root failure's frames match (issue 29)."""
    report = diagnose_text(_layout_guess_traceback(tmp_path, 1283) + "Traceback (most recent call last):\n")
    assert len(report.failures) == 1 and report.failures[0].cascade
    assert report.launch.engine_version == "0.4.6.post2"


def test_a_guess_the_frames_agree_with_is_kept(tmp_path: Path) -> None:
    report = diagnose_text(_layout_guess_traceback(tmp_path, 1922))
    assert report.launch.engine_version == "0.4.10.post2" and report.launch.engine_version_source == "inferred"


def test_a_named_release_is_never_replaced_by_the_frames(tmp_path: Path) -> None:
    report = diagnose_text(_layout_guess_traceback(tmp_path, 1283), DiagnoseOptions(engine_version="0.5.9"))
    assert report.launch.engine_version == "0.5.9" and report.launch.engine_version_source == "user"


# -- vLLM ------------------------------------------------------------------------------------------------------
# vllm 0.11.2, vllm/config/parallel.py:301-305 (ParallelConfig._validate_parallel_config), its real statement and
# the `if`s around it: `--enable-eplb` with neither tensor nor data parallelism.  The index holds it from 0.11.2 to
# 0.25.1 (0.26.0 words it with prefill-context parallelism too).
EPLB_MODULE = '''class ParallelConfig:
    def __init__(self):
        self.enable_eplb = True
        self.tensor_parallel_size = 1
        self.data_parallel_size = 1
    def _validate_parallel_config(self):
        if self.enable_eplb:
            if self.tensor_parallel_size * self.data_parallel_size <= 1:
                raise ValueError(
                    "EPLB requires tensor_parallel_size or data_parallel_size "
                    f"to be greater than 1, but got "
                    f"TP={self.tensor_parallel_size},DP={self.data_parallel_size}."
                )
'''
EPLB_LINE = 301
EPLB_FLAGS = ("--enable-eplb", "--tensor-parallel-size", "--data-parallel-size")


def _mirrored_traceback(tmp_path: Path, module: str, source: str, call: str) -> str:
    """Real CPython's traceback of `call` raising in `source`, laid out as vLLM's `module` (vllm/config/parallel.py)."""
    path = tmp_path / "site-packages" / module
    path.parent.mkdir(parents=True)
    path.write_text(source, encoding="utf-8")
    dotted = module.removesuffix(".py").replace("/", ".")
    driver = tmp_path / "serve.py"
    driver.write_text(f"import sys\nsys.path.insert(0, sys.argv[1])\nfrom {dotted} import *\n{call}\n", encoding="utf-8")
    run = subprocess.run([sys.executable, str(driver), str(tmp_path / "site-packages")], capture_output=True, text=True)
    assert run.returncode == 1 and "Traceback (most recent call last):" in run.stderr
    return run.stderr


def _vllm_eplb_traceback(tmp_path: Path) -> str:
    """That check's traceback, raised from a mirror of vLLM's file (the raise at its real line)."""
    padding = EPLB_LINE - 1 - EPLB_MODULE.splitlines().index("                raise ValueError(")
    text = _mirrored_traceback(tmp_path, "vllm/config/parallel.py", "#\n" * padding + EPLB_MODULE,
                               "ParallelConfig()._validate_parallel_config()")
    assert f'parallel.py", line {EPLB_LINE}, in _validate_parallel_config' in text
    return text


def test_a_vllm_frame_is_placed_with_its_releases_and_its_flags(tmp_path: Path) -> None:
    report = diagnose_text(_vllm_eplb_traceback(tmp_path))
    assert report.launch.engine == "vllm"
    raised = " ".join(report.failures[0].diagnosis.raised_at)  # type: ignore[union-attr]
    assert f"vLLM's vllm/config/parallel.py:{EPLB_LINE}, in ParallelConfig._validate_parallel_config" in raised
    assert "under `if self.enable_eplb and self.tensor_parallel_size * self.data_parallel_size <= 1`" in raised
    for flag in EPLB_FLAGS:
        assert flag in raised
    assert "this check is in 0.11.2 to 0.25.1" in raised
    assert "line numbers match vLLM 0.11.2 only" in raised
    # Only some releases are indexed: the ones between 0.11.2's indexed neighbours may hold the same lines.
    assert "or a release the index did not read between 0.11.0 and 0.13.0" in raised


def test_a_vllm_release_and_command_given_name_the_release_and_the_values(tmp_path: Path) -> None:
    log = "$ vllm serve Qwen/Qwen3-8B --enable-eplb\n" + _vllm_eplb_traceback(tmp_path)
    report = diagnose_text(log, DiagnoseOptions(engine_version="0.11.2"))
    raised = " ".join(report.failures[0].diagnosis.raised_at)  # type: ignore[union-attr]
    assert "Your release, vLLM 0.11.2, has this check" in raised
    assert "given: --enable-eplb" in raised and "not given: --tensor-parallel-size, --data-parallel-size" in raised


def test_a_vllm_frame_formatted_as_no_indexed_release_is_placed_by_its_message(tmp_path: Path) -> None:
    """vllm/v1/engine/utils.py's "Engine core initialization failed" raise, written on one line as no indexed release
    writes it (0.11.0 split it after its first string, later releases before it): neither the line number nor the
    source line places the frame; the exception's type and message match the function's template."""
    source = ("def wait_for_engine_startup(finished):\n"
              '    raise RuntimeError("Engine core initialization failed. See root cause above. " '
              'f"Failed core proc(s): {finished}")\n')
    text = _mirrored_traceback(tmp_path, "vllm/v1/engine/utils.py", source, "wait_for_engine_startup({'EngineCore_DP0': 1})")
    group = diagnose_text(text).failures[0]
    raised = " ".join(group.diagnosis.raised_at)  # type: ignore[union-attr]
    assert "vLLM's vllm/v1/engine/utils.py:" in raised and "in wait_for_engine_startup" in raised
    assert "Of the vLLM releases indexed (0.5.5 to 0.34.0)" in raised
    assert "line numbers match" not in raised  # line 2 is no release's


def test_vllm_code_run_by_sglang_is_not_looked_up_in_vllms_releases(tmp_path: Path) -> None:
    """SGLang releases import vLLM's layers: under an SGLang launch, a vLLM frame is not vLLM's release."""
    log = "python -m sglang.launch_server --model-path Qwen/Qwen3-8B\n" + _vllm_eplb_traceback(tmp_path)
    report = diagnose_text(log)
    assert report.launch.engine == "sglang"
    assert not any(group.diagnosis and group.diagnosis.raised_at for group in report.failures)


def test_a_traceback_that_lost_its_exception_line_is_typed_only_as_inferred_from_the_check_at_its_line(tmp_path: Path) -> None:
    """CPython 3.11+ shows a failing multi-line assert by its condition's line, not `assert not (`: the statement at
    that line is the index's assert (tracebacks/indexed_statement.py), so the type is inferred from it, never shown
    as printed (h-found9; before, no type and no check)."""
    whole = _layout_guess_traceback(tmp_path, 1922)
    cut = "\n".join(line for line in whole.splitlines() if not line.startswith("AssertionError")) + "\n"
    assert diagnose_text(whole).failures[0].diagnosis.raised_at  # type: ignore[union-attr]
    final = diagnose_text(cut).failures[0].failure.final
    assert (final.type, final.typed_from_statement, final.truncated) == ("AssertionError", True, True)


def test_a_traceback_cut_at_a_line_that_is_no_check_is_placed_nowhere(tmp_path: Path) -> None:
    """Its innermost frame shown is a call the error only came through: no type, no check is said to have been false."""
    whole = _layout_guess_traceback(tmp_path, 1922)
    lines = whole.splitlines()
    at = next(index for index, line in enumerate(lines) if "server_args.py" in line)
    cut = "\n".join(lines[:at]) + "\n"  # the paste stops in sglang/srt/utils.py's `return call()`
    groups = diagnose_text(cut).failures
    assert groups and groups[0].failure.final.type == ""
    assert all(not group.diagnosis or not group.diagnosis.raised_at for group in groups)


def test_a_check_that_raises_another_type_is_not_the_raiser(tmp_path: Path) -> None:
    """The held-out split: a kernel's OutOfResources shown with frames whose innermost line falls inside an assert
    of the index; an assert raises AssertionError, so that check did not raise this (the error came from a call on
    the line), and no check is said to have been false."""
    whole = _layout_guess_traceback(tmp_path, 1922)
    assert diagnose_text(whole).failures[0].diagnosis.raised_at  # type: ignore[union-attr]
    other = "\n".join("OutOfResources: out of resource: shared memory, Required: 147456, Hardware limit: 101376."
                      if line.startswith("AssertionError") else line for line in whole.splitlines()) + "\n"
    groups = diagnose_text(other).failures
    assert groups and groups[0].failure.final.type == "OutOfResources"
    assert all(not group.diagnosis or not group.diagnosis.raised_at for group in groups)


# -- How a frame's path is read, and the shapes of a raise the index reads -----------------------------------------

def test_only_the_engines_own_package_is_its_code() -> None:
    """A virtualenv or prefix named after the engine holds torch and the standard library too: the engine's code is
    the package after `site-packages/`, or a source checkout's package, never a directory that only bears its name."""
    from logsleuth.facts.raise_sites import engine_file

    assert engine_file("/opt/sglang/lib/python3.11/site-packages/sglang/srt/server_args.py", "sglang") == "sglang/srt/server_args.py"
    assert engine_file("/sgl-workspace/sglang/python/sglang/srt/server_args.py", "sglang") == "sglang/srt/server_args.py"
    assert engine_file("C:\\envs\\vllm\\Lib\\site-packages\\vllm\\config.py", "vllm") == "vllm/config.py"
    assert engine_file("/opt/sglang/lib/python3.11/site-packages/torch/cuda/__init__.py", "sglang") is None
    assert engine_file("/home/me/sglang/lib/python3.11/threading.py", "sglang") is None
    assert engine_file("/usr/local/lib/python3.10/dist-packages/vllm_ext/vllm/x.py", "vllm") is None


def test_a_raise_of_an_exception_the_function_built_earlier_is_read_with_its_message() -> None:
    """vLLM's WorkerProc.wait_for_ready builds `e = Exception("WorkerProc initialization failed ...")` once and
    raises it in two places; inside `except ... as e`, `e` is what was caught, and a name bound twice is not read."""
    source = (
        "def wait_for_ready(pipes):\n"
        '    e = Exception("WorkerProc initialization failed due to "\n'
        '                  "an exception in a background process.")\n'
        "    e.__suppress_context__ = True\n"
        "    for pipe in pipes:\n"
        "        try:\n"
        '            if pipe != "READY":\n'
        "                raise e\n"
        "        except EOFError:\n"
        "            raise e from None\n"
        "        except OSError as e:\n"
        "            raise e\n"
        "def rebound(flag):\n"
        '    e = ValueError("first")\n'
        "    if flag:\n"
        '        e = KeyError("second")\n'
        "    raise e\n"
    )
    found = [(site.function, site.first_line, site.type, site.message) for site in sites(source, "vllm/x.py")]
    message = "WorkerProc initialization failed due to an exception in a background process."
    assert found == [("wait_for_ready", 8, "Exception", message), ("wait_for_ready", 10, "Exception", message)]


def _core_client_traceback(tmp_path: Path) -> str:
    """Real CPython's traceback of vLLM 0.11.0's `raise self._format_exception(outputs) from None` (its
    vllm/v1/engine/core_client.py:670, SyncMPClient.get_output): the exception a method builds, an EngineDeadError."""
    check = (
        "class EngineDeadError(Exception):\n"
        "    def __init__(self):\n"
        '        super().__init__("EngineCore encountered an issue. See stack trace (above) for the root cause.")\n'
        "class SyncMPClient:\n"
        "    def _format_exception(self, error):\n"
        "        return EngineDeadError()\n"
        "    def get_output(self):\n"
        "        outputs = RuntimeError()\n"
        "        if isinstance(outputs, Exception):\n"
        "            raise self._format_exception(outputs) from None\n"
    )
    padding = 670 - 1 - check.splitlines().index("            raise self._format_exception(outputs) from None")
    text = _mirrored_traceback(tmp_path, "vllm/v1/engine/core_client.py", "#\n" * padding + check, "SyncMPClient().get_output()")
    assert 'core_client.py", line 670, in get_output' in text and "EngineDeadError: EngineCore encountered" in text
    return text


def test_a_raise_of_what_a_method_builds_is_placed_whatever_the_type(tmp_path: Path) -> None:
    """The index names the method (`_format_exception`), not a class: it can build any exception type."""
    raised = " ".join(diagnose_text(_core_client_traceback(tmp_path)).failures[0].diagnosis.raised_at)  # type: ignore[union-attr]
    assert "vllm/v1/engine/core_client.py:670, in SyncMPClient.get_output" in raised
    assert "which was false" not in raised  # a raise, not an assert found false


def test_a_symptom_renamed_after_its_cause_still_says_where_it_was_raised() -> None:
    """vLLM's "Engine core initialization failed" follows the engine core's own failure: its diagnosis gives way to
    that cause, and the raise site of the failure shown is kept as its evidence (no upgrade past it is offered)."""
    log = REPO / "tests/fixtures/patterns/vllm-oom-weight-load/positive-0.11.0-linear-weights.log"
    report = diagnose_text(log.read_text(encoding="utf-8"), DiagnoseOptions(all_failures=True))
    symptom = next(g for g in report.failures if g.failure.final.message.startswith("Engine core initialization failed"))
    assert symptom.diagnosis is not None
    raised = " ".join(symptom.diagnosis.raised_at)
    assert "vllm/v1/engine/utils.py:785, in wait_for_engine_startup" in raised


SERVER_ARGS = "/opt/venv/lib/python3.11/site-packages/sglang/srt/server_args.py"
HICACHE = ("The arguments enable-hierarchical-cache and disable-radix-cache are mutually exclusive and cannot be used "
           "at the same time. Please use only one of them.")


def test_a_check_whose_message_is_not_the_failures_did_not_raise_it() -> None:
    """SGLang 0.5.15's check_server_args has many checks that open with `raise ValueError(`; the one whose lines hold
    line 6722 raises "SGLANG_GRPC_PORT (...) must differ from --port (...)", so another ValueError with that frame
    is not from it (before: the hierarchical-cache conflict was shown as the gRPC port check)."""
    def at(message: str) -> object:
        return find("sglang", SERVER_ARGS, "check_server_args", 6722, "raise ValueError(", None, ("ValueError", message))

    assert at(HICACHE) is None
    site = at("SGLANG_GRPC_PORT (30000) must differ from --port (30000)")
    assert site is not None and site.line == 6722 and "0.5.15" in site.releases  # type: ignore[attr-defined]


def test_a_message_printed_as_a_tuple_or_reworded_after_its_first_sentence_still_places_its_check() -> None:
    """`raise RuntimeError("Quantization scheme is not supported for ", f"the current GPU. ...")` prints the tuple of
    its arguments (vLLM 0.6.6.post1's compressed_tensors.py:185): its opening text stands in the message."""
    message = "('Quantization scheme is not supported for ', 'the current GPU. Min capability: 80. ', 'Current capability: 75.')"
    site = find("vllm", "/venv/lib/python3.12/site-packages/vllm/model_executor/layers/quantization/compressed_tensors/"
                "compressed_tensors.py", "_check_scheme_supported", 185, "raise RuntimeError(", None, ("RuntimeError", message))
    assert site is not None and site.line == 185 and site.framed == ("0.6.6.post1",)
