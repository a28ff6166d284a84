"""Logs exported newest line first, put back in the order they were written.

A log viewer (Google Cloud Logging, Grafana over Loki, CloudWatch: grafana/grafana#16555,
azimuth-cloud/capi-helm-charts#297, dstackai/dstack#1611) shows and exports the
newest entry at the top, so a traceback reads upside down: the exception line first, `Traceback (most
recent call last):` last.  Such an export has a timestamp on its lines that only ever goes down.  A log
whose stamped lines never go up and go down at least twice is read in reverse; any line that goes up
(interleaved writers, a clock step) keeps the log as it is.
"""

from __future__ import annotations

from logsleuth.ingest.normalize import collector_stamp

HEAD_LINES = 400  # lines looked at: enough to see the order, cheap at start-up
MIN_DESCENTS = 2
REVERSIBLE_BYTES = 8 << 20  # an export is a paste or a download; a larger log is read as written


def newest_first(head: str) -> bool:
    """Whether the lines of `head` (the start of a log) carry timestamps that only go down."""
    stamps = [stamp for text in head.splitlines()[:HEAD_LINES] if (stamp := collector_stamp(text))]
    descents = 0
    for newer, older in zip(stamps, stamps[1:], strict=False):
        if len(newer) != len(older):
            return False  # two formats: no order to read from the strings
        if older > newer:
            return False
        descents += older < newer
    return descents >= MIN_DESCENTS


def reversed_lines(data: bytes) -> bytes:
    """The lines of `data` in reverse order (a missing final newline is added)."""
    lines = data.splitlines()
    return b"".join(line + b"\n" for line in reversed(lines))
