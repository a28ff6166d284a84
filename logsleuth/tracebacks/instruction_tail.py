"""A paste that ends on the tail of an engine's own message of several lines, its exception line cut off above: the
numbered "Possible solutions" the engine prints under its error (split 19 B-04, sgl-project/sglang#6218: the paste's
last three lines were the end of SGLang's `Capture cuda graph failed: {}\\nPossible solutions:\\n1. …\\n4. disable cuda
graph by --disable-cuda-graph. …\\nOpen an issue on GitHub …`, sglang/srt/model_executor/cuda_graph_runner.py
CudaGraphRunner.__init__, 0.3.6.post3 to 0.4.6.post2).

Such lines are instructions, not an error line, and each alone is no check's message; but a run of them, the paste's
last lines, that is a run of the lines of one template of the raise site index (holes filled in), and no other's, is
that message's end: the failure is that check's, typed as it raises it, its message the template's opening line (up to
its first hole, the error the paste lost) over the lines pasted, kept as cut.  Only a paste that shows no failure, and
only a tail holding a list item: the index is read whole for it (its templates of three lines or more), once.  A
healthy log may end on the same lines quoted (a user's notes, the docs' list): the tail is not read when the server
came up before it (the scanner's ready line), nor when the paste shows the end line of the stage the template's check
belongs to (STAGE_ENDS: SGLang's cuda_graph_runner.py logs "Capture cuda graph end" once capture succeeded).
"""

from __future__ import annotations

from collections import deque
from functools import lru_cache

from logsleuth.facts import engine_messages
from logsleuth.facts.message_templates import HOLE, MIN_FIXED, template_matches
from logsleuth.facts.raise_sites import read_member
from logsleuth.lazyre import compile_lazily
from logsleuth.models import LogLine

MAX_TAIL_LINES = 8  # the end of a message: its last list items and a closing line
MIN_RUN = 2  # lines of the template the paste's tail must be, one alone being an ordinary sentence
_LIST_ITEM = compile_lazily(r"^\s*\d{1,2}[.)]\s+\S")
ENGINES = ("sglang", "vllm")
CUT_MARK = "(cut off in the paste)"  # where the error the paste lost stood
# The line a stage's module logs when the stage finished, by the file whose check's template is the tail: past it,
# that check did not raise (SGLang model_executor/cuda_graph_runner.py: "Capture cuda graph end. Time elapsed: …").
STAGE_ENDS = {"sglang/srt/model_executor/cuda_graph_runner.py": "Capture cuda graph end"}
_UNMATCHED_OPEN = compile_lazily(r"""\s*['"`(\[]\s*$""")


class InstructionTail:
    """Per stream, the last lines of content no collector took, in order."""

    def __init__(self) -> None:
        self._lines: dict[str, deque[tuple[LogLine, int]]] = {}
        self.stages_ended: set[str] = set()  # the files of STAGE_ENDS whose end line the paste shows

    def feed(self, line: LogLine, seq: int) -> None:
        if "end" in line.text:
            self.stages_ended.update(file for file, words in STAGE_ENDS.items() if words in line.text)
        kept = self._lines.get(line.stream)
        if kept is None:
            kept = self._lines[line.stream] = deque(maxlen=MAX_TAIL_LINES)
        kept.append((line, seq))

    def tails(self, last_content: dict[str, int]) -> list[list[tuple[LogLine, int]]]:
        """Each stream's run of consecutive lines that ends the stream's content and holds a numbered list item."""
        found = []
        for stream, kept in self._lines.items():
            if not kept or last_content.get(stream) != kept[-1][1]:
                continue
            run = [kept[-1]]
            for line, seq in reversed(list(kept)[:-1]):
                if seq != run[0][1] - 1:
                    break
                run.insert(0, (line, seq))
            if len(run) >= MIN_RUN and any(_LIST_ITEM.match(line.text) for line, _ in run):
                found.append(run)
        return found


def engine_block(texts: list[str], stages_ended: set[str] | frozenset[str] = frozenset()) -> tuple[str, list[str]] | None:
    """`Type: opening` of the one engine template whose lines the end of `texts` is (the longest such end, MIN_RUN
    lines or more, MIN_FIXED characters of fixed text), and those lines; None when no template, or templates of
    different types or engines, fit, or when the paste shows its check's stage ended (`stages_ended`)."""
    lines = [" ".join(text.split()) for text in texts]
    for taken in range(len(lines), MIN_RUN - 1, -1):
        tail = lines[-taken:]
        if sum(len(text) for text in tail) < MIN_FIXED:
            continue
        fitting = {(engine, kind, _opening(template)) for engine in ENGINES for kind, template, files in _multiline(engine)
                   if _holds_run(template, tail) and not files & stages_ended}
        if len({(engine, kind) for engine, kind, _ in fitting}) == 1:
            _, kind, opening = min(fitting)
            return f"{kind}: {opening}", tail
        if fitting:
            return None  # two checks print these lines: which one the paste cut is unknown
    return None


def _opening(template: str) -> str:
    """The template's first line up to its first hole (what the error the paste lost followed), the cut marked."""
    first = template.split("\n", 1)[0]
    if HOLE not in first:
        return first
    # an opening quote or bracket whose hole the paste lost is no part of what it shows ("specified: '{}'")
    return _UNMATCHED_OPEN.sub("", first.split(HOLE, 1)[0]).rstrip() + " " + CUT_MARK


def _holds_run(template: str, tail: list[str]) -> bool:
    """The template's lines (past its first) hold `tail` as consecutive lines, holes filled in."""
    lines = [folded for line in template.split("\n")[1:] if (folded := " ".join(line.split()))]
    return any(all(template_matches(lines[start + i], text) for i, text in enumerate(tail))
               for start in range(len(lines) - len(tail) + 1))


@lru_cache(maxsize=2)
def _multiline(engine: str) -> tuple[tuple[str, str, frozenset[str]], ...]:
    """(type, template, its files) of the engine's raised templates of three lines or more (a message with a list
    under it)."""
    found: dict[tuple[str, str], set[str]] = {}
    for number in range(engine_messages.SHARDS):
        member = read_member(engine, f"{engine_messages.RAISED}/{number}.json")
        for entries in (member or {}).values():
            for entry in entries:
                if entry[1].count("\n") >= 2:
                    found.setdefault((entry[0], entry[1]), set()).update(site[0] for site in entry[2])
    return tuple((kind, template, frozenset(files)) for (kind, template), files in sorted(found.items()))
