"""Stop 52 (config16), in generic words (issue 28): settings that the engines' checks refuse together, and the
KV-transfer checks of a disaggregated deployment that name a configuration, not the network.

- A configuration check that ties one setting to another ("num_redundant_experts should be used with EPLB.", vLLM's
  ParallelConfig, reached as pydantic's `1 validation error for ParallelConfig` / `  Value error, …`;
  "collect_detailed_traces requires `--otlp-traces-endpoint` to be set.", vllm/config/observability.py) is a setting
  given without what it needs (invalid-flag-value), with the engine's sentence quoted and its fields checked as flags
  (vllm-project/vllm#24523; the raise site index holds the templates and their modules).
- Prefill and decode instances with different tensor-parallel sizes, refused by the KV transfer code "not supported
  yet" (SGLang's disaggregation/nixl/conn.py and mooncake/conn.py maybe_send_extra, vLLM's nixl_connector.py
  'TPU (pallas_v1) DOES NOT support heterogeneous TP yet.'), is a parallel configuration to match, not a transfer
  fault with RDMA checks (sgl-project/sglang#38552).
- vLLM's NixlConnector handshake answered by another engine ('Remote NIXL agent engine ID mismatch. Expected
  {},received {}.', _nixl_handshake) is the side channel's address setting (network), with the environment variable
  the connector reads (vllm/envs.py VLLM_NIXL_SIDE_CHANNEL_HOST; vllm-project/vllm#27083).

Tracebacks are real CPython's, from a site-packages tree laid out as the engines'; the messages are the engines'
templates (the raise site index), pydantic's display its own format."""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth.models import ExceptionBlock, Failure
from logsleuth.reasoning.engine_words import instructions
from tests.helpers import check_texts, diagnose_without_patterns, traceback_of_installed
from tests.test_categories_cat6 import no_rules  # noqa: F401 (no_rules: the fixture, used below)

VALIDATION_ERROR = "pydantic_core._pydantic_core.ValidationError"
REDUNDANT_EXPERTS = "num_redundant_experts should be used with EPLB.16."  # vllm/config/parallel.py, its `{}` filled
DISPLAY = " [type=value_error, input_value=ArgsKwargs((), {'pipeline_parallel_size': 1}), input_type=ArgsKwargs]"
SETTINGS_TITLE = "configuration check allows only together with another setting"

# pydantic's ValidationError as vLLM's config dataclasses raise it: the validator's ValueError inside pydantic's
# report (its title, then `  Value error, <message> [type=value_error, …]`), raised from pydantic's dataclass __init__.
_PYDANTIC_CORE = """
class ValidationError(ValueError):
    pass
"""
# (pydantic-core's validator is compiled code: the ValidationError comes out of the `validate_python(…)` call line, as
# codecs.strict_errors raises the exception it is given from C)
_PYDANTIC_DATACLASSES = """
import codecs

from pydantic_core._pydantic_core import ValidationError

DISPLAY = """ + repr(DISPLAY) + """


class _Validator:
    validate_python = staticmethod(codecs.strict_errors)


def _report(instance, kwargs):
    try:
        instance.__post_init__(**kwargs)
    except ValueError as error:
        return ValidationError("1 validation error for " + type(instance).__name__ + "\\n  Value error, " + str(error)
                               + DISPLAY)


def __init__(__dataclass_self__, **kwargs):
    s = __dataclass_self__
    s.__pydantic_validator__.validate_python(_report(s, kwargs))
"""
_CONFIG = """
from pydantic._internal import _dataclasses


class ParallelConfig:
    __pydantic_validator__ = _dataclasses._Validator()
    __init__ = _dataclasses.__init__

    def __post_init__(self, num_redundant_experts=0, enable_eplb=False):
        if num_redundant_experts and not enable_eplb:
            raise ValueError(f"num_redundant_experts should be used with EPLB.{num_redundant_experts}.")
"""


def _config_traceback(tmp_path: Path, config_module: str) -> str:
    files = {"pydantic_core/_pydantic_core.py": _PYDANTIC_CORE, "pydantic/_internal/_dataclasses.py": _PYDANTIC_DATACLASSES,
             config_module: _CONFIG}
    module = config_module.removesuffix(".py").replace("/", ".")
    run = traceback_of_installed(tmp_path, files, f"from {module} import ParallelConfig\n"
                                                  "ParallelConfig(num_redundant_experts=16)\n")
    assert f"{VALIDATION_ERROR}: 1 validation error for ParallelConfig" in run.stderr, run.stderr
    return run.stderr


