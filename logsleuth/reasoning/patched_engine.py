"""The engine's code run from another project's copy of it: a patched build, not a release (reasoning/general.py).

A project that changes the engine's code keeps its own copy of a release's source tree inside its repository and runs
the engine from it: kvcached keeps `engine_integration/sglang-v0.4.6.post2/` (SGLang's tree, its package under
`python/sglang/`) and `engine_integration/vllm-v…/` with its patch applied (ovg-project/kvcached#1: a crash in that
copy's scheduler was the patch's bug, fixed by the project).  A frame of the engine's code under such a copy says the
code that failed may be the project's change, not the release's: the project's release and issues come first, and the
stock release with the same launch tells the two apart.  Read from the frames' paths alone, so only what they show
is said: such a copy may also be an unchanged submodule, its release is the one its directory names, and a generic
directory (`/workspace/third_party/vllm/`) names no project.  An install
(site-packages) or the engine's own checkout (`/sgl-workspace/sglang/python/sglang/`) is never such a copy."""

from __future__ import annotations

from dataclasses import dataclass

from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENGINE_NAMES, Failure

# `/<project>/<a directory for code of others>/<engine>[-v<release>]/[python/]<engine>/`: the project's directory, the
# place it keeps the copy in, the copy (the engine's name, a release after it when the copy is pinned).  Each part is
# bounded and starts after a slash: one pass over a path.
_COPY_IN_PROJECT = compile_lazily(
    r"/(?P<project>[\w.\-]{1,100})"
    r"/(?P<place>engine_integrations?|integrations?|patch(?:es|ed)?|third_party|3rdparty|vendor(?:ed)?|external|forks?)"
    r"/(?P<copy>(?P<engine>sglang|vllm)(?:[-_]v?(?P<version>\d[\w.+\-]{0,40}))?)/(?:python/)?(?P=engine)/"
)


# Directories that hold code of any kind, not a project's name: `/workspace/third_party/vllm/` names no project.
_GENERIC_ROOTS = frozenset({
    "workspace", "workspaces", "opt", "home", "root", "srv", "app", "apps", "src", "source", "code", "mnt", "data",
    "usr", "local", "tmp", "work", "repo", "repos", "projects", "project", "content", "lib", "build", "git",
})


@dataclass(frozen=True)
class PatchedCopy:
    """A copy of the engine kept inside another project's tree, as a failing frame's path shows it."""

    project: str | None  # the directory of the project that keeps the copy (kvcached); None when it names no project
    directory: str  # project/place/copy, as the frame's path shows it
    engine: str
    version: str | None  # the release the copy's directory names, if any


def patched_engine_copy(failure: Failure) -> PatchedCopy | None:
    """The other project's copy of the engine the failure's frames run in, innermost first; None when the engine's
    code runs from an install or from its own checkout."""
    for block in reversed(failure.exceptions):
        for frame in reversed(block.frames):
            found = _COPY_IN_PROJECT.search(frame.file.replace("\\", "/"))
            if found is not None and found["project"].lower() not in ENGINE_NAMES:
                project = None if found["project"].lower() in _GENERIC_ROOTS else found["project"]
                return PatchedCopy(project, f"{found['project']}/{found['place']}/{found['copy']}",
                                   found["engine"], found["version"])
    return None


def patched_copy_steps(failure: Failure) -> tuple[str, ...]:
    """The step that names another project's copy of the engine, first among the checks of a failure in its code.
    Only what the path shows is said: the copy may be unchanged (a vendored submodule), and the release is the one
    its directory names."""
    copy = patched_engine_copy(failure)
    if copy is None:
        return ()
    name = ENGINE_NAMES.get(copy.engine, copy.engine)
    release = f"{name} {copy.version}" if copy.version else name
    named = " (the release its directory names)" if copy.version else ""
    keeper = copy.project or "the project that keeps it"
    return (
        f"General guidance: the engine's code in these frames runs from a copy of {release}{named} kept inside "
        f"another project ({copy.directory}), not from an installed release. Such a copy may be a build that project "
        f"changed, and a failure in it may then be that change rather than {name}'s: check the issues of {keeper} for "
        f"this failure and its release made for {release}, and run the stock {release} with the same launch to tell the "
        "two apart.",
    )
