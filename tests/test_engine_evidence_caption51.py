"""The engine of a short paste, from positive evidence only (issue 28, stop 51; the retired blind split 14's short pastes
with no engine path, program name or banner):

- the command in a collapsed section's caption: vLLM's bug template captions its environment
  `<summary>The output of <code>python collect_env.py</code></summary>` (vllm-project/vllm#54096 keeps it), and a user
  writes the launch there (`<summary>The output of vllm serve …</summary>`, split 14's B-07);
- sgl-kernel's compiled ops by the library's own name in the loader's error, no directory
  (`common_ops.cpython-313-x86_64-linux-gnu.so: undefined symbol: …`, split 14's E-05): sgl_kernel/load_utils.py
  imports its extension as `common_ops` (its report lists `sgl_kernel/sm90/common_ops.*`, sgl-project/sglang#12119;
  `sgl_kernel/common_ops.abi3.so: undefined symbol`, sgl-project/sglang#5100), a name no vLLM module takes.
"""

from __future__ import annotations

import pytest

from logsleuth.api import diagnose_text
from tests.test_fatal_output_shapes import OPTIONS

# -- the engine of a short paste ---------------------------------------------------------------------------------------------
GGUF_ERROR = "ValueError: GGUF model with architecture olmo2 is not supported yet\n"


def test_the_command_in_a_collapsed_sections_caption_names_the_engine() -> None:
    log = ("<details>\n<summary>The output of vllm serve Olmo-3-32B-Think-Q8_0.gguf</summary>\n\n```text\n"
           f"{GGUF_ERROR}```\n\n</details>\n")
    assert diagnose_text(log, OPTIONS).launch.engine == "vllm"


def test_a_caption_without_a_command_names_no_engine() -> None:
    log = f"<details>\n<summary>The output of the server</summary>\n\n```text\n{GGUF_ERROR}```\n\n</details>\n"
    assert diagnose_text(log, OPTIONS).launch.engine is None


def test_sgl_kernels_library_by_its_own_name_in_the_loaders_error_names_sglang() -> None:
    log = "```shell\ncommon_ops.cpython-313-x86_64-linux-gnu.so: undefined symbol: numa_get_membind\n```\n"
    report = diagnose_text(log, OPTIONS)
    assert report.failures and report.launch.engine == "sglang"


@pytest.mark.parametrize("library", [
    "my_common_ops.cpython-313-x86_64-linux-gnu.so",
    "/opt/other_pkg/common_ops.cpython-310-x86_64-linux-gnu.so",  # another package's directory (review 3 of stop 51)
])
def test_another_library_ending_in_common_ops_names_no_engine(library: str) -> None:
    log = f"{library}: undefined symbol: numa_get_membind\n"
    assert diagnose_text(log, OPTIONS).launch.engine is None
