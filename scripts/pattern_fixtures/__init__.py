"""Runtime-failure log fixtures from real CPython tracebacks: engine.py (the method), mirror.py (the
mirrored SGLang engine), cases/ (one module per family of patterns).  Run scripts/make_pattern_fixtures.py."""
