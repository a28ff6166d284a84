"""The end of every command's `--help`: examples to copy, then the exit statuses.

Help names no file of the repository's docs/ (a pipx or pip install has none): what the docs explain at length,
the examples show at once."""

from __future__ import annotations

# At most 56 characters a line: help must fit 60 columns (tests/test_cli_conventions.py), and click keeps
# these lines as written.  A long command goes on over lines, as a shell would take it.
EXAMPLES: dict[str, tuple[str, ...]] = {
    "diagnose": (
        "logsleuth diagnose /var/log/sglang.log",
        "logsleuth diagnose gpu7:/var/log/sglang.log -f slack",
        "logsleuth diagnose 'node[01-04]:/var/log/sglang.log'",
        "ssh gpu7 cat server.log | logsleuth diagnose -",
    ),
    "watch": (
        "logsleuth watch gpu7:/var/log/sglang.log",
        "logsleuth watch server.log --timeout 900",
    ),
    "launch": (
        "logsleuth launch gpu7 --dry-run -- \\",
        "    python -m sglang.launch_server --model-path M",
    ),
    "case": (
        "logsleuth case /var/log/sglang.log -o case.md",
        "logsleuth case gpu7:/var/log/sglang.log -f json",
    ),
    "health": (
        "logsleuth health gpu7:/var/log/sglang.log",
        "logsleuth health 'node[01-04]:/var/log/sglang.log'",
    ),
    "diff": (
        "logsleuth diff good.log bad.log",
        "logsleuth diff server.log --launch -2 --launch -1",
    ),
    "check": (
        "logsleuth check --engine-version 0.5.9 -- \\",
        "    python -m sglang.launch_server --model-path M",
        "logsleuth check 'remove --speculative-eagle-topk'",
        "logsleuth check gpu7 -- --model-path M --tp 2",
    ),
    "merge": (
        "logsleuth merge reports/",
        "logsleuth merge node01.json node02.json -f slack",
    ),
    "completion": ("logsleuth completion bash > logsleuth.bash",),
}


def epilog(command: str, exit_statuses: str) -> str:
    """Examples (kept as written: click's `\\b` stops it rewrapping them), then the exit statuses."""
    lines = "\n".join(f"  {example}" for example in EXAMPLES[command])
    return f"Examples:\n\n\b\n{lines}\n\n{exit_statuses}"
