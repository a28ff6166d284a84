"""Features the engine version cannot run together: EAGLE speculative decoding with grammar-constrained
(structured-output) requests, which crashed the scheduler in the xgrammar matcher or aborted requests.
"""

from __future__ import annotations

from functools import partial

from pattern_fixtures.engine import Frame
from pattern_fixtures.mirror import SCHEDULER, failing_at, frame_at, scheduler_entry

from .. import paste
from ..blocks import c_attr, crash, message_field_only, no_grad, plain
from ..corpus import Expect, Install, Run, WildCase

EAGLE = "sglang/srt/speculative/eagle_worker.py"


def grammar_mask(run_line: int, loop_line: int, batch_line: int, eagle: tuple[int, int], mask_line: int) -> tuple[Frame, ...]:
    """The event loop's EAGLE verify building the grammar bitmask; xgrammar's matcher raises from C++."""
    forward, verify = eagle
    return (
        scheduler_entry("scheduler.event_loop_normal()", run_line, (("scheduler", "HOP:event_loop_normal"),)),
        no_grad(120),
        frame_at(SCHEDULER, "event_loop_normal", "result = self.run_batch(batch)", loop_line),
        frame_at(SCHEDULER, "run_batch", "batch_result = self.model_worker.forward_batch_generation(batch)", batch_line),
        frame_at(EAGLE, "forward_batch_generation", "logits_output, verify_output, model_worker_batch, can_run_cuda_graph = self.verify(batch, spec_info)", forward),
        frame_at(EAGLE, "verify", "vocab_mask = generate_token_bitmask(batch.reqs, spec_info, retrieve_next_token_cpu, retrieve_next_sibling_cpu, draft_tokens_cpu, batch.sampling_info.vocab_size)", verify),
        frame_at("sglang/srt/speculative/spec_utils.py", "generate_token_bitmask", "traverse_tree(retrieve_next_token_cpu[i], retrieve_next_sibling_cpu[i], draft_tokens_cpu[i], req.grammar, allocate_token_bitmask[i * num_draft_tokens : (i + 1) * num_draft_tokens])", mask_line,
               env=(("traverse_tree", "NEXT"), ("i", "0"), ("num_draft_tokens", "4"))),
        frame_at("sglang/srt/speculative/spec_utils.py", "traverse_tree", "dfs(0, -1, True)", 610, env=(("dfs", "NEXT"),)),
        frame_at("sglang/srt/speculative/spec_utils.py", "dfs", "grammar.fill_vocab_mask(allocate_token_bitmask, curr)", 580, env=(("grammar", "HOP:fill_vocab_mask"), ("curr", "0"))),
        frame_at("sglang/srt/constrained/reasoner_grammar_backend.py", "fill_vocab_mask", "self.grammar.fill_vocab_mask(vocab_mask, idx)", 72, env=(("self", "HOP:fill_vocab_mask"),)),
        frame_at("sglang/srt/constrained/xgrammar_backend.py", "fill_vocab_mask", "self.matcher.fill_next_token_bitmask(vocab_mask, idx)", 100, env=(("self", "HOP:fill_next_token_bitmask"),)),
        frame_at("xgrammar/matcher.py", "fill_next_token_bitmask", "return self._handle.fill_next_token_bitmask(bitmask, index, debug_print)", 308,
                 env=(("self", c_attr("fill_next_token_bitmask")), ("bitmask", "None"), ("index", "0"), ("debug_print", "False"))),
    )


STOP_ACCEPTED = ("[23:42:39] /project/cpp/grammar_matcher.cc:556: Check failed: (!IsStopTokenAccepted()) is false: GrammarMatcher has terminated "
                 "after accepting the stop token, but is trying to find the next token mask")
TERMINATED = "[09:59:19] /project/cpp/grammar_matcher.cc:653: Check failed: !terminated_"
REASONER_CASE = crash(grammar_mask(2679, 980, 2034, (295, 701), 654), ranks="", torch_error=("RuntimeError", STOP_ACCEPTED), stamp="2025-12-04 22:10:39")
REASONER_THREAD = dict(
    kind="spec-decode-grammar-crash", engine_version="0.5.6", fixed_in="https://github.com/sgl-project/sglang/pull/14464",
    resolution="Engine fix PR #14464: the reasoner grammar reports termination, so terminated grammars are skipped in the spec-verify bitmask.",
)

