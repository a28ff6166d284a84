"""Import paramiko without the two imports that make up a third of its cost but that logsleuth never needs.

- `invoke` (~50 ms): paramiko.config imports it only to run `Match exec` conditions.  When the config files
  (the user's and the system's, Includes followed) have no `Match ... exec`, invoke is hidden during the
  import.  If a config read later turns out to need it, `load_paramiko` imports it then (see below).
- `importlib.metadata` (~25 ms: it pulls in email, zipfile, csv...): paramiko/__init__ calls
  `metadata.version("paramiko")` once, for the client version string it sends in the SSH banner.  During the
  import, a stand-in answers that one call from the name of paramiko's `.dist-info` directory, which is what
  the real lookup reads too.  When that directory cannot be found, the real module is used.

Both stand-ins are removed from `sys.modules` as soon as paramiko is imported, so any later import gets the
real modules.  A remote diagnose spends its first ~0.2 s importing paramiko (in the helper process, see
internal/ssh_helper/parent.py), so these 75 ms are a third of the distance to OpenSSH's `ssh host tail`.
"""

from __future__ import annotations

import logging
import sys
import threading
import types

from logsleuth.errors import UsageError
from logsleuth.sources.options import SSHOptions
from logsleuth.sources.ssh.config import config_text, has_match_exec
from logsleuth.sources.ssh.dist_info import installed_version

# paramiko's transport thread logs errors we already report in one line ("Exception (client): Error reading
# SSH protocol banner" plus a traceback); without any handler, logging's last resort would print them.
logging.getLogger("paramiko").addHandler(logging.NullHandler())


def _config_needs_invoke(options: SSHOptions) -> bool:
    try:
        return has_match_exec(config_text(options))
    except UsageError:
        return False  # a bad config: load_config reports it, with file and line


# The stand-ins below sit in sys.modules while paramiko imports, where another thread importing at the same
# time (api.diagnose opens sources on several) would see them: one thread imports, the others wait for it.
_IMPORTING = threading.Lock()


def load_paramiko(options: SSHOptions) -> None:
    """Import paramiko for the config files `options` name (see above).  Thread-safe."""
    with _IMPORTING:
        _load_paramiko(options)


def _load_paramiko(options: SSHOptions) -> None:
    if "paramiko" in sys.modules:
        _enable_invoke_if_needed(options)
        return
    stand_ins: dict[str, types.ModuleType | None] = {}
    if "invoke" not in sys.modules and not _config_needs_invoke(options):
        stand_ins["invoke"] = None  # makes `import invoke` raise ImportError
    version = installed_version() if "importlib.metadata" not in sys.modules else None
    if version is not None:
        stand_ins["importlib.metadata"] = _metadata_stand_in(version)
    try:
        _import_paramiko(stand_ins)
    except Exception:  # noqa: BLE001 - a paramiko that wants more than the stand-ins give: import it plainly
        for name in [name for name in sys.modules if name == "paramiko" or name.startswith("paramiko.")]:
            del sys.modules[name]  # half-imported modules would be reused as they are
        stand_ins.pop("importlib.metadata", None)
        _import_paramiko(stand_ins)


def _metadata_stand_in(version: str) -> types.ModuleType:
    def paramiko_version(name: str) -> str:
        if name != "paramiko":
            raise LookupError(f"stand-in importlib.metadata knows only paramiko, not {name}")
        return version

    module = types.ModuleType("importlib.metadata", "stand-in: answers paramiko's version() call only")
    module.version = paramiko_version  # type: ignore[attr-defined]
    return module


def _import_paramiko(stand_ins: dict[str, types.ModuleType | None]) -> None:
    import importlib

    sys.modules.update(stand_ins)  # type: ignore[arg-type]
    try:
        import paramiko  # noqa: F401
    finally:
        for name, module in stand_ins.items():
            if sys.modules.get(name) is module:
                del sys.modules[name]
            if module is not None and getattr(importlib, "metadata", None) is module:
                del importlib.metadata  # in case `from importlib import metadata` set the attribute


def _enable_invoke_if_needed(options: SSHOptions) -> None:
    """paramiko was imported with invoke hidden (the helper guesses the config file from the command line);
    give paramiko.config its invoke now if this config has `Match exec`."""
    import paramiko.config

    if getattr(paramiko.config, "invoke", True) is None and _config_needs_invoke(options):
        try:
            import invoke
        except ImportError:
            return  # paramiko raises its own error when it meets `Match exec`
        paramiko.config.invoke = invoke
