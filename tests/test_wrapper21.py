"""A wrapper that runs the engine (issue 28, stop 57, branch wrapper21), on real CPython tracebacks of our own code laid
out like the engines' and our own words for the records around them:

- SGLang's scheduler refusing a flush with requests still running ("Cache not flushed because there are pending
  requests", sglang/srt/managers/scheduler.py flush_cache) just above a traceback cut in its serving loop leads the
  guess: the caller released memory under a running request (sgl-project/sglang#6630, a verl rollout);
- Hydra's record of a failed job (`Error executing job with overrides: [...]`, hydra/core/utils.py) says where the job's
  own exception is (verl-project/verl#1368)."""

from __future__ import annotations

from logsleuth.models import Diagnosis
from tests.helpers import check_texts, diagnose_with_patterns, real_traceback
from tests.test_cut_tracebacks import cut_after

SCHEDULER = real_traceback('''
class Scheduler:
    def update_running_batch(self, batch):
        raise RuntimeError("CUDA error: an illegal memory access was encountered")

    def get_next_batch_to_run(self):
        self.running_batch = self.update_running_batch(None)
        return self.running_batch

    def event_loop_overlap(self):
        while True:
            batch = self.get_next_batch_to_run()


def run_scheduler_process():
    scheduler = Scheduler()
    scheduler.event_loop_overlap()


run_scheduler_process()
''', "sglang/srt/managers/scheduler.py")
CUT = cut_after(SCHEDULER, "self.running_batch = self.update_running_batch(None)")
HEADER = "[2025-06-01 09:00:02 TP0] Scheduler hit an exception: "


def _diagnose(text: str) -> Diagnosis:
    return diagnose_with_patterns(text)


def test_the_engine_s_refused_flush_above_a_cut_in_its_serving_loop_leads_as_the_caller_s_ordering() -> None:
    warning = ("[2025-06-01 09:00:02 TP0] Cache not flushed because there are pending requests. "
               "#queue-req: 0, #running-req: 2\n")
    diagnosis = _diagnose(warning + HEADER + CUT)
    assert diagnosis.category == "illegal-memory-access"
    assert "#running-req: 2" in diagnosis.root_cause and "guess" in diagnosis.root_cause
    assert "finished or been aborted before" in check_texts(diagnosis)


def test_the_same_cut_without_the_refused_flush_keeps_the_serving_step_s_reading() -> None:
    diagnosis = _diagnose(HEADER + CUT)
    assert diagnosis.category != "illegal-memory-access"
    assert "finished or been aborted before" not in check_texts(diagnosis)


def test_a_flush_that_succeeded_says_nothing_of_the_caller() -> None:
    diagnosis = _diagnose("[2025-06-01 09:00:01 TP0] Cache flushed successfully!\n" + HEADER + CUT)
    assert diagnosis.category != "illegal-memory-access"


def test_hydra_s_failed_job_line_says_where_the_job_s_own_exception_is() -> None:
    log = ("Error executing job with overrides: ['algorithm.adv_estimator=grpo', 'trainer.n_gpus_per_node=8', "
           "'data.train_batch_size=256']\n")
    diagnosis = _diagnose(log)
    steps = check_texts(diagnosis)
    assert "HYDRA_FULL_ERROR=1" in steps and "worker-*.err" in steps
    assert diagnosis.engine is None  # the overrides name no engine
