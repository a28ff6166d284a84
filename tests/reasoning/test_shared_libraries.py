"""Rule rule-shared-library-missing (reasoning/shared_libraries.py): a system library the dynamic loader cannot find.

Each traceback is printed by real CPython: a mirrored package's extension loader asks ctypes for a library no system
has, so the message is the loader's own "<library>: cannot open shared object file: No such file or directory"
(the shape an extension import raises as ImportError).  The library names are the rows of
facts/shared_libraries.toml, made unfindable by a directory path nothing holds."""

from __future__ import annotations

import pytest

from logsleuth.facts.shared_libraries import library_named, shared_libraries
from tests.helpers import real_traceback
from tests.reasoning.diagnosed import first_diagnosis

LAUNCH = "python3 -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct --port 30000\n"


def _loader_failure(library: str) -> str:
    """sgl_kernel's import failing to load `library` (a path nothing holds, so the loader's words name it)."""
    code = f'''
        import ctypes, os, sys
        os.makedirs("site-packages/sgl_kernel", exist_ok=True)
        with open("site-packages/sgl_kernel/__init__.py", "w") as f:
            f.write("import ctypes\\n"
                    "try:\\n"
                    "    ctypes.CDLL('/nonexistent-dir/{library}')\\n"
                    "except OSError as error:\\n"
                    "    raise ImportError(str(error).replace('/nonexistent-dir/', '')) from None\\n")
        sys.path.insert(0, "site-packages")
        import sgl_kernel
    '''
    return real_traceback(code)


@pytest.mark.parametrize(("library", "installs"), [
    ("libnuma.so.1", "libnuma1"),
    ("libibverbs.so.1", "libibverbs1"),
    ("libGL.so.1", "libgl1"),
])
def test_a_missing_system_library_names_it_and_its_package_not_a_reinstall(library: str, installs: str) -> None:
    diagnosis = first_diagnosis(LAUNCH + _loader_failure(library))
    assert (diagnosis.pattern, diagnosis.category, diagnosis.basis) == (
        "rule-shared-library-missing", "dependency-version", "rule")
    assert library in diagnosis.title
    assert diagnosis.fix is not None and installs in diagnosis.fix.summary
    assert "does not install it" in diagnosis.root_cause and "sgl_kernel" in diagnosis.root_cause
    assert not diagnosis.fix.flags and diagnosis.fix.command is None  # nothing about the launch changes


def test_a_library_the_table_does_not_know_is_named_with_how_to_find_its_package() -> None:
    diagnosis = first_diagnosis(LAUNCH + _loader_failure("libacmefoo.so.3"))
    assert diagnosis.pattern == "rule-shared-library-missing"
    assert diagnosis.fix is not None and "libacmefoo.so.3" in diagnosis.fix.summary
    assert "apt-file search" in diagnosis.fix.summary


def test_every_row_names_its_sources_and_what_installs_it() -> None:
    for row in shared_libraries():
        assert row.sources, row.component
        assert row.debian or row.pip, row.component
    assert library_named("libcudart.so.12") is not None and library_named("libcudart.so.12.4.127") is not None
    assert library_named("libnuma.so") is not None and library_named("notalib") is None