@pytest.mark.usefixtures("no_rules")
def test_a_config_check_tying_two_settings_is_a_setting_given_without_the_other(tmp_path: Path) -> None:
    diagnosis = diagnose_without_patterns(_config_traceback(tmp_path, "vllm/config/parallel.py"))
    assert diagnosis.category == "invalid-flag-value", diagnosis.title
    assert SETTINGS_TITLE in diagnosis.title
    quoted = [words for words in diagnosis.engine_says if words.text == REDUNDANT_EXPERTS]
    assert quoted and quoted[0].speaker is None  # vLLM's check said it, not pydantic
    assert any("--num-redundant-experts" in check for check in quoted[0].checks)
    assert "EPLB" in check_texts(diagnosis)


@pytest.mark.usefixtures("no_rules")
def test_the_same_report_pasted_alone_with_vllms_process_prefix(tmp_path: Path) -> None:
    # the frameless form vLLM's API server prints: the raise site index places the check in vllm/config/
    pasted = (f"(APIServer pid=1) {VALIDATION_ERROR}: 1 validation error for ParallelConfig\n"
              f"(APIServer pid=1)   Value error, {REDUNDANT_EXPERTS}{DISPLAY}\n")
    diagnosis = diagnose_without_patterns(pasted)
    assert diagnosis.category == "invalid-flag-value", diagnosis.title
    assert SETTINGS_TITLE in diagnosis.title


@pytest.mark.usefixtures("no_rules")
def test_look_alike_the_same_shape_in_words_no_engine_check_has(tmp_path: Path) -> None:
    # a sentence of the same shape that no template of the engines' code holds, raised where the row's configuration
    # modules are (vllm/config/): the row's raise_frames gate passes, only its engine_message gate keeps it out
    files = {"vllm/config/lora.py": "def build(rank_pattern):\n    raise ValueError('rank_pattern should be used with "
                                    "target_modules_map.')\n"}
    run = traceback_of_installed(tmp_path, files, "from vllm.config.lora import build\nbuild(2)\n")
    assert "vllm/config/lora.py" in run.stderr, run.stderr
    diagnosis = diagnose_without_patterns(run.stderr)
    assert SETTINGS_TITLE not in diagnosis.title


def test_the_settings_tie_is_quoted_and_its_bare_field_checked() -> None:
    # vllm/config/observability.py's wording: a field (no backticks) that needs a flag
    block = ExceptionBlock(type="ValueError", message="collect_detailed_traces requires `--otlp-traces-endpoint` to be set.")
    failure = Failure(kind="traceback", line=1, offset=0, end_offset=0, exceptions=(block,))
    said = instructions(failure, "vllm", "0.11.2")
    assert [words.text for words in said] == [block.message]
    assert any(check.startswith("`--otlp-traces-endpoint`") for check in said[0].checks)
    assert any(check.startswith("`collect_detailed_traces` is set by --collect-detailed-traces") for check in said[0].checks)


def test_look_alike_a_snake_case_word_in_another_sentence_is_not_checked() -> None:
    block = ExceptionBlock(type="ValueError", message="Please set max_model_len to a smaller value.")
    failure = Failure(kind="traceback", line=1, offset=0, end_offset=0, exceptions=(block,))
    assert not any("is set by --max-model-len" in check for words in instructions(failure, "vllm", "0.11.2")
                   for check in words.checks)


# -- disaggregation: different tensor-parallel sizes --------------------------------------------------------------

PD_TP = "PD Disaggregation does NOT support PD different TP sizes for non-MLA SWA hybrid models yet."
_SGLANG_NIXL = f'''
class NixlKVManager:
    attn_tp_size = 1

    def maybe_send_extra(self, decode_tp_size):
        if self.attn_tp_size != decode_tp_size:
            raise RuntimeError(
                "{PD_TP}"
            )

    def transfer_worker(self):
        self.maybe_send_extra(4)
'''


