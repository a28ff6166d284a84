"""The packages that drive an engine or plug into it (engine_drivers.toml), and which of them a log shows installed.

A paste shows a second component beside the engine in these ways, each read here: a package listing (`pip list`,
`pip freeze`, a Markdown table of versions, as issue templates ask for), vLLM's list of the plugins it found
installed (its `- NAME -> MODULE:FUNCTION` lines), or vLLM's own line for an out-of-tree platform plugin it
activated (vllm/platforms/__init__.py resolve_current_platform_cls_qualname logs "Platform plugin %s is activated"
for a plugin outside its built-in platforms, which it reports as "Automatically detected platform %s.").  Of a
package listing only the table's packages count: it names dozens of the engine's own dependencies; every plugin
vLLM lists is one.

A plugin of vLLM shows itself in more ways than a listing (`plugins_named`): its package in a frame's path or an import
(`vllm_kunlun/v1/attention/…`), its name on a version line or in an image (`vLLM-Kunlun v0.25.1-dev`,
`…/vllm-ascend:v0.9.1`), its program (`vllm-omni serve`), or a flag only it adds (`--omni`: `plugin_of_flag`)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from logsleuth.lazyre import compile_lazily

_LISTED_LINE_LIMIT = 400  # a listing's line is short; a long line is a log record, not a package and its version
_VERSION = compile_lazily(r"^v?\d[\w.+!-]{0,40}$")
_PLATFORM_PLUGIN = compile_lazily(r"\bPlatform plugin (?P<plugin>[\w-]{1,60}) is activated\b")
# vLLM's listing of the plugins it found installed, one entry point a line after "Available plugins for group
# vllm.platform_plugins:" (vllm/plugins/__init__.py load_plugins_by_group: `log_level("- %s -> %s", plugin.name,
# plugin.value)`, INFO for every group but the general one): `- ascend -> vllm_ascend:register`, after vLLM's header.
# SGLang (0.5.23's srt/plugins/__init__.py load_plugins_by_group: `logger.info("  - %s -> %s", ep.name, ep.value)` after
# "Available plugins for group sglang.srt.platforms:" or "sglang.srt.plugins:") lists its plugins in the same shape,
# indented by two spaces.
_LISTED_PLUGIN = compile_lazily(
    r"(?:^|\] )\s{0,4}- (?P<plugin>[\w.-]{1,60}) -> (?P<module>[A-Za-z_][\w.]{0,120}):[\w.]{1,80}\s*$"
)


LISTED_BY_ENGINE = "the engine's list of the plugins it found"  # Driver.shown_by for a `- NAME -> MODULE:FUNC` line


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
def _rows() -> tuple[dict[str, Any], ...]:
    from logsleuth.facts.table import table_rows

    return tuple(table_rows("engine_drivers.toml", "driver"))


@lru_cache(maxsize=1)
def _by_distribution() -> dict[str, dict[str, str]]:
    return {row["distribution"]: row for row in _rows()}


@lru_cache(maxsize=1)
def _by_plugin() -> dict[str, dict[str, str]]:
    return {row["platform_plugin"]: row for row in _rows() if row.get("platform_plugin")}


def package_names() -> frozenset[str]:
    """The Python packages the table's rows install, as a frame's path shows them: a plugin's `module`, else the
    distribution's name spelt as an import (`lm-eval` -> lm_eval, `ms-swift` -> ms_swift)."""
    return frozenset(row.get("module") or row["distribution"].replace("-", "_") for row in _rows())


# A line that names a plugin only to say it is absent is no sign of it (vLLM's own "tpu_inference not found, using
# vLLM's TpuPlatform", vllm/platforms/tpu.py; an ImportError's "No module named 'vllm_ascend'").
_ABSENT = compile_lazily(r"(?i)\bnot (?:found|installed)\b|\bNo module named\b|\bplease install\b|\bis required\b")


@lru_cache(maxsize=1)
def _plugin_names() -> re.Pattern[str] | None:
    """One regex of every plugin's package and distribution name, `-` and `_` alike (`vLLM-Kunlun`, `vllm_kunlun`),
    as a whole word: not inside a longer name (`vllm_ascend_ops` is another package)."""
    spellings = set(_plugin_by_spelling())
    if not spellings:
        return None
    names = "|".join(sorted(("[-_]".join(map(re.escape, name.split("-"))) for name in spellings),
                            key=len, reverse=True))
    # After the name: no more of a name, but a version may follow (a wheel's `vllm_ascend-0.9.1-…`).
    return re.compile(rf"(?<![\w-])(?:{names})(?!\w|-[A-Za-z_])", re.IGNORECASE)


@lru_cache(maxsize=1)
def _plugin_by_spelling() -> dict[str, str]:
    """A plugin's names (normalized) to the name the reports give it."""
    return {normalize(spelling): row["name"] for row in _rows() if row["kind"].endswith("plugin")
            for spelling in (row["distribution"], row.get("module")) if spelling}


# Every plugin's name holds one of these (the table's names are vllm-… and tpu-inference, in either separator and
# vLLM's own case): a cheap test before the regex, on every early line of a log.
_NAME_LITERALS = ("vllm_", "vllm-", "vLLM-", "vLLM_", "VLLM-", "VLLM_", "tpu_inference", "tpu-inference")


def names_a_plugin(text: str) -> bool:
    """Whether a log line names one of the table's plugins of vLLM (it runs on the log's early lines: cheap)."""
    return any(literal in text for literal in _NAME_LITERALS) and bool(plugins_named([text]))


def plugins_named(lines: Iterable[str]) -> tuple[str, ...]:
    """The table's plugins of vLLM the lines name (a frame's path, an import, a version line, an image, a program),
    each once, in the order named; a line that says the plugin is absent is left out."""
    pattern = _plugin_names()
    found: dict[str, None] = {}
    for line in lines:
        if pattern is None or len(line) > 4 * _LISTED_LINE_LIMIT or _ABSENT.search(line):
            continue
        for match in pattern.finditer(line):
            found.setdefault(_plugin_by_spelling()[normalize(match.group(0))], None)
    return tuple(found)


def plugin_of_flag(flag: str) -> tuple[str, str] | None:
    """The plugin that adds `flag` to vLLM's command line (the table's `flags`): its name and distribution, else None."""
    return next(((row["name"], row["distribution"]) for row in _rows() if flag in _flags_of(row)), None)


def _flags_of(row: dict[str, Any]) -> tuple[str, ...]:
    return tuple(row.get("flags", ()))


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
    """An entry point the engine itself installs (vLLM's default general plugins, `vllm.…`; SGLang's, `sglang.…`):
    listed beside the plugins, none."""
    return module.split(".", 1)[0] in ("vllm", "sglang")


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
                                          row["kind"] if row else "plugin", None, LISTED_BY_ENGINE))
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