ACCEPT = plain((
    failing_at("sglang/srt/managers/scheduler_output_processor_mixin.py", "process_batch_result_disagg_decode", """
        try:
            req.grammar.accept_token(next_token_id)
        except ValueError as e:
            logger.error(f"Grammar accept_token failed for req {req.rid}", exc_info=True)
        """, 141, env=(("req", "NS(rid='a7c41d0e9b', grammar=NS(accept_token=_target('f1')))"), ("next_token_id", "151668"),
                       ("logger", "__import__('logging').getLogger('sglang')")), marker="req.grammar"),
    failing_at("sglang/srt/constrained/xgrammar_backend.py", "accept_token", """
        if not self.matcher.accept_token(token):
            raise ValueError(f"Tokens not accepted: {token}")
        """, 87, env=(("self", "NS(matcher=NS(accept_token=lambda token: False))"), ("token", "_args[0]"))),
))

CASES = (
    WildCase(thread="https://github.com/sgl-project/sglang/pull/14464", style="innermost-stripped",
             parts=(Run(REASONER_CASE, primary=True),), **REASONER_THREAD, install=Install("/usr/local/lib/python3.11/dist-packages"),
             expect=Expect("feature-conflict", "RuntimeError", STOP_ACCEPTED, frame="fill_next_token_bitmask", fix=((),)),
             facts="the xgrammar check-failed wording, the inner frames (reasoner_grammar_backend 72 -> xgrammar_backend 100 -> xgrammar/matcher.py 308), only the innermost part pasted, indentation stripped",
             paste=(partial(paste.last_lines, count=10), paste.strip_indent, paste.fenced)),
    WildCase(thread="https://github.com/sgl-project/sglang/pull/14480", style="no-rank-header",
             parts=(Run(REASONER_CASE, primary=True),),
             **REASONER_THREAD, install=Install("/sglang/.venv/lib/python3.11/site-packages", sglang="/sglang/python"),
             expect=Expect("feature-conflict", "RuntimeError", STOP_ACCEPTED, frame="fill_next_token_bitmask", fix=((),)),
             facts="the outer frames (scheduler -> eagle_worker.verify -> spec_utils.generate_token_bitmask -> traverse_tree), the header '[<time>] Scheduler hit an exception' without a rank, the /sglang/python layout",
             paste=(paste.fenced,)),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/15050", kind="spec-decode-grammar-crash", style="json-escaped",
             parts=(Run(crash(grammar_mask(2708, 989, 2063, (294, 700), 650), stamp="2025-12-16 09:59:18", torch_error=("RuntimeError", TERMINATED)),
                        primary=True, reformat=message_field_only),),
             engine_version="0.5.6", install=Install("/usr/local/lib/python3.11/dist-packages", sglang="/sgl-workspace/sglang/python"),
             expect=Expect("feature-conflict", "RuntimeError", TERMINATED, frame="fill_next_token_bitmask"),
             facts="frames (scheduler 2708 -> _contextlib 120 -> event_loop_normal 989 -> run_batch 2063 -> eagle_worker), the wording from PR #15373, the header with no timestamp, every quote JSON-escaped",
             resolution="No merged fix (PR #15373 closed); disable speculative decoding for structured-output traffic.",
             paste=(paste.json_escaped, paste.fenced)),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/29110", kind="spec-decode-grammar-crash", style="inline-in-sentence",
             parts=(Run(ACCEPT, primary=True),), engine_version="nightly-dev-cu13-20260607",
             fixed_in="https://github.com/sgl-project/sglang/pull/28682 (nightly-dev images >= 20260620)",
             expect=Expect("feature-conflict", "ValueError", "Tokens not accepted: 151668", fix=((),)),
             facts="the ValueError wording on the PD decode engine with EAGLE and grammar requests, quoted inline in a write-up; how it is logged is ours",
             resolution="Upgrade to a build with PR #28682 (nightlies >= 20260620); aggregated serving was not affected.",
             paste=(partial(paste.exception_only, marker="ValueError"),
                    partial(paste.inline_in_sentence, lead="Every request with `tool_choice=\"required\"` ends with finish_reason abort and ", tail=" in the decode log."))),
)