def _sglang_transfer_failure(tmp_path: Path) -> str:
    files = {"sglang/srt/disaggregation/nixl/conn.py": _SGLANG_NIXL}
    run = traceback_of_installed(tmp_path, files, "from sglang.srt.disaggregation.nixl.conn import NixlKVManager\n"
                                                  "NixlKVManager().transfer_worker()\n")
    assert f"RuntimeError: {PD_TP}" in run.stderr, run.stderr
    # the prefill's record of the same request, as sglang/srt/disaggregation/prefill.py logs it after the traceback
    return (run.stderr + f"Prefill transfer failed for request rank=0 req.rid='5b02' with exception {PD_TP}\n")


@pytest.mark.usefixtures("no_rules")
def test_different_tp_sizes_between_prefill_and_decode_is_a_parallel_configuration(tmp_path: Path) -> None:
    diagnosis = diagnose_without_patterns(_sglang_transfer_failure(tmp_path))
    assert diagnosis.category == "parallel-config", diagnosis.title
    checks = check_texts(diagnosis)
    assert "same tensor-parallel size" in checks
    assert "--tp-size" in checks
    assert "RDMA" not in checks.replace("no network, RDMA or transfer-backend setting", "")
    assert "ibv_devinfo" not in checks


@pytest.mark.usefixtures("no_rules")
def test_vllms_heterogeneous_tp_assert_in_its_nixl_connector(tmp_path: Path) -> None:
    files = {"vllm/distributed/kv_transfer/kv_connector/v1/nixl_connector.py":
             "class NixlConnectorWorker:\n    def add_remote_agent(self, tp_ratio):\n"
             "        assert tp_ratio == 1, \\\n            \"TPU (pallas_v1) DOES NOT support heterogeneous TP yet.\"\n"}
    run = traceback_of_installed(tmp_path, files, "from vllm.distributed.kv_transfer.kv_connector.v1.nixl_connector "
                                                  "import NixlConnectorWorker\nNixlConnectorWorker().add_remote_agent(2)\n")
    diagnosis = diagnose_without_patterns(run.stderr)
    assert diagnosis.category == "parallel-config", diagnosis.title
    assert "--tensor-parallel-size" in check_texts(diagnosis)


def test_look_alike_another_check_raised_in_the_transfer_code_is_no_tp_mismatch(tmp_path: Path) -> None:
    """A check of the KV connector's own bookkeeping (an offloading scheduler's assertion on its block counts) raised
    in kv_transfer/: where the check is raised says nothing of the instances' sizes, so the TP-mismatch and block-size
    readings, which only their own refusals name, stay away (stop 52: the TP-mismatch row had read such a failure
    from its frames alone and told the user to match sizes that were not in question)."""
    files = {"vllm/distributed/kv_transfer/kv_connector/v1/offloading/scheduler.py":
             "class OffloadingConnectorScheduler:\n    def update_state_after_alloc(self, num_blocks):\n"
             "        assert num_blocks % 4 == 0\n"}
    run = traceback_of_installed(tmp_path, files, "from vllm.distributed.kv_transfer.kv_connector.v1.offloading."
                                                  "scheduler import OffloadingConnectorScheduler\n"
                                                  "OffloadingConnectorScheduler().update_state_after_alloc(3)\n")
    diagnosis = diagnose_without_patterns(run.stderr)
    assert "tensor-parallel sizes" not in diagnosis.title and "block sizes" not in diagnosis.title, diagnosis.title


@pytest.mark.usefixtures("no_rules")
def test_look_alike_a_transfer_failing_for_another_reason_stays_the_transfer_path(tmp_path: Path) -> None:
    pasted = ("Prefill transfer failed for request rank=0 req.rid='5b02' with exception "
              "KVTransferError(bootstrap_room=17): Failed to send kv chunk\n")
    diagnosis = diagnose_without_patterns(pasted)
    assert diagnosis.category == "network", diagnosis.title
    assert "tensor-parallel sizes" not in diagnosis.title


# -- vLLM's NIXL handshake answered by another engine -------------------------------------------------------------

ENGINE_ID_MISMATCH = ("Remote NIXL agent engine ID mismatch. Expected 46126a31-6b81-435d-a116-e3e34a76ded3_dp0,"
                      "received 96b1c4ff-9edf-4d21-b7cf-975a5f441d03_dp0.")


