"""A pattern's alternatives never name a flag the user's release lacks (issue 28: a dependency-drift answer
offered `--sampling-backend` style alternatives to a release without them).  Checked against the real shipped
catalogs: `--cuda-graph-max-bs` is a flag of SGLang 0.4.10.post2 and 0.5.9 and not of 0.5.23."""

from __future__ import annotations

from logsleuth.fixes import catalog, static_catalogs
from logsleuth.fixes.build import build_fix
from logsleuth.fixes.release_flags import with_release_flags
from logsleuth.models import Diagnosis, ExceptionBlock, Failure, Fix, FlagOp, LaunchInfo

FIX = {
    "summary": "Install the kernel package your SGLang release pins.",
    "steps": ["pip show sglang lists the pinned version"],
    "alternatives": [
        {"summary": "Or capture fewer batch sizes.", "flags": [{"op": "set", "flag": "--cuda-graph-max-bs", "value": "16"}]},
        {"summary": "Or run without CUDA graphs.", "flags": [{"op": "add", "flag": "--disable-cuda-graph"}]},
    ],
}
FAILURE = Failure(kind="traceback", exceptions=(ExceptionBlock(type="ImportError", message="x"),), line=1, offset=0, end_offset=1)
COMMAND = "python3 -m sglang.launch_server --model-path /models/m"


def _alternative_flags(version: str, source: str = "log") -> list[str]:
    launch = LaunchInfo(engine="sglang", engine_version=version, engine_version_source=source,  # type: ignore[arg-type]
                        command=COMMAND, command_source="log")
    fix = build_fix(FIX, FAILURE, {}, launch)
    checked = with_release_flags(Diagnosis(pattern="p", title="t", category="dependency-version", root_cause="r", fix=fix,
                                           engine="sglang", engine_version=version), launch)
    assert checked is not None and checked.fix is not None
    return [op.flag for alt in checked.fix.alternatives for op in alt.flags]


def test_the_catalogs_hold_what_this_test_reads() -> None:
    assert set(catalog.versions_with("sglang", "--cuda-graph-max-bs")) >= {"0.4.10.post2", "0.5.9"}
    assert "0.5.23" not in catalog.versions_with("sglang", "--cuda-graph-max-bs")
    assert "0.5.23" in catalog.versions_with("sglang", "--disable-cuda-graph")


def test_versions_with_reads_only_real_catalogs_of_exactly_those_releases() -> None:
    """Issue 29 item 4: the releases said to have a flag are those whose shipped catalog has it: the real parser's
    catalog of exactly that release (never the nearest release's), and the release's static catalog, read from its
    source, agrees."""
    checked = 0
    for engine in ("sglang", "vllm"):
        for flag in sorted(static_catalogs.all_flags(engine))[::25]:
            for version in catalog.versions_with(engine, flag):
                checked += 1
                real = catalog.load(engine, version)
                assert real is not None and real.source == "parser" and real.version == version and real.find(flag)
                if static_catalogs.release_named(engine, version) is not None:
                    assert version in static_catalogs.releases_with(engine, flag), (engine, version, flag)
    assert checked > 20
    assert catalog.load("sglang", "0.1.0") is None  # older than every catalog: none, not the oldest one's flags


def test_an_alternative_naming_a_flag_the_release_lacks_is_left_out() -> None:
    assert _alternative_flags("0.5.23") == ["--disable-cuda-graph"]


def test_an_alternative_the_release_has_is_kept() -> None:
    assert _alternative_flags("0.5.9") == ["--cuda-graph-max-bs", "--disable-cuda-graph"]


# -- the release is not known: say which releases have each flag offered ------------------------------------------

def _summary_unknown(fix_data: dict[str, object], possible: tuple[str, ...] = ()) -> str:
    launch = LaunchInfo(engine="sglang", command=COMMAND, command_source="log")
    fix = build_fix(fix_data, FAILURE, {}, launch)
    checked = with_release_flags(Diagnosis(pattern="p", title="t", category="c", root_cause="r", fix=fix, engine="sglang"),
                                 launch, possible)
    assert checked is not None and checked.fix is not None
    return checked.fix.summary


def test_an_unknown_release_is_told_which_releases_have_a_flag_only_some_have() -> None:
    first = static_catalogs.releases_with("sglang", "--page-size")[0]
    assert first != static_catalogs.releases("sglang")[0]  # the oldest covered release lacks it
    summary = _summary_unknown({"summary": "Set a page size.", "flags": [{"op": "set", "flag": "--page-size", "value": "16"}]})
    assert summary.endswith(f"(--page-size: SGLang {first} and later)")


def test_no_note_for_a_flag_every_release_has_or_a_word_that_is_not_the_engines() -> None:
    data = {"summary": "Lower --tp-size, or pass --no-cache-dir to pip.", "flags": [{"op": "set", "flag": "--tp-size", "value": "2"}]}
    assert _summary_unknown(data) == "Lower --tp-size, or pass --no-cache-dir to pip."


def test_no_note_when_every_release_that_can_have_written_the_log_has_the_flag() -> None:
    data = {"summary": "Set a page size.", "flags": [{"op": "set", "flag": "--page-size", "value": "16"}]}
    assert _summary_unknown(data, possible=("0.5.3", "0.5.9")) == "Set a page size."


def test_a_guessed_release_drops_nothing() -> None:
    """A version inferred from the code layout may be wrong: no alternative is removed for it."""
    assert _alternative_flags("0.5.23", source="inferred") == ["--cuda-graph-max-bs", "--disable-cuda-graph"]


def test_no_range_for_a_flag_the_fix_removes() -> None:
    """The user gave it and the fix takes it out: its range would only muddle "leave it out"."""
    fix = Fix(summary="Leave --page-size out.", flags=(FlagOp(op="remove", flag="--page-size"),))
    checked = with_release_flags(Diagnosis(pattern="p", title="t", category="c", root_cause="r", fix=fix, engine="sglang"),
                                 LaunchInfo(engine="sglang"))
    assert checked is not None and checked.fix is not None and checked.fix.summary == "Leave --page-size out."
