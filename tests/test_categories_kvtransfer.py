"""Stop 48's KV-transfer sweep (kvtransfer), in generic words (issue 28): prefill-decode disaggregation and KV-cache
offload failures that read as GPU memory or as nothing at all.

- the transfer library refusing to register the KV cache's memory with the network card (NIXL's registerMem raising
  `nixl._bindings.nixlBackendError: NIXL_ERR_BACKEND`, ai-dynamo/nixl#334, ai-dynamo/dynamo#3724; pasted as the
  error line alone, ai-dynamo/nixl#492) is the KV-transfer path (network) with the RDMA device, GPUDirect and UCX
  checks, never GPU memory;
- Mooncake's transfer engine and store client in their glog words (kvcache-ai/Mooncake#1088: a transfer not done after
  60 seconds under SGLang's HiCache; sgl-project/sglang#6836: a put refused with NO_AVAILABLE_HANDLE) are that path too;
- a connector's transfer library that cannot be imported (vLLM's `RuntimeError('NIXL is not available')`,
  ai-dynamo/dynamo#3054) is dependency-version;
- a KV connector name vLLM's factory does not know ('Unsupported connector type: {}', "Connector '{}' is not
  registered.", novitalabs/pegaflow#142, vllm-project/vllm-ascend#16930) names the indexed releases that define it,
  or says it is not one of vLLM's own;
- LMCache's vLLM adapter failing on vLLM's objects (LMCache/LMCache#860, kvcache-ai/Mooncake#868) is an LMCache release
  made for another vLLM release.

Messages are the code sites' (the raise site index; NIXL's nixl/_api.py; Mooncake's transfer_task.cpp, client.cpp);
tracebacks are printed by the real interpreter from our own code (tests.helpers)."""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth.tracebacks.grammar import STRICT_EXCEPTION_LINE
from tests.helpers import diagnose_without_patterns, real_traceback, traceback_of_installed

TRANSFER_TITLE = "KV-cache transfer between the prefill and the decode instances"
REGISTRATION_WORDS = "could not register the memory that holds the KV cache"


def _checks(diagnosis) -> str:  # type: ignore[no-untyped-def]
    fix = diagnosis.fix
    return "\n".join([fix.summary, *fix.steps]) if fix else ""


def _nixl_registration(tmp_path: Path) -> str:
    """vLLM's NixlConnector registering its KV caches through NIXL's agent, whose binding refuses the memory."""
    files = {
        "nixl/_bindings.py": "class nixlBackendError(Exception):\n    pass\n\n"
                             "class Agent:\n    def registerMem(self, descs, handles):\n"
                             "        raise nixlBackendError('NIXL_ERR_BACKEND')\n",
        "nixl/_api.py": "from nixl._bindings import Agent\n\nclass nixl_agent:\n    def __init__(self):\n"
                        "        self.agent = Agent()\n\n    def register_memory(self, reg_descs):\n"
                        "        self.agent.registerMem(reg_descs, [])\n",
        "vllm/distributed/kv_transfer/kv_connector/v1/nixl_connector.py":
            "from nixl._api import nixl_agent\n\nclass NixlConnectorWorker:\n    def __init__(self):\n"
            "        self.nixl_wrapper = nixl_agent()\n\n    def register_kv_caches(self, kv_caches):\n"
            "        self.nixl_wrapper.register_memory(kv_caches)\n",
    }
    script = ("from vllm.distributed.kv_transfer.kv_connector.v1.nixl_connector import NixlConnectorWorker\n"
              "NixlConnectorWorker().register_kv_caches([])\n")
    run = traceback_of_installed(tmp_path, files, script)
    assert "nixl._bindings.nixlBackendError: NIXL_ERR_BACKEND" in run.stderr
    return run.stderr


def test_nixl_refusing_to_register_the_kv_cache_is_the_transfer_path_not_gpu_memory(tmp_path: Path) -> None:
    """ai-dynamo/nixl#334, ai-dynamo/dynamo#3724: registerMem's NIXL_ERR_BACKEND while the KV caches register."""
    diagnosis = diagnose_without_patterns(_nixl_registration(tmp_path))
    assert diagnosis.category == "network"
    assert TRANSFER_TITLE in diagnosis.title
    checks = _checks(diagnosis)
    assert REGISTRATION_WORDS in checks and "nvidia-peermem" in checks
    assert "--disaggregation" not in checks  # SGLang's flags are not vLLM's


def test_a_lower_case_class_is_an_exception_line_only_with_its_error_suffix_and_message() -> None:
    """The bare-line grammar: NIXL's pybind class by its dotted module is an exception line; a logger's lower-case
    name, or a camel-case word that is no error class, is not."""
    assert STRICT_EXCEPTION_LINE.match("nixl._bindings.nixlBackendError: NIXL_ERR_BACKEND")
    assert STRICT_EXCEPTION_LINE.match("nixl._bindings.nixlNotFoundError: NIXL_ERR_NOT_FOUND")
    assert not STRICT_EXCEPTION_LINE.match("nixl._api.nixlAgent: created agent vllm-0")
    assert not STRICT_EXCEPTION_LINE.match("nixlBackendError: NIXL_ERR_BACKEND is what the agent said")


