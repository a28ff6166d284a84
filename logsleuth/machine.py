"""The machine a report is written on: its host name and time zone (the JSON report's `reporter`).

A report made where the log lives (a Slurm task, a Kubernetes pod, a pdsh command) is merged with the others
later (logsleuth/merge/): the merge names each node's local logs after this host, and puts the times of logs
written in different zones in one order with this offset.
"""

from __future__ import annotations

import socket
import time

from logsleuth.models import Reporter


def this_machine(host: str | None = None) -> Reporter:
    """This machine as a report's writer; `host` (the `--host` option) names it instead of its host name."""
    now = time.localtime()
    return Reporter(host=host or socket.gethostname() or "localhost", time_zone=now.tm_zone, utc_offset=now.tm_gmtoff)
