"""`logsleuth check`: every flag of a command or an assistant's suggestion checked against the flag catalog of an
SGLang release, the multi-flag traps the pattern library knows, and SGLang's own argument validation where it can
run (an oracle venv here, or the host's SGLang over SSH).  docs/check.md."""
