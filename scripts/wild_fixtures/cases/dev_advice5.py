"""Stop 39's dev split for issue 28's advice (branch h-advice5): classes a blind split filed under the wrong
category or answered with advice that did not help.  A kernel package's loader that finds no CUDA toolkit (sgl-kernel's
preload of the CUDA runtime: the toolkit row, not the subsystem of the module that imported it).

Facts were mined from even-numbered threads (the message wording, the frames they showed, the release, the
resolution); what a thread did not show is ours, and each `facts` says which.
"""

from __future__ import annotations

from pattern_fixtures.mirror import failing_at

from .. import paste
from ..blocks import plain
from ..corpus import Expect, Run, WildCase
from .dev_detect import top

# -- sgl-project/sglang#13089: sgl-kernel's import preloads the CUDA runtime from the toolkit's lib directory ----------

# sgl-kernel 0.3.x sgl_kernel/__init__.py _preload_cuda_library raises when neither CUDA_HOME/lib nor lib64 exists (a
# runtime image without the toolkit); SGLang's FP8 kernel module imports sgl_kernel at start-up.
NO_CUDA_LIB_DIR = "Could not find CUDA lib directory."
SGL_KERNEL_IMPORT = Run(plain((
    top("sglang/srt/layers/quantization/fp8_kernel.py", "_import_kernels", "_preload_cuda_library()", 40,
        env=(("_preload_cuda_library", "NEXT"),)),
    failing_at("sgl_kernel/__init__.py", "_preload_cuda_library", f"""
        if not (cuda_home / "lib64").is_dir():
            raise RuntimeError({NO_CUDA_LIB_DIR!r})
        """, 217, env=(("cuda_home", "__import__('pathlib').Path('/nonexistent/cuda')"),)),
)), primary=True)

CASES = (
    WildCase(thread="https://github.com/sgl-project/sglang/pull/13089", kind="dev-advice5-cuda-lib-dir", style="fenced",
             parts=(SGL_KERNEL_IMPORT,), engine_version="0.5.3",
             expect=Expect("dependency-version", "RuntimeError", NO_CUDA_LIB_DIR, frame="_preload_cuda_library"),
             facts="importing sgl_kernel on a machine whose image has the CUDA runtime and driver but no CUDA toolkit: "
                   "sgl_kernel/__init__.py line 217 raising RuntimeError('Could not find CUDA lib directory.'); the SGLang module "
                   "that imports it (the FP8 kernel module), its line and the release ours",
             resolution="The CUDA toolkit's lib directory is absent (a runtime, not devel, image): install the toolkit that matches "
                        "torch's CUDA or set CUDA_HOME to it, or use the engine's image; a later sgl-kernel only tries the preload "
                        "(the PR relaxing the check).",
             paste=(paste.fenced,)),
)
