"""The packages that drive an engine or plug into it (engine_drivers.toml), and which of them a log shows installed.

A paste shows a second component beside the engine in these ways, each read here: a package listing (`pip list`,
`pip freeze`, a Markdown table of versions, as issue templates ask for), vLLM's list of the plugins it found
installed (its `- NAME -> MODULE:FUNCTION` lines), or vLLM's own line for an out-of-tree platform plugin it
activated (vllm/platforms/__init__.py resolve_current_platform_cls_qualname logs "Platform plugin %s is activated"
for a plugin outside its built-in platforms, which it reports as "Automatically detected platform %s.").  Of a
package listing only the table's packages count: it names dozens of the engine's own dependencies; every plugin
vLLM lists is one."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache

from logsleuth.lazyre import compile_lazily

_LISTED_LINE_LIMIT = 400  # a listing's line is short; a long line is a log record, not a package and its version
_VERSION = compile_lazily(r"^v?\d[\w.+!-]{0,40}$")
_PLATFORM_PLUGIN = compile_lazily(r"\bPlatform plugin (?P<plugin>[\w-]{1,60}) is activated\b")
# vLLM's listing of the plugins it found installed, one entry point a line after "Available plugins for group
# vllm.platform_plugins:" (vllm/plugins/__init__.py load_plugins_by_group: `log_level("- %s -> %s", plugin.name,
# plugin.value)`, INFO for every group but the general one): `- ascend -> vllm_ascend:register`, after vLLM's header.
_LISTED_PLUGIN = compile_lazily(r"(?:^|\] )- (?P<plugin>[\w.-]{1,60}) -> (?P<module>[A-Za-z_][\w.]{0,120}):[\w.]{1,80}\s*$")


@dataclass(frozen=True)
class Driver:
    """A package from the table, as the log shows it installed."""

    name: str  # as the reports name it ("LMCache")
    distribution: str | None  # as pip names it ("lmcache"); None for a platform plugin the table does not know
    kind: str  # "KV connector", "RL framework", ...
    version: str | None  # as listed; None when the listing gives none ("(source install via git clone)")
    shown_by: str  # "a package listing" or "vLLM's platform plugin line"

    @property
    def named(self) -> str:
        return f"{self.name} {self.version}" if self.version else self.name


def normalize(name: str) -> str:
    """pip's normalized project name: lower case, runs of "-", "_", "." as one "-"."""
    out, previous_dash = [], False
    for char in name.strip().lower():
        dash = char in "-_."
        if not (dash and previous_dash):
            out.append("-" if dash else char)
        previous_dash = dash
    return "".join(out)


@lru_cache(maxsize=1)
def _rows() -> tuple[dict[str, str], ...]:
    from logsleuth.facts.table import table_rows

    return tuple(table_rows("engine_drivers.toml", "driver"))


@lru_cache(maxsize=1)
def _by_distribution() -> dict[str, dict[str, str]]:
    return {row["distribution"]: row for row in _rows()}


@lru_cache(maxsize=1)
def _by_plugin() -> dict[str, dict[str, str]]:
    return {row["platform_plugin"]: row for row in _rows() if row.get("platform_plugin")}


def _listed(line: str) -> tuple[str, str] | None:
    """The (name, version) a package listing's line gives: `name  version [location]` (pip list), `name==version`
    (pip freeze), `| name | version |` (a Markdown table)."""
    text = line.strip()
    if not text or len(text) > _LISTED_LINE_LIMIT:
        return None
    if text.startswith("|"):
        cells = [cell.strip().strip("`") for cell in text.strip("|").split("|")]
        return (cells[0], cells[1]) if len(cells) >= 2 else None
    if "==" in text and " " not in text:
        name, _, version = text.partition("==")
        return name, version
    parts = text.split()
    return (parts[0], parts[1]) if len(parts) in (2, 3) else None


def _vllms_own(module: str) -> bool:
    """An entry point vLLM itself installs (its default general plugins, `vllm.…`): listed beside the plugins, none."""
    return module == "vllm" or module.startswith("vllm.")


def shows_a_driver(text: str) -> bool:
    """Whether a log line lists or loads one of the table's packages (it runs on the log's early lines: cheap)."""
    if len(text) > _LISTED_LINE_LIMIT:
        return False
    if "Platform plugin" in text:
        return _PLATFORM_PLUGIN.search(text) is not None
    if " -> " in text and (entry := _LISTED_PLUGIN.search(text)) is not None:
        return not _vllms_own(entry["module"])
    listed = _listed(text)
    return listed is not None and normalize(listed[0]) in _by_distribution()


def drivers_shown(lines: Iterable[str]) -> tuple[Driver, ...]:
    """The table's packages the log shows installed or loaded, each once, in the order shown."""
    found: dict[str, Driver] = {}
    for line in lines:
        if (plugin := _PLATFORM_PLUGIN.search(line)) is not None:
            row = _by_plugin().get(plugin["plugin"])
            name = row["name"] if row else f"the platform plugin '{plugin['plugin']}'"
            found.setdefault(name, Driver(name, row["distribution"] if row else None,
                                          row["kind"] if row else "platform plugin", None, "vLLM's platform plugin line"))
            continue
        if " -> " in line and (entry := _LISTED_PLUGIN.search(line)) is not None and not _vllms_own(entry["module"]):
            row = _by_plugin().get(entry["plugin"])
            name = row["name"] if row else f"the plugin '{entry['plugin']}' ({entry['module'].split('.')[0]})"
            found.setdefault(name, Driver(name, row["distribution"] if row else None,
                                          row["kind"] if row else "plugin", None, "vLLM's list of the plugins it found"))
            continue
        listed = _listed(line)
        row = _by_distribution().get(normalize(listed[0])) if listed else None
        if row is None or listed is None:
            continue
        version = listed[1] if _VERSION.match(listed[1]) else None
        known = found.get(row["name"])
        if known is None or (known.version is None and version):
            found[row["name"]] = Driver(row["name"], row["distribution"], row["kind"], version, "a package listing")
    return tuple(found.values())
