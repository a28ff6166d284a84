"""The SGLang dev sweep of stop 41 (h-sweep9), in generic words: an installed package failing while it was being
imported is installed packages that do not fit together (dependency-version), whatever its exception type; and a
compiled module built against another release of the package whose types it imports (Cython's "size changed, may
indicate binary incompatibility").  Each with look-alikes where the import row must not fire.

Tracebacks are printed by the real interpreter from a site-packages tree built in a temporary directory; the
packages' names and the message are the code sites' (transformers' integrations/hub_kernels.py building a kernels
LayerRepository at import, sgl-project/sglang#27654, bytedance-iaas/sglang#566; sgl-kernel's _preload_cuda_library)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import diagnose_without_patterns, traceback_of_installed

IMPORT_ROW_TITLE = "one failed while it was being imported"
KERNELS_MESSAGE = "Either a revision or a version must be specified."
KERNELS_LAYER = f"""
class LayerRepository:
    def __init__(self, repo_id, revision=None, version=None):
        if revision is None and version is None:
            raise ValueError({KERNELS_MESSAGE!r})
"""


def _traceback(tmp_path: Path, files: dict[str, str], script: str) -> str:
    """Real CPython's traceback of `script` (run from `tmp_path`) importing from a site-packages tree holding `files`
    (path under site-packages -> source); every directory on the way is a package."""
    run = traceback_of_installed(tmp_path, files, f"{script}\n")
    assert run.returncode == 1 and "Traceback" in run.stderr, run.stderr
    return run.stderr


def test_a_package_failing_while_transformers_is_imported_is_packages_that_do_not_fit(tmp_path: Path) -> None:
    # sglang/__init__.py imports a transformers model; transformers' hub_kernels builds kernels' LayerRepository at its
    # top level, which the installed kernels refuses
    traceback = _traceback(tmp_path, {
        "sglang/__init__.py": "import transformers.integrations.hub_kernels\n",
        "transformers/integrations/hub_kernels.py": (
            "from kernels.layer import LayerRepository\n\n_MAPPING = {'cuda': LayerRepository('kernels-community/x')}\n"
        ),
        "kernels/layer.py": KERNELS_LAYER,
    }, "import sglang")
    diagnosis = diagnose_without_patterns(traceback)
    assert diagnosis.category == "dependency-version", diagnosis
    assert IMPORT_ROW_TITLE in diagnosis.title
    assert "transformers was being imported (kernels/layer.py)" in diagnosis.root_cause


def test_the_same_error_at_run_time_is_not_read_as_an_import(tmp_path: Path) -> None:
    # the engine's own function calls the same package after every import finished: no package was being imported
    traceback = _traceback(tmp_path, {
        "sglang/srt/layers/hub.py": "from kernels.layer import LayerRepository\n\ndef load():\n    return LayerRepository('x')\n",
        "kernels/layer.py": KERNELS_LAYER,
    }, "from sglang.srt.layers.hub import load\nload()")
    assert IMPORT_ROW_TITLE not in diagnose_without_patterns(traceback).title


def test_the_engines_own_module_failing_at_its_import_is_not_another_packages(tmp_path: Path) -> None:
    traceback = _traceback(tmp_path, {
        "sglang/srt/configs/registry.py": "raise ValueError('Duplicate registration of model type qwen3')\n",
    }, "import sglang.srt.configs.registry")
    assert IMPORT_ROW_TITLE not in diagnose_without_patterns(traceback).title


def test_a_script_run_as_the_main_module_is_no_package_being_imported(tmp_path: Path) -> None:
    # the user's script's top level calls the package: `<module>` of app.py is no installed package's
    traceback = _traceback(tmp_path, {"kernels/layer.py": KERNELS_LAYER},
                           "from kernels.layer import LayerRepository\nLayerRepository('x')")
    assert IMPORT_ROW_TITLE not in diagnose_without_patterns(traceback).title


def test_a_wrapper_run_as_the_main_module_is_no_package_being_imported(tmp_path: Path) -> None:
    # `python -m verl.trainer.main_ppo`: the wrapper's `<module>` frame follows runpy's _run_code, it is not imported
    traceback = _traceback(tmp_path, {
        "verl/trainer/main_ppo.py": f"raise ValueError({KERNELS_MESSAGE!r})\n",
    }, "import runpy\nrunpy.run_module('verl.trainer.main_ppo', run_name='__main__')")
    assert "in _run_code" in traceback
    assert IMPORT_ROW_TITLE not in diagnose_without_patterns(traceback).title


def test_a_kernel_package_finding_no_cuda_toolkit_at_its_import_is_still_the_toolkit_row(tmp_path: Path) -> None:
    # sgl-kernel 0.3.x sgl_kernel/__init__.py runs _preload_cuda_library() at its top level
    traceback = _traceback(tmp_path, {
        "sglang/__init__.py": "import sgl_kernel\n",
        "sgl_kernel/__init__.py": (
            "def _preload_cuda_library():\n    raise RuntimeError('Could not find CUDA lib directory.')\n\n"
            "_preload_cuda_library()\n"
        ),
    }, "import sglang")
    diagnosis = diagnose_without_patterns(traceback)
    assert diagnosis.category == "dependency-version" and "CUDA toolkit" in diagnosis.title, diagnosis.title


def test_an_error_whose_words_name_a_category_keeps_it_at_a_packages_import(tmp_path: Path) -> None:
    # torch's lazy CUDA init run at a package's top level on a host where no GPU is visible: cuda-error's words win
    traceback = _traceback(tmp_path, {
        "sglang/__init__.py": "import deep_gemm\n",
        "deep_gemm/__init__.py": "raise RuntimeError('No CUDA GPUs are available')\n",
    }, "import sglang")
    assert diagnose_without_patterns(traceback).category == "cuda-error"


def test_the_import_row_names_no_category_for_a_failure_without_frames() -> None:
    text = f"[2026-06-11 10:00:00] sglang version 0.5.12\nValueError: {KERNELS_MESSAGE}\n"
    diagnosis = diagnose_without_patterns(text)
    assert IMPORT_ROW_TITLE not in diagnosis.title


def test_a_module_compiled_for_another_numpy_is_packages_that_do_not_fit(tmp_path: Path) -> None:
    # Cython's __Pyx_ImportType check, raised at the compiled module's import
    message = "numpy.dtype size changed, may indicate binary incompatibility. Expected 96 from C header, got 88 from PyObject"
    framed = _traceback(tmp_path, {
        "sglang/__init__.py": "import pandas\n",
        "pandas/__init__.py": "from pandas._libs import interval\n",
        "pandas/_libs/interval.py": f"raise ValueError({message!r})\n",
    }, "import sglang")
    assert diagnose_without_patterns(framed).category == "dependency-version"
    assert diagnose_without_patterns(f"ValueError: {message}\n").category == "dependency-version"