@pytest.mark.usefixtures("no_rules")
def test_a_nixl_handshake_reaching_another_engine_is_the_side_channel_address(tmp_path: Path) -> None:
    files = {"vllm/distributed/kv_transfer/kv_connector/v1/nixl_connector.py":
             "class NixlConnectorWorker:\n    def _nixl_handshake(self, engine_id, expected_engine_id):\n"
             "        if engine_id != expected_engine_id:\n            raise RuntimeError(\n"
             "                f\"Remote NIXL agent engine ID mismatch. \"\n"
             "                f\"Expected {expected_engine_id},received {engine_id}.\")\n"}
    run = traceback_of_installed(
        tmp_path, files, "from vllm.distributed.kv_transfer.kv_connector.v1.nixl_connector import NixlConnectorWorker\n"
                         "NixlConnectorWorker()._nixl_handshake('96b1c4ff-9edf-4d21-b7cf-975a5f441d03_dp0', "
                         "'46126a31-6b81-435d-a116-e3e34a76ded3_dp0')\n")
    assert f"RuntimeError: {ENGINE_ID_MISMATCH}" in run.stderr, run.stderr
    diagnosis = diagnose_without_patterns(run.stderr)
    assert diagnosis.category == "network", diagnosis.title
    assert "VLLM_NIXL_SIDE_CHANNEL_HOST" in check_texts(diagnosis)


@pytest.mark.usefixtures("no_rules")
def test_the_same_mismatch_as_vllms_worker_error_record() -> None:
    pasted = (f"(Worker_DP0_EP0 pid=2823482) ERROR 10-16 17:22:56 [nixl_connector.py:815] RuntimeError: "
              f"{ENGINE_ID_MISMATCH}\n"
              "(Worker_DP0_EP0 pid=2823482) ERROR 10-16 17:22:56 [nixl_connector.py:827] Handshake failed for request "
              "chatcmpl-1\n")
    diagnosis = diagnose_without_patterns(pasted)
    assert diagnosis.category == "network", diagnosis.title
    assert "side channel" in diagnosis.title
    assert "VLLM_NIXL_SIDE_CHANNEL_HOST" in check_texts(diagnosis)


@pytest.mark.usefixtures("no_rules")
def test_sglangs_server_args_check_of_the_same_shape(tmp_path: Path) -> None:
    # sglang/srt/server_args.py ServerArgs.__post_init__'s assert (the raise site index): a flag valid only with
    # another flag's value
    message = "--elastic-ep-join-rank-offset is only valid with --elastic-ep-join-mode scale."
    files = {"sglang/srt/server_args.py": "class ServerArgs:\n    elastic_ep_join_mode = None\n\n"
                                          "    def __post_init__(self):\n"
                                          f"        assert self.elastic_ep_join_mode == 'scale', {message!r}\n"}
    run = traceback_of_installed(tmp_path, files, "from sglang.srt.server_args import ServerArgs\n"
                                                  "ServerArgs().__post_init__()\n")
    diagnosis = diagnose_without_patterns(run.stderr)
    assert diagnosis.category == "invalid-flag-value", diagnosis.title
    assert SETTINGS_TITLE in diagnosis.title


# -- one owner for "X requires --Y to be set" (review 1 of stop 52, M1) ---------------------------------------------

# An engine's configuration check that asks for a launch flag "to be set" (the raise site index: vLLM's
# ObservabilityConfig._validate_tracing_config, SGLang's ServerArgs._handle_ssl_validation): missing-flag's shape, read
# the same with the check's frame shown or not, so the settings row's gates (a frame, the exact type) never decide it.
ASKS_FOR_A_FLAG = {
    "vllm": ("vllm/config/observability.py", "collect_detailed_traces requires `--otlp-traces-endpoint` to be set."),
    "sglang": ("sglang/srt/server_args.py", "--ssl-certfile requires --ssl-keyfile to be specified as well."),
}


