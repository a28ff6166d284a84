"""Stop 48: 'No such file or directory' names a model file only as Python's OSError prints a file it opened.

The C library's strerror for ENOENT ends many other programs' sentences: Ray's core worker when the raylet refuses
its registration (src/ray/core_worker/core_worker.cc, 'Failed to register worker … to Raylet. IOError: [RayletClient]
Unable to register worker with raylet. No such file or directory'; its socket or session directory gone), ld.so's
'cannot open shared object file: No such file or directory'.  Those name no model file, so the model-path row's
checks would send the user to the wrong place; Python's own `[Errno 2] No such file or directory: '<path>'`
(Objects/exceptions.c OSError_str) still counts.  Tracebacks from real CPython; the Ray sentence is rebuilt from its
format string."""

from __future__ import annotations

from tests.helpers import diagnose_without_patterns, real_traceback

_RAY_REGISTRATION = ("Failed to register worker 01000000ffffffffffffffffffffffffffffffffffffffffffffffff to Raylet. "
                     "IOError: [RayletClient] Unable to register worker with raylet. No such file or directory")


def test_a_missing_model_file_python_opened_is_a_model_path_failure(tmp_path) -> None:  # type: ignore[no-untyped-def]
    missing = tmp_path / "checkpoints" / "config.json"
    log = real_traceback(f"""
        def read_config():
            with open({str(missing)!r}) as handle:
                return handle.read()

        read_config()
        """, "serve.py")
    assert "No such file or directory: '" in log
    assert diagnose_without_patterns(log).category == "model-path"


def test_a_strerror_inside_another_programs_sentence_is_no_model_path() -> None:
    log = real_traceback(f"""
        def start_worker():
            raise RuntimeError({_RAY_REGISTRATION!r})

        start_worker()
        """, "worker.py")
    diagnosis = diagnose_without_patterns(log)
    assert diagnosis.category != "model-path", diagnosis.title


def test_rusts_missing_file_is_a_model_path_failure(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """tokenizers' Tokenizer.from_file and safetensors' safe_open are Rust: std's io::Error prints ENOENT as
    `No such file or directory (os error 2)`, no path quoted (review M2 of stop 48)."""
    for exception in ("Exception", "OSError"):
        log = real_traceback(f"""
            def load_tokenizer():
                raise {exception}("No such file or directory (os error 2)")

            load_tokenizer()
            """, "serve.py")
        assert diagnose_without_patterns(log).category == "model-path", exception
