"""A model id the Hugging Face Hub's validator refuses (huggingface_hub utils/_validators.py validate_repo_id: "Repo
id must use alphanumeric chars or '-', '_', '.', '--' and '..' are forbidden, '-' and '.' cannot start or end the
name, max length is 96: '<id>'."), which the engines' loaders reach when the model path is no local directory: the
part of the id the hub cannot take, named, and what to give instead.

- `org/name:branch` (or `@branch`), the shorthand some tools take for a branch: the hub takes the branch apart, as the
  engine's revision setting (`--revision`, where the release has it) or through a local download of that branch
  (sgl-project/sglang#302: `TheBloke/Mistral-7B-v0.1-GPTQ:gptq-4bit-32g-actorder_True`);
- a Windows path (`C:\\models\\x`, backslashes): a local directory that does not exist where the loader looked, read
  as a hub id (benjiyaya/HeartMuLa_ComfyUI#83);
- any other character, `--` or `..`, a `-` or `.` at either end, or a name longer than the limit."""

from __future__ import annotations

import re

from logsleuth.fixes import catalog as catalogs
from logsleuth.fixes.release_flags import in_every_known_release, range_note
from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENGINE_NAMES, LaunchInfo

_REFUSED = compile_lazily(r"Repo id must use alphanumeric chars or [^\n]{0,160}?max length is (?P<limit>\d{1,4}): "
                          r"'(?P<id>[^'\n]{1,400})'")
_VALID_PART = re.compile(r"[\w.-]+(?:/[\w.-]+)?")
_BRANCH = re.compile(r"(?P<repo>[\w.-]+/[\w.-]+)(?P<mark>[:@])(?P<branch>[\w./-]+)")
_WINDOWS_PATH = re.compile(r"^[A-Za-z]:[\\/]|\\")


def refused_hub_id(text: str) -> tuple[str, int] | None:
    """The id and length limit the hub's validator refused, as the message quotes them."""
    found = _REFUSED.search(text)
    return (found["id"], int(found["limit"])) if found else None


def invalid_part(hub_id: str, limit: int) -> str:
    """What of `hub_id` the hub's rules do not allow, in words."""
    if _WINDOWS_PATH.search(hub_id):
        return (f"'{hub_id}' is a Windows path (a drive letter or backslashes), not a hub id: the loader found no "
                "directory there and took it for a hub id")
    branch = _BRANCH.fullmatch(hub_id)
    if branch:
        return (f"the '{branch['mark']}{branch['branch']}' after '{branch['repo']}': a branch (revision) written into "
                f"the id, a shorthand some tools take; the hub takes the id '{branch['repo']}' and the branch "
                f"'{branch['branch']}' apart")
    bad = sorted({char for char in hub_id if not re.match(r"[\w./-]", char)})
    problems = []
    if bad:
        problems.append("the character" + ("s " if len(bad) > 1 else " ") + ", ".join(f"'{char}'" for char in bad))
    if "--" in hub_id or ".." in hub_id:
        problems.append("'--' or '..'")
    if any(part[:1] in "-." or part[-1:] in "-." for part in hub_id.split("/") if part):
        problems.append("a '-' or '.' at the start or end of a part")
    if hub_id.count("/") > 1:
        problems.append("more than one '/'")
    if len(hub_id) > limit:
        problems.append(f"its length ({len(hub_id)}, over {limit})")
    said = " and ".join(problems) if problems else "its spelling"
    return f"'{hub_id}' has {said}, which a hub id cannot have"


def hub_id_steps(text: str, launch: LaunchInfo, engine: str | None) -> tuple[str, ...]:
    """The steps for a refused hub id in `text` (the failure's message), or () when it holds none."""
    refused = refused_hub_id(text)
    if refused is None:
        return ()
    hub_id, limit = refused
    steps = [f"The model id the hub refused: {invalid_part(hub_id, limit)}."]
    branch = _BRANCH.fullmatch(hub_id)
    if branch and not _WINDOWS_PATH.search(hub_id):
        steps.append(_branch_step(branch["repo"], branch["branch"], launch, engine))
    elif _WINDOWS_PATH.search(hub_id):
        steps.append("Give the model's directory as the server's host sees it (a Linux path inside WSL or a container, "
                     "such as /mnt/c/…), and check that it holds config.json and the weights.")
    else:
        steps.append("Give the exact id the hub shows for the model (owner/name), or a local directory that holds it.")
    return tuple(steps)


def _branch_step(repo: str, branch: str, launch: LaunchInfo, engine: str | None) -> str:
    local = (f"or download that branch of {repo} to a local directory (huggingface_hub's download with revision "
             f"'{branch}') and give the directory as the model")
    if engine is None:
        named = "; ".join(note for e in ENGINE_NAMES if (note := _where(e, None)))
        return f"Give '{repo}' as the model and '{branch}' as the revision (--revision: {named}), {local}."
    where = _where(engine, launch.engine_version if engine == launch.engine else None)
    if where is None:
        return f"{ENGINE_NAMES.get(engine, engine)} {launch.engine_version} has no --revision: {local[3:]}."
    return f"Give '{repo}' as the model and the branch with --revision {branch} ({where}), {local}."


def _where(engine: str, version: str | None) -> str | None:
    """The releases of `engine` that take --revision: that release when the log names it (None when it lacks the
    flag), else the range the catalogs give."""
    name = ENGINE_NAMES.get(engine, engine)
    if version is not None:
        catalog = catalogs.load(engine, version)
        if catalog is not None:
            return f"{name} {version}" if catalog.find("--revision") is not None else None
    note = range_note(engine, "--revision")
    if note:
        return note.split(": ", 1)[1] + "; an older release has none"
    oldest = in_every_known_release(engine, "--revision")
    return f"{name} from {oldest} on (every release logsleuth knows)" if oldest else None
