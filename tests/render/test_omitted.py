"""A bounded report says what it left out, in every format."""

from __future__ import annotations

import dataclasses
import json

import pytest

from logsleuth.render.options import OutputFormat
from tests.render.cases import several_hosts
from tests.render.helpers import FORMATS, render


@pytest.mark.parametrize("fmt", FORMATS, ids=[f.value for f in FORMATS])
def test_omitted_failures_are_counted_in_every_format(fmt: OutputFormat) -> None:
    report = dataclasses.replace(several_hosts(), omitted_failures=1_234_567, omitted_groups=236_134, omitted_groups_estimated=True)
    output = render(report, fmt)
    if fmt is OutputFormat.JSON:
        data = json.loads(output)
        assert (data["omitted_failures"], data["omitted_groups"], data["omitted_groups_estimated"]) == (1_234_567, 236_134, True)
    else:
        assert "and about 236,134 more distinct failures (1,234,567 occurrences) not shown" in output


@pytest.mark.parametrize("fmt", [f for f in FORMATS if f is not OutputFormat.JSON], ids=lambda f: f.value)
def test_nothing_is_said_when_nothing_was_left_out(fmt: OutputFormat) -> None:
    assert "not shown" not in render(several_hosts(), fmt)
