"""A component of one engine mode refused by the other mode's check (reasoning/engine_mode.py, facts/engine_modes.toml):
feature-conflict, "run it under the engine mode it was built for", the mode's switch named only as the releases read it.

Threads and code: LMCache/LMCache#2062 (vLLM 0.9.1 under VLLM_USE_V1=0 with LMCache's V1 connector: the V0 factory's
assertion, pasted as the statement and the bare type), vllm-project/vllm#19524 (a V0 connector under the V1 factory);
vllm/distributed/kv_transfer/kv_connector/factory.py KVConnectorFactory.create_connector_v0 / create_connector_v1.
The tracebacks are the real interpreter's, raised under the factory's file name."""

from __future__ import annotations

import dataclasses

from tests.helpers import real_traceback
from tests.reasoning.diagnosed import OPTIONS, first_diagnosis


def _factory(base: str, function: str = "create_connector_v0") -> str:
    return real_traceback(f"""
        class {base}:
            pass

        class SomeConnector:
            pass

        def {function}(connector_cls):
            assert issubclass(connector_cls, {base})

        {function}(SomeConnector)
        """, "vllm/distributed/kv_transfer/kv_connector/factory.py")


def test_the_v0_check_refusing_a_connector_says_run_it_under_v1() -> None:
    diagnosis = first_diagnosis(_factory("KVConnectorBase"))
    assert diagnosis.pattern == "rule-engine-mode-component" and diagnosis.category == "feature-conflict"
    assert diagnosis.engine == "vllm" and "V0 engine" in diagnosis.root_cause
    assert diagnosis.fix is not None and "the V1 engine" in diagnosis.fix.summary
    # the release is not known: the switch is named with the releases that read it, never set as a change
    assert diagnosis.fix.env == () and diagnosis.fix.needs_input
    assert any("VLLM_USE_V1" in fact and "0.6.6.post1" in fact for fact in diagnosis.evidence)


def test_the_pasted_statement_and_bare_type_are_enough() -> None:
    """The paste of LMCache/LMCache#2062's shape: the assert statement, then the type alone."""
    diagnosis = first_diagnosis("    assert issubclass(connector_cls, KVConnectorBase)\nAssertionError\n")
    assert diagnosis.pattern == "rule-engine-mode-component"


def test_the_v1_check_refusing_a_connector_says_name_a_v1_one() -> None:
    diagnosis = first_diagnosis(_factory("KVConnectorBase_V1", "create_connector_v1"))
    assert diagnosis.pattern == "rule-engine-mode-component" and "V1 engine" in diagnosis.root_cause
    assert diagnosis.fix is not None and "name a V1" in diagnosis.fix.summary


def test_a_release_that_reads_the_switch_gets_it_as_the_change() -> None:
    options = dataclasses.replace(OPTIONS, engine="vllm", engine_version="0.9.2")
    diagnosis = first_diagnosis(_factory("KVConnectorBase"), options)
    assert diagnosis.fix is not None and diagnosis.fix.env == (("VLLM_USE_V1", "1"),)


def test_a_release_whose_code_does_not_show_the_switch_gets_no_change() -> None:
    """vLLM 0.13.0's envs.py hands its variables out through a module __getattr__: whether it reads the switch is not
    known, so it is not set as a change."""
    options = dataclasses.replace(OPTIONS, engine="vllm", engine_version="0.13.0")
    diagnosis = first_diagnosis(_factory("KVConnectorBase"), options)
    assert diagnosis.fix is not None and diagnosis.fix.env == () and diagnosis.fix.needs_input
    assert any("whether vLLM 0.13.0 reads it" in fact for fact in diagnosis.evidence)


def test_another_class_asserted_is_not_an_engine_mode() -> None:
    diagnosis = first_diagnosis(_factory("LinearBase", "create_layer"))
    assert diagnosis.pattern != "rule-engine-mode-component"


_HEADER = "INFO 06-20 10:00:00 [api_server.py:1287] vLLM API server version 0.9.2\n"


def test_a_fallback_the_user_cannot_remove_never_sets_the_switch() -> None:
    """vLLM 0.9's arg_utils._raise_or_fallback: on a GPU below sm80 VLLM_USE_V1=1 raises "VLLM_USE_V1=1 is not
    supported with Compute Capability < 8.0." (review fault 5): the lead is a V0 connector."""
    log = (_HEADER + "WARNING 06-20 10:00:02 [arg_utils.py:1642] Compute Capability < 8.0 is not supported by the V1 "
           "Engine. Falling back to V0. \n" + _factory("KVConnectorBase"))
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern == "rule-engine-mode-component" and diagnosis.fix is not None
    assert diagnosis.fix.env == ()
    assert diagnosis.fix.summary.startswith("Name a V0 KV cache connector")


def test_a_fallback_for_a_setting_says_leave_it_out() -> None:
    log = (_HEADER + "WARNING 06-20 10:00:02 [arg_utils.py:1642] --some-feature is not supported by the V1 Engine. "
           "Falling back to V0. We recommend to remove --some-feature from your config in favor of the V1 Engine.\n"
           + _factory("KVConnectorBase"))
    diagnosis = first_diagnosis(log)
    assert diagnosis.fix is not None and diagnosis.fix.env == ()
    assert "leave --some-feature out" in diagnosis.fix.summary


def test_without_a_fallback_the_release_s_switch_is_set() -> None:
    diagnosis = first_diagnosis(_HEADER + _factory("KVConnectorBase"))
    assert diagnosis.fix is not None and diagnosis.fix.env == (("VLLM_USE_V1", "1"),)
