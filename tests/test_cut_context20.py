"""Cut tracebacks in the engine's serving step, a bare log level at the cut, and a parent's word that a child died with
the child's error not in the paste (issue 28, stop 56, branch cut20), on real CPython tracebacks of our own code laid
out like the engines', cut the way the threads' pastes were:

- a cut under SGLang's scheduler loop while serving (sgl-project/sglang#20010, #24402; the loop's functions:
  sglang/srt/managers/scheduler.py event_loop_normal/event_loop_overlap) is a labelled guess at a runtime fault of the
  release's serving path, with the switches of the paths the loop runs (overlap scheduling only under the overlap loop);
- a cut at a CUDA synchronization in that loop (verl-project/verl#630: tp_worker_overlap_thread.py
  resolve_last_batch_result, `copy_done.synchronize()`) keeps cuda-error with those checks, not the generic checklist;
- the same functions at start-up (a graph capture) are not the serving step;
- a record's level word left alone by the cut (`ERROR`, vllm-project/vllm-ascend#218) is no exception line;
- the launcher's pipe read of a scheduler that died (kvcache-ai/ktransformers#1658, #2128: engine.py
  `scheduler_pipe_readers[i].recv()`) says the child's error is absent and names the OOM killer only when the paste
  shows a kill."""

from __future__ import annotations

from logsleuth.api import DiagnoseOptions, diagnose_text
from tests.helpers import check_texts, diagnose_with_patterns, real_traceback
from tests.test_cut_tracebacks import cut_after

SCHEDULER = '''
class Scheduler:
    def get_next_batch_to_run(self):
        return self.update_running_batch(None)

    def update_running_batch(self, batch):
        raise RuntimeError("CUDA error: an illegal memory access was encountered")

    def LOOP(self):
        batch = self.get_next_batch_to_run()

    def init_cuda_graphs(self):
        self.LOOP()


def run_scheduler_process():
    scheduler = Scheduler()
    scheduler.CALL()


run_scheduler_process()
'''


def _scheduler_cut(loop: str, call: str, last: str) -> str:
    printed = real_traceback(SCHEDULER.replace("LOOP", loop).replace("CALL", call), "sglang/srt/managers/scheduler.py")
    return "[2025-08-15 00:16:56 TP0] Scheduler hit an exception: " + cut_after(printed, last)


def test_a_cut_in_the_normal_scheduler_loop_is_a_labelled_runtime_fault_with_the_graph_switch() -> None:
    log = _scheduler_cut("event_loop_normal", "event_loop_normal", "self.update_running_batch(None)")
    diagnosis = diagnose_with_patterns(log)
    assert diagnosis.category == "engine-bug", diagnosis.root_cause
    assert "serving step" in diagnosis.title and "not a finding" in diagnosis.root_cause
    steps = check_texts(diagnosis)
    assert "--disable-cuda-graph" in steps and "CUDA_LAUNCH_BLOCKING=1" in steps and "newer release" in steps
    assert "--disable-overlap-schedule" not in steps  # the normal loop: overlap scheduling is not running


def test_a_cut_in_the_overlap_loop_offers_overlap_scheduling_off() -> None:
    log = _scheduler_cut("event_loop_overlap", "event_loop_overlap", "self.update_running_batch(None)")
    steps = check_texts(diagnose_with_patterns(log))
    assert "--disable-overlap-schedule" in steps


def test_the_loop_run_inside_a_graph_capture_at_start_up_is_not_the_serving_step() -> None:
    log = _scheduler_cut("event_loop_normal", "init_cuda_graphs", "self.update_running_batch(None)")
    assert "serving step" not in diagnose_with_patterns(log).title


SYNC = '''
class Event:
    def synchronize(self):
        raise RuntimeError("CUDA error: an illegal memory access was encountered")
'''


def test_a_cut_at_a_cuda_synchronization_in_the_serving_loop_keeps_cuda_error_with_the_serving_checks() -> None:
    log = _scheduler_cut("event_loop_overlap", "event_loop_overlap", "self.update_running_batch(None)")
    stream = real_traceback(SYNC + "\nEvent().synchronize()\n", "torch/cuda/streams.py").splitlines()
    frame = next(line for line in stream if "in synchronize" in line)
    log += frame + "\n"  # one frame more, torch's event, cut after its file line
    diagnosis = diagnose_with_patterns(log)
    assert diagnosis.category == "cuda-error", diagnosis.root_cause
    assert "CUDA synchronization" in diagnosis.title
    steps = check_texts(diagnosis)
    assert "--disable-overlap-schedule" in steps and "ECC" not in steps