# ai-dynamo/nixl#492: SGLang's launch with the nixl transfer backend and NIXL's exception line, no traceback.
NIXL_LINE_ALONE = ("python -m sglang.launch_server --model-path /models/Llama-3.1-8B-Instruct --disaggregation-mode "
                   "prefill --port 30000 --disaggregation-transfer-backend nixl\n"
                   "nixl._bindings.nixlBackendError: NIXL_ERR_BACKEND\n")
# kvcache-ai/Mooncake#1088: the store client's glog E record, then SGLang's scheduler cut at HiRadixCache.
MOONCAKE_TRANSFER_TIMEOUT = (
    "[2025-11-20 11:09:23 TP0] Mooncake store warmup successfully.\n"
    "E1120 11:10:27.133715 203020 transfer_task.cpp:305] Failed to complete transfers after 60 seconds for batch 2586731328\n"
    "[2025-11-20 11:10:27 TP2] Scheduler hit an exception: Traceback (most recent call last):\n"
    '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2712, in run_scheduler_process\n'
    "    scheduler = Scheduler(\n")
# sgl-project/sglang#6836: the Mooncake store client's put refused for want of a handle.
STORE_WITHOUT_ROOM = (
    "[2025-06-16 07:25:02 DP7 TP7] Connect to Mooncake store successfully.\n"
    "E0616 07:25:02.248354 40411 client.cpp:380] Failed to start put operation: NO_AVAILABLE_HANDLE\n"
    "E0616 07:25:02.248379 40411 store_py.cpp:372] Put operation failed with error: NO_AVAILABLE_HANDLE\n")


@pytest.mark.parametrize(("paste", "shape_check"), [
    (NIXL_LINE_ALONE, REGISTRATION_WORDS),
    (MOONCAKE_TRANSFER_TIMEOUT, "the transfer itself"),
    (STORE_WITHOUT_ROOM, "global segment size"),
])
def test_the_transfer_libraries_own_lines_are_the_transfer_path(paste: str, shape_check: str) -> None:
    """NIXL's exception line alone and Mooncake's glog E records: found, filed under the KV-transfer row, with the
    check of their own shape."""
    diagnosis = diagnose_without_patterns(paste)
    assert diagnosis.category == "network"
    assert TRANSFER_TITLE in diagnosis.title
    assert shape_check in _checks(diagnosis)


def test_a_transfer_library_that_does_not_import_is_dependency_version() -> None:
    """ai-dynamo/dynamo#3054: vLLM's NixlConnector raising what its guarded import of nixl left it."""
    traceback = real_traceback("""
        NixlWrapper = None

        class NixlConnectorWorker:
            def __init__(self):
                if NixlWrapper is None:
                    raise RuntimeError("NIXL is not available")

        NixlConnectorWorker()
        """, "vllm/distributed/kv_transfer/kv_connector/v1/nixl_connector.py")
    diagnosis = diagnose_without_patterns(traceback)
    assert diagnosis.category == "dependency-version"
    assert "transfer library" in diagnosis.title


def _factory_refusal(message: str, version: str) -> str:
    """vLLM's connector factory refusing the kv_connector's name, after the API server's version line."""
    traceback = real_traceback(f"""
        class KVConnectorFactory:
            _registry = {{}}

            @classmethod
            def create_connector(cls, name):
                if name not in cls._registry:
                    raise ValueError({message!r})

        KVConnectorFactory.create_connector("x")
        """, "vllm/distributed/kv_transfer/kv_connector/factory.py")
    return f"INFO 05-13 08:48:31 [api_server.py:1043] vLLM API server version {version}\n{traceback}"


def test_a_connector_of_later_releases_names_them() -> None:
    """The factory of an indexed release that predates NixlConnector: the releases that define it are named."""
    diagnosis = diagnose_without_patterns(_factory_refusal("Unsupported connector type: NixlConnector", "0.8.5.post1"))
    assert diagnosis.pattern == "rule-kv-connector-not-registered"
    assert diagnosis.category == "invalid-flag-value"
    assert "0.9.2" in diagnosis.fix.summary  # type: ignore[union-attr]
    assert any("installed vLLM 0.8.5.post1 does not define it" in fact for fact in diagnosis.evidence)


def test_a_plugins_connector_is_not_called_vllms() -> None:
    """novitalabs/pegaflow#142: a plugin's connector not registered in the process that looked it up."""
    diagnosis = diagnose_without_patterns(_factory_refusal("Connector 'PegaKVConnector' is not registered.", "0.11.2"))
    assert diagnosis.pattern == "rule-kv-connector-not-registered"
    assert "not one of vLLM's own" in diagnosis.title
    assert "0." not in diagnosis.fix.summary  # type: ignore[union-attr]  # no release is offered for it


def test_a_connector_the_release_has_is_left_to_the_category_row() -> None:
    """The look-alike: the installed release defines the name, so no release is the answer."""
    diagnosis = diagnose_without_patterns(_factory_refusal("Connector 'NixlConnector' is not registered.", "0.11.2"))
    assert diagnosis.pattern != "rule-kv-connector-not-registered"
    assert diagnosis.category == "invalid-flag-value"


