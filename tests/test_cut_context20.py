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

import pytest

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


def _scheduler_cut(loop: str, call: str, last: str, start_up: str = "init_cuda_graphs") -> str:
    source = SCHEDULER.replace("LOOP", loop).replace("CALL", call).replace("init_cuda_graphs", start_up)
    printed = real_traceback(source, "sglang/srt/managers/scheduler.py")
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


def test_the_loop_run_inside_a_start_up_step_is_not_the_serving_step() -> None:
    # (review cut20 medium 9: a start-up caller whose name names no subsystem, so only the start-up guard rules the
    # serving step out: the scheduler's constructor, sglang/srt/managers/scheduler.py Scheduler.__init__)
    log = _scheduler_cut("event_loop_normal", "__init__", "self.update_running_batch(None)", "__init__")
    diagnosis = diagnose_with_patterns(log)
    assert "serving step" not in diagnosis.title and diagnosis.category == "unclassified", diagnosis.root_cause


USERS_OWN = {
    # a user's script with a function of the loop's name (review cut20 high 1): no engine frame at all
    "run_batch": ("proj/infer.py", '''
def generate(prompts):
    raise RuntimeError("cut")


def run_batch(prompts):
    out = generate(prompts)


run_batch([])
''', "out = generate(prompts)"),
    "engine_step": ("proj/train.py", '''
class Trainer:
    def backward(self):
        raise RuntimeError("cut")

    def engine_step(self, batch):
        self.backward()


Trainer().engine_step(None)
''', "self.backward()"),
}


@pytest.mark.parametrize("name", sorted(USERS_OWN))
def test_a_users_function_named_like_the_engines_step_is_no_serving_step(name: str) -> None:
    filename, code, last = USERS_OWN[name]
    diagnosis = diagnose_with_patterns(cut_after(real_traceback(code, filename), last))
    assert "serving step" not in diagnosis.title and diagnosis.category != "engine-bug", diagnosis.root_cause


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


def _parents_checks(text: str) -> str:
    """The checks of the launcher's own failure (its EOFError), whatever the paste's other failures; of the first
    failure when a kill notice took the EOFError in (the kill is then the failure)."""
    report = diagnose_text(text, DiagnoseOptions(include_user_patterns=False))
    parent = next((found for found in report.failures if found.failure.final.type == "EOFError"), report.failures[0])
    assert parent.diagnosis is not None
    return check_texts(parent.diagnosis)


DEAD = "[12-11 17:52:52] Rank 0 scheduler is dead. Please check if there are relevant logs.\n"


def test_the_engines_death_record_above_with_a_kill_code_leads_with_the_kill() -> None:
    # SGLang logs its exit code on a record of its own after this one (sglang/srt/entrypoints/engine.py
    # _launch_subprocesses; gpustack/gpustack#3848: -9)
    steps = check_texts(diagnose_with_patterns(_launcher_cut(DEAD + "[12-11 17:52:54] Exit code: -9\n")))
    assert "A kill from outside" in steps and "reads as a kill" not in steps


def test_the_engines_death_record_with_an_exit_code_of_its_own_error_is_no_kill() -> None:
    # (review cut20 medium 7: `Exit code: 1` is a Python exception in the child, not the OOM killer)
    steps = check_texts(diagnose_with_patterns(_launcher_cut(DEAD + "[12-11 17:52:54] Exit code: 1\n")))
    assert "The exit code the paste shows (1) is no kill" in steps
    assert "A kill from outside" not in steps and "most often by the kernel's OOM killer" not in steps


def test_a_kill_the_death_message_carries_leads_the_checks() -> None:
    # (the later releases' own words: sglang/srt/entrypoints/engine.py _wait_for_scheduler_ready, the raise site index)
    died = ("RuntimeError: Rank 0 scheduler died during initialization (exit code: -9). If exit code is -9 (SIGKILL), "
            "a common cause is the OS OOM killer.\n")
    steps = check_texts(diagnose_with_patterns(_launcher_cut() + died))
    assert "A kill from outside" in steps and "reads as a kill" not in steps


# How a kill is shown around a launcher's death (review cut20 high 3): a shell's job notice, a container runtime's
# exit code 137 (128 + SIGKILL), SGLang's own watchdog (sglang/srt/utils.py: "… terminated with -9"), torchrun's
# ChildFailedError summary (torch/distributed/elastic/multiprocessing/errors: `exitcode  : -9 (pid: …)`)
KILL_SHOWN = {
    "shell": ("", "bash: line 1:  4242 Killed                  python3 -m sglang.launch_server --tp 8\n"),
    "container": ("", "sglang exited with code 137\n"),
    "watchdog": ("[2025-11-02 10:00:30] Scheduler or DataParallelController 4243 terminated with -9\n", ""),
    "torchrun": ("", "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
                     "  exitcode  : -9 (pid: 4243)\n"),
}