@pytest.mark.usefixtures("no_rules")
@pytest.mark.parametrize("shown", ["with its frame", "alone"])
@pytest.mark.parametrize("engine", sorted(ASKS_FOR_A_FLAG))
def test_a_check_asking_for_a_flag_to_be_set_is_missing_flag_with_or_without_its_frame(tmp_path: Path, engine: str,
                                                                                        shown: str) -> None:
    module, message = ASKS_FOR_A_FLAG[engine]
    pasted = f"ValueError: {message}\n"
    if shown == "with its frame":
        run = traceback_of_installed(tmp_path, {module: f"def check():\n    raise ValueError({message!r})\n"},
                                     f"from {module.removesuffix('.py').replace('/', '.')} import check\ncheck()\n")
        assert run.stderr.endswith(pasted), run.stderr
        pasted = run.stderr
    diagnosis = diagnose_without_patterns(pasted)
    assert diagnosis.category == "missing-flag", diagnosis.title


# -- different block sizes under P TP > D TP (review 1 of stop 52, M2) ----------------------------------------------

BLOCK_SIZES = "Different local/remote block sizes are not supported when P TP > D TP."
_NIXL_WORKER = f'''
class NixlBaseConnectorWorker:
    def _validate_remote_agent_handshake(self, tp_ratio, block_size_ratio):
        if tp_ratio > 0:
            return
        assert block_size_ratio == 1, (
            "{BLOCK_SIZES}"
        )
'''


@pytest.mark.usefixtures("no_rules")
@pytest.mark.parametrize("shown", ["with its frame", "alone"])
def test_different_block_sizes_under_a_larger_prefill_tp_is_the_block_size_not_the_tp_sizes(tmp_path: Path,
                                                                                              shown: str) -> None:
    # vllm nixl/base_worker.py _validate_remote_agent_handshake (the raise site index): heterogeneous TP is mapped there,
    # equal block sizes are what the branch asks for
    pasted = f"AssertionError: {BLOCK_SIZES}\n"
    if shown == "with its frame":
        module = "vllm.distributed.kv_transfer.kv_connector.v1.nixl.base_worker"
        run = traceback_of_installed(tmp_path, {module.replace(".", "/") + ".py": _NIXL_WORKER},
                                     f"from {module} import NixlBaseConnectorWorker\n"
                                     "NixlBaseConnectorWorker()._validate_remote_agent_handshake(-2, 2)\n")
        assert run.stderr.endswith(pasted), run.stderr
        pasted = run.stderr
    diagnosis = diagnose_without_patterns(pasted)
    assert diagnosis.category == "invalid-flag-value", diagnosis.title
    assert "block sizes" in diagnosis.title
    checks = check_texts(diagnosis)
    assert "--block-size" in checks
    assert "same tensor-parallel size" not in checks


@pytest.mark.usefixtures("no_rules")
def test_the_eplb_check_in_its_wording_from_vllm_0_11(tmp_path: Path) -> None:
    # vllm/config/parallel.py from 0.11.0 (the raise site index; review 1 of stop 52, L1): the same check as
    # "num_redundant_experts should be used with EPLB.", reworded
    message = "num_redundant_experts is set to 16 but EPLB is not enabled. Either enable EPLB or unset num_redundant_experts."
    pasted = (f"(APIServer pid=1) {VALIDATION_ERROR}: 1 validation error for ParallelConfig\n"
              f"(APIServer pid=1)   Value error, {message}{DISPLAY}\n")
    diagnosis = diagnose_without_patterns(pasted)
    assert diagnosis.category == "invalid-flag-value", diagnosis.title
    assert SETTINGS_TITLE in diagnosis.title
    assert "enable_eplb" in check_texts(diagnosis)


def test_a_settings_tie_led_by_an_environment_variable_has_its_field_checked() -> None:
    # sglang/srt/arg_groups/pd_disaggregation_hook.py (0.5.23): quoted as an instruction (case-blind), so its bare field
    # is checked under the same case rule (review 1 of stop 52, L3)
    block = ExceptionBlock(type="ValueError", message="SGLANG_DISAGG_STAGING_BUFFER requires "
                                                      "disaggregation_transfer_backend='mooncake' or 'nixl', got 'mori'.")
    failure = Failure(kind="traceback", line=1, offset=0, end_offset=0, exceptions=(block,))
    said = instructions(failure, "sglang", "0.5.23")
    assert [words.text for words in said] == [block.message]
    assert any(check.startswith("`disaggregation_transfer_backend` is set by --disaggregation-transfer-backend")
               for check in said[0].checks)
