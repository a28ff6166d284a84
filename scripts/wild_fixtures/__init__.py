"""The wild corpus: logs as users pasted them in public issue threads, generated from mined facts.

Facts (engine message wording, frame paths and function names, engine version, paste style,
resolution) were mined from public threads (the research notes); nothing a user wrote is copied.
Each case (cases/<family>.py) rebuilds the failure with the pattern-fixture engine
(pattern_fixtures/engine.py: real CPython raising the engine's exceptions from a mirrored tree),
or with real CPython faulthandler dumps, or composes the non-Python lines (C++ aborts, kernel
prints, watchdog records) from the engine's formats (composed.py), then applies the paste style
the thread showed (paste.py).  corpus.py renders a case into its .log and its expected diagnosis
(.toml) and checks the expectations against what the interpreter really printed.
"""