@pytest.mark.parametrize("shown", sorted(KILL_SHOWN))
def test_a_kill_the_paste_shows_in_its_usual_forms_is_never_said_absent(shown: str) -> None:
    above, below = KILL_SHOWN[shown]
    steps = _parents_checks(_launcher_cut(above) + "EOFError\n" + below)
    assert "A kill from outside" in steps or "killed process" in steps
    assert "no exit code or signal" not in steps and "With no kill" not in steps


def test_the_engines_own_teardown_after_a_failure_is_no_kill() -> None:
    # SGLang kills its children itself after a failure (sglang/srt/utils.py kill_process_tree)
    teardown = "WARNING 11-02 10:00:31 [utils.py:520] kill_process_tree: 2 process(es) not reaped within 5s after SIGKILL\n"
    steps = _parents_checks(_launcher_cut(teardown))
    assert "A kill from outside" not in steps


def test_the_childs_error_printed_after_the_parents_is_named_not_said_absent() -> None:
    # (a child's output lands after the parent's: kvcache-ai/ktransformers#1658's ImportError of kt_kernel)
    child = ("[2025-11-02 10:00:31 TP3] Scheduler hit an exception: Traceback (most recent call last):\n"
             '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", line 10, in run\n'
             "    import kt_kernel\n"
             "ImportError: /usr/lib/kt_kernel/kt_kernel_ext.so: undefined symbol: _ZN3c104cuda9SetDeviceEi\n")
    steps = _parents_checks(_launcher_cut() + "EOFError\n" + child)
    assert "own error is not in the paste" not in steps and "ImportError: /usr/lib/kt_kernel" in steps


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


# The switches checked against the launch (review cut20 mediums 4, 5, low 11)
def _launched(command: str, version: str, loop: str = "event_loop_overlap") -> str:
    return (f"{command}\nsglang version {version}\n"
            + _scheduler_cut(loop, loop, "self.update_running_batch(None)"))


def test_overlap_off_is_offered_only_with_the_setting_that_needs_overlap_left_out() -> None:
    # sglang/srt/managers/prefill_delayer.py: "To use PrefillDelayer, disable_overlap_schedule must be False." (0.5.8 on)
    command = "python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --enable-prefill-delayer"
    steps = check_texts(diagnose_with_patterns(_launched(command, "0.5.20")))
    assert "--disable-overlap-schedule (overlap scheduling off) together with the launch without " \
           "--enable-prefill-delayer" in steps


def test_the_pd_disaggregation_overlap_loop_is_overlap_scheduling_too() -> None:
    steps = check_texts(diagnose_with_patterns(_launched(
        "python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B", "0.5.20", "event_loop_overlap_disagg_decode")))
    assert "--disable-overlap-schedule" in steps


def test_an_opt_in_overlap_release_is_offered_the_launch_without_its_opt_in() -> None:
    # (0.3.4 to 0.4.1.post1: --enable-overlap-schedule; --disable-overlap-schedule from 0.3.6)
    command = "python3 -m sglang.launch_server --model-path Qwen/Qwen2-7B --enable-overlap-schedule"
    steps = check_texts(diagnose_with_patterns(_launched(command, "0.3.5")))
    assert "the launch without --enable-overlap-schedule" in steps and "--disable-overlap-schedule" not in steps


BATCH_QUEUE = '''
class EngineCore:
    def step_with_batch_queue(self):
        raise RuntimeError("cut")

    def run_busy_loop(self):
        self.step_with_batch_queue()


EngineCore().run_busy_loop()
'''


def _vllm_batch_queue_cut(above: str) -> str:
    printed = real_traceback(BATCH_QUEUE, "vllm/v1/engine/core.py")
    return (above + "INFO 06-10 10:01:00 [api_server.py:1500] Starting vLLM API server 0 on http://0.0.0.0:8000\n"
            + cut_after(printed, "self.step_with_batch_queue()"))


def test_vllms_async_scheduling_is_turned_off_by_its_negation_and_a_switch_already_on_is_not_offered() -> None:
    # vLLM's settings dump (`non-default args: {…}`) shows enforce_eager and async_scheduling on
    dump = ("INFO 06-10 10:00:01 [api_server.py:1287] vLLM API server version 0.11.0\n"
            "INFO 06-10 10:00:01 [utils.py:326] non-default args: {'model': 'Qwen/Qwen3-8B', 'enforce_eager': True, "
            "'async_scheduling': True}\n")
    steps = check_texts(diagnose_with_patterns(_vllm_batch_queue_cut(dump)))
    assert "--no-async-scheduling (async scheduling off)" in steps
    assert "--enforce-eager" not in steps and "without --async-scheduling" not in steps