def test_a_bare_log_level_at_the_cut_is_no_exception_line() -> None:
    printed = real_traceback(SCHEDULER.replace("LOOP", "event_loop_normal").replace("CALL", "event_loop_normal"),
                             "vllm/model_executor/custom_op.py")
    cut = cut_after(printed, "self.update_running_batch(None)")
    prefixed = "".join(f"ERROR 03-02 22:42:58 [engine.py:409] {line}\n" for line in cut.splitlines()) + "ERROR\n"
    report = diagnose_text(prefixed, DiagnoseOptions(include_user_patterns=False))
    assert all(failure.failure.final.type != "ERROR" for failure in report.failures)


LAUNCHER = '''
class Connection:
    def recv(self):
        raise EOFError


def _launch_subprocesses(scheduler_pipe_readers):
    data = scheduler_pipe_readers[0].recv()


_launch_subprocesses([Connection()])
'''


def _launcher_cut(above: str = "") -> str:
    printed = real_traceback(LAUNCHER, "sglang/srt/entrypoints/engine.py")
    pipe = real_traceback(LAUNCHER, "multiprocessing/connection.py").splitlines()
    frame = next(line for line in pipe if "in recv" in line)  # the pipe's own frame, cut after its file line
    return above + cut_after(printed, "data = scheduler_pipe_readers[0].recv()") + frame + "\n"


def test_a_launcher_cut_reading_a_dead_schedulers_pipe_says_its_error_is_absent_not_the_oom_killer() -> None:
    steps = check_texts(diagnose_with_patterns(_launcher_cut()))
    assert "own error is not in the paste" in steps
    assert "does not fit the installed engine release" in steps
    assert steps.index("does not fit") < steps.index("OOM killer")  # named only as what the host would have to show


def test_the_engines_death_record_above_keeps_the_rows_exit_code_checks() -> None:
    # SGLang logs its exit code beside this record (sglang/srt/entrypoints/engine.py; gpustack/gpustack#3848: -9)
    above = ("[12-11 17:52:52] Rank 0 scheduler is dead. Please check if there are relevant logs.\n"
             "[12-11 17:52:54] Exit code: -9\n")
    steps = check_texts(diagnose_with_patterns(_launcher_cut(above)))
    assert "own error is not in the paste" not in steps and "exit code of -9" in steps



def test_a_kill_the_death_message_carries_leads_the_checks() -> None:
    # (the later releases' own words: sglang/srt/entrypoints/engine.py _wait_for_scheduler_ready, the raise site index)
    died = ("RuntimeError: Rank 0 scheduler died during initialization (exit code: -9). If exit code is -9 (SIGKILL), "
            "a common cause is the OS OOM killer.\n")
    steps = check_texts(diagnose_with_patterns(_launcher_cut() + died))
    assert steps.index("A kill from outside") < steps.index("does not fit")


WRAPPER = '''
def _launch_one_model(worker_ref):
    subpool_address = worker_ref.launch_builtin_model()


class Worker:
    def launch_builtin_model(self):
        raise RuntimeError("the engine refused the model")


_launch_one_model(Worker())
'''
LINK = "    For further information visit https://errors.pydantic.dev/2.12/v/value_error\n"


def _wrapper_cut(above: str) -> str:
    printed = real_traceback(WRAPPER, "xinference/core/supervisor.py")
    frames = cut_after(printed, "subpool_address = worker_ref.launch_builtin_model()").splitlines()[1:]
    return above + "\n".join(frames) + "\n"  # pasted from its frames on, the header and the error's lines lost


def test_pydantics_closing_line_alone_above_a_cut_traceback_names_a_validation_error() -> None:
    report = diagnose_text(_wrapper_cut(LINK), DiagnoseOptions(include_user_patterns=False))
    final = report.failures[0].failure.final
    assert final.type.endswith("ValidationError") and final.message == "value_error"
    assert "validation error for <Class>" in check_texts(report.failures[0].diagnosis)


def test_the_validation_errors_own_lines_above_are_read_themselves_not_the_link() -> None:
    lines = ("1 validation error for ModelConfig\n  Value error, Invalid repository ID or local directory specified: "
             "'/models/x'. [type=value_error, input_value=ArgsKwargs((), {}), input_type=ArgsKwargs]\n")
    report = diagnose_text(_wrapper_cut(lines + LINK), DiagnoseOptions(include_user_patterns=False))
    assert not any(failure.failure.final.message == "value_error" for failure in report.failures)
    assert any("Invalid repository ID" in failure.failure.final.message for failure in report.failures)