def test_lmcaches_adapter_failing_on_vllms_objects_is_an_lmcache_made_for_another_vllm(tmp_path: Path) -> None:
    """LMCache/LMCache#860, kvcache-ai/Mooncake#868: LMCache's adapter reading what vLLM's object lacks."""
    files = {
        "vllm/distributed/kv_transfer/kv_connector/v1/lmcache_connector.py":
            "from lmcache.integration.vllm.vllm_v1_adapter import LMCacheConnectorV1Impl\n\n"
            "class LMCacheConnectorV1:\n    def __init__(self):\n        self._lmcache_engine = LMCacheConnectorV1Impl()\n\n"
            "    def build_connector_meta(self, scheduler_output):\n"
            "        return self._lmcache_engine.build_connector_meta(scheduler_output)\n",
        "lmcache/integration/vllm/vllm_v1_adapter.py":
            "class LMCacheConnectorV1Impl:\n    def build_connector_meta(self, scheduler_output):\n"
            "        for request in scheduler_output.scheduled_new_reqs:\n            pass\n",
        "vllm/v1/core/sched/output.py": "class SchedulerOutput:\n    pass\n",
    }
    script = ("from vllm.distributed.kv_transfer.kv_connector.v1.lmcache_connector import LMCacheConnectorV1\n"
              "from vllm.v1.core.sched.output import SchedulerOutput\n"
              "LMCacheConnectorV1().build_connector_meta(SchedulerOutput())\n")
    run = traceback_of_installed(tmp_path, files, script)
    diagnosis = diagnose_without_patterns(run.stderr)
    assert diagnosis.category == "dependency-version"
    assert "LMCache release made for another vLLM release" in diagnosis.title


def test_lmcaches_own_bug_outside_its_adapter_is_not_called_a_version_mix(tmp_path: Path) -> None:
    """The look-alike (LMCache/LMCache#2420's shape): a KeyError in LMCache's storage backend, not its vLLM adapter."""
    files = {"lmcache/v1/storage_backend/local_disk_backend.py":
             "def get_blocking(index, key):\n    return index[key]\n"}
    run = traceback_of_installed(tmp_path, files, "from lmcache.v1.storage_backend.local_disk_backend import "
                                                  "get_blocking\nget_blocking({}, 'chunk-7')\n")
    diagnosis = diagnose_without_patterns(run.stderr)
    assert "LMCache release made for another vLLM release" not in diagnosis.title


# vLLM 0.11.2's KVTransferConfig refusing a role, as pydantic words it (the release's oracle environment).
KV_ROLE_LITERAL = (
    "(APIServer pid=1) INFO 11-14 08:06:07 [api_server.py:1839] vLLM API server version 0.11.2\n"
    "pydantic_core._pydantic_core.ValidationError: 1 validation error for KVTransferConfig\n"
    "kv_role\n"
    "  Input should be 'kv_producer', 'kv_both' or 'kv_consumer' [type=literal_error, input_value='kv_prod', "
    "input_type=str]\n")


def test_a_kv_transfer_config_value_the_release_refuses_is_the_flags_value() -> None:
    """vLLM's own check of kv_role (vllm/config/kv_transfer.py) and pydantic's refusal of the Literal field: the value
    given in --kv-transfer-config, not an engine bug."""
    role = real_traceback("""
        def __post_init__(kv_role):
            raise ValueError(f"Unsupported kv_role: {kv_role}. Supported roles are ['kv_producer', 'kv_consumer', 'kv_both']")

        __post_init__("kv_prod")
        """, "vllm/config/kv_transfer.py")
    for paste in (role, KV_ROLE_LITERAL):
        diagnosis = diagnose_without_patterns(paste)
        assert diagnosis.category == "invalid-flag-value"
        assert "--kv-transfer-config" in diagnosis.title


def test_an_encoder_cache_connector_is_not_read_as_a_kv_connector() -> None:
    """The look-alike: the encoder cache's factory words its refusal as the KV factory does; a name of its own
    connector modules is not said to be no connector of vLLM's."""
    diagnosis = diagnose_without_patterns(_factory_refusal("Unsupported connector type: ECExampleConnector", "0.11.2"))
    assert diagnosis.pattern != "rule-kv-connector-not-registered"


def test_the_import_time_nixl_warning_does_not_decide_an_unrelated_failure() -> None:
    """vLLM prints `NIXL is not available` as a WARNING whenever it imports nixl_connector.py; a launch that never
    starts that connector then fails for its own reason (review M3 of stop 48)."""
    traceback = real_traceback("""
        class EngineCore:
            def __init__(self):
                raise RuntimeError("widget calibration failed on this device")

        EngineCore()
        """, "vllm/v1/engine/core.py")
    warning = "WARNING 08-01 10:00:00 [nixl_connector.py:60] NIXL is not available\n"
    diagnosis = diagnose_without_patterns(warning + traceback)
    assert "transfer library" not in diagnosis.title