def test_graphs_off_is_not_offered_apart_from_the_adaptive_verification_that_needs_them() -> None:
    # vllm/config/vllm.py _validate_adaptive_verification: "… not currently compatible with enforce_eager"
    command = ("vllm serve Qwen/Qwen3-8B --speculative-config "
               "'{\"method\": \"eagle3\", \"enable_adaptive_verification\": true}'\n")
    steps = check_texts(diagnose_with_patterns(_vllm_batch_queue_cut(command)))
    assert "--enforce-eager (CUDA graphs off) together with the launch without --speculative-config" in steps


@pytest.mark.parametrize("gpu", [
    "[2025-08-15 00:16:50] GPU 0: AMD Instinct MI300X\n",
    # an AMD GPU by its architecture alone: the platform decision (reasoning/platform.py) reads it as ROCm too
    "[2025-08-15 00:16:50] Device 0: gfx942\n",
])
def test_an_amd_gpu_of_the_launch_gets_no_cuda_launch_blocking_and_keeps_its_switches(gpu: str) -> None:
    log = gpu + _scheduler_cut("event_loop_normal", "event_loop_normal", "self.update_running_batch(None)")
    steps = check_texts(diagnose_with_patterns(log))
    assert "CUDA_LAUNCH_BLOCKING" not in steps
    assert "--disable-cuda-graph" in steps


# pydantic-core's display of a request body's missing field (src/errors/validation_exception.rs: the count and class,
# the field, its message and `[type=…]`, the link), raised by a client's own model (review cut20 medium 6)
REQUEST_BODY = '''
def build(body):
    raise RuntimeError("cut")


build({})
'''
REQUEST_ERROR = ("pydantic_core._pydantic_core.ValidationError: 1 validation error for ChatCompletionRequest\n"
                 "messages\n"
                 "  Field required [type=missing, input_value={'model': 'x'}, input_type=dict]\n"
                 "    For further information visit https://errors.pydantic.dev/2.9/v/missing\n")


def test_a_request_bodys_validation_error_is_not_said_a_config_refused_at_start_up() -> None:
    printed = cut_after(real_traceback(REQUEST_BODY, "proj/client.py"), 'raise RuntimeError("cut")')
    steps = check_texts(diagnose_with_patterns(printed + REQUEST_ERROR))
    assert "vLLM" not in steps and "at start-up" not in steps


def test_the_link_of_another_kind_alone_above_a_wrapper_cut_gets_no_vllm_config_reading() -> None:
    report = diagnose_text(_wrapper_cut(LINK.replace("value_error", "missing")),
                           DiagnoseOptions(include_user_patterns=False))
    assert "config classes" not in check_texts(report.failures[0].diagnosis)


def test_the_validation_error_named_by_its_link_is_marked_inferred_and_not_searched_for() -> None:
    # (review cut20 low 14: a type and message logsleuth put together is never the search text)
    report = diagnose_text(_wrapper_cut(LINK), DiagnoseOptions(include_user_patterns=False))
    assert report.failures[0].failure.final.typed_from_message


def test_the_death_record_without_its_exit_code_record_says_what_each_code_would_mean() -> None:
    # (gpustack/gpustack#3848's paste stopped at the record: the exit code, -9 there, was on the next one)
    steps = check_texts(diagnose_with_patterns(DEAD))
    assert "which the paste does not show" in steps and "-9 (SIGKILL) is a kill" in steps
    assert "most likely raised an error of its own" not in steps


def test_a_cuda_wait_whose_frame_line_the_paste_cut_mid_name_is_still_the_synchronization() -> None:
    # (split 19 E-01's paste stopped inside the frame line: `… torch/cuda/streams.py", line 224, in synchr`)
    log = _scheduler_cut("event_loop_overlap", "event_loop_overlap", "self.update_running_batch(None)")
    stream = real_traceback(SYNC + "\nEvent().synchronize()\n", "torch/cuda/streams.py").splitlines()
    frame = next(line for line in stream if "in synchronize" in line)
    assert "CUDA synchronization" in diagnose_with_patterns(log + frame[:-len("onize")] + "\n").title


EMPTY_CACHE = '''
def empty_cache():
    raise RuntimeError("CUDA error: an illegal memory access was encountered")
'''


def test_a_torch_cuda_call_that_waits_for_nothing_is_no_synchronization() -> None:
    # (review cut20 low 12: torch/cuda/memory.py empty_cache under the scheduler's idle memory check)
    log = _scheduler_cut("event_loop_normal", "event_loop_normal", "self.update_running_batch(None)")
    memory = real_traceback(EMPTY_CACHE + "\nempty_cache()\n", "torch/cuda/memory.py").splitlines()
    frame = next(line for line in memory if "in empty_cache" in line)
    assert "CUDA synchronization" not in diagnose_with_patterns(log + frame + "\n").title
