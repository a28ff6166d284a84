"""Import paramiko without its optional `invoke` dependency when the ssh config cannot need it.

paramiko.config imports `invoke` (~50 ms, a third of paramiko's import time) only to run `Match exec`
conditions.  When the config file has no `Match ... exec` (and no `Include`, which we would have to follow
first), hiding invoke during the import makes every remote diagnose that much faster.
"""

from __future__ import annotations

import logging
import os
import re
import sys

_NEEDS_INVOKE = re.compile(rb"^\s*(?:match\b[^\n]*\bexec\b|include\b)", re.IGNORECASE | re.MULTILINE)


# paramiko's transport thread logs errors we already report in one line ("Exception (client): Error reading
# SSH protocol banner" plus a traceback); without any handler, logging's last resort would print them.
logging.getLogger("paramiko").addHandler(logging.NullHandler())


def load_paramiko(config_file: str | None) -> None:
    if "paramiko" in sys.modules:
        return
    try:
        with open(os.path.expanduser(config_file or "~/.ssh/config"), "rb") as handle:
            text = handle.read()
    except OSError:
        text = b""
    hide = "invoke" not in sys.modules and not _NEEDS_INVOKE.search(text)
    if hide:
        sys.modules["invoke"] = None  # type: ignore[assignment]  # makes `import invoke` raise ImportError
    try:
        import paramiko  # noqa: F401
    finally:
        if hide:
            del sys.modules["invoke"]
