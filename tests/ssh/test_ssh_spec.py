"""Remote spec parsing and local/remote detection: pure functions, no sshd needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth.errors import UsageError
from logsleuth.sources.spec import RemoteSpec, looks_remote, parse_remote_spec, printable
from logsleuth.sources.ssh.config import parse_time, split_jump


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("gpu7:/var/log/sglang.log", RemoteSpec("gpu7", "/var/log/sglang.log", prefix="gpu7:")),
        ("ubuntu@gpu7:/x.log", RemoteSpec("gpu7", "/x.log", user="ubuntu", prefix="ubuntu@gpu7:")),
        (
            "u@10.0.0.7:2222:/x.log",
            RemoteSpec("10.0.0.7", "/x.log", user="u", port=2222, prefix="u@10.0.0.7:2222:"),
        ),
        (
            "ssh://u@h:2222/var/x.log",
            RemoteSpec("h", "/var/x.log", user="u", port=2222, prefix="ssh://u@h:2222"),
        ),
        ("ssh://h/~/x.log", RemoteSpec("h", "x.log", prefix="ssh://h")),
        ("[::1]:/x.log", RemoteSpec("::1", "/x.log", prefix="[::1]:")),
        ("u@[::1]:22:/x.log", RemoteSpec("::1", "/x.log", user="u", port=22, prefix="u@[::1]:22:")),
        ("gpu7:logs/x.log", RemoteSpec("gpu7", "logs/x.log", prefix="gpu7:")),
        ("gpu7:~/logs/x.log", RemoteSpec("gpu7", "logs/x.log", prefix="gpu7:")),
        ("gpu7:/data/sglang-*.log", RemoteSpec("gpu7", "/data/sglang-*.log", prefix="gpu7:")),
    ],
)
def test_remote_spellings(spec: str, expected: RemoteSpec) -> None:
    assert parse_remote_spec(spec) == expected
    assert looks_remote(spec)


@pytest.mark.parametrize(
    "spec", ["-", "/var/log/x.log", "./a:b.log", "../a:b", "~/a:b", "dir/a:b", "http://x/y", "x:"]
)
def test_local_spellings(spec: str) -> None:
    assert not looks_remote(spec)


def test_an_existing_local_file_with_a_colon_is_local(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("gpu7:server.log").write_text("x")
    assert not looks_remote("gpu7:server.log")
    assert looks_remote("gpu7:other.log")


def test_names_keep_the_users_spelling() -> None:
    spec = parse_remote_spec("ssh://h/~/logs/*.log")
    assert spec is not None and spec.name_for("logs/a.log") == "ssh://h/~/logs/a.log"
    spec = parse_remote_spec("u@h:2222:/logs/*.log")
    assert spec is not None and spec.name_for("/logs/a.log") == "u@h:2222:/logs/a.log"


def test_jump_hops() -> None:
    assert split_jump("bastion") == ("bastion", None, None)
    assert split_jump("me@bastion:2222") == ("bastion", "me", 2222)
    assert split_jump("ssh://me@[::1]:22") == ("::1", "me", 22)


@pytest.mark.parametrize(
    ("spec", "port"),
    [("gpu7:99999:/x.log", 99999), ("u@gpu7:0:/x.log", 0), ("gpu7:123456:/x.log", 123456),
     ("ssh://gpu7:70000/x.log", 70000), ("[::1]:65536:/x.log", 65536)],
)
def test_a_port_out_of_range_is_a_usage_error(spec: str, port: int) -> None:
    """A number between two colons is the port; one out of range is an error, never a local path."""
    assert looks_remote(spec)
    with pytest.raises(UsageError) as caught:
        parse_remote_spec(spec)
    assert str(caught.value) == f"{spec}: port {port} out of range (1-65535)"
    assert caught.value.exit_status == 2


@pytest.mark.parametrize("helper", ["1", "0"], ids=["helper", "in-process"])
def test_cli_port_out_of_range_exits_2(tmp_path: Path, helper: str) -> None:
    import os
    import subprocess
    import sys

    environment = {**os.environ, "LOGSLEUTH_SSH_WORKER": helper, "HOME": str(tmp_path)}
    result = subprocess.run(
        [sys.executable, "-m", "logsleuth", "diagnose", "gpu7:99999:/var/log/x.log"],
        capture_output=True,
        text=True,
        env=environment,
        cwd=tmp_path,
        timeout=60,
    )
    assert (result.returncode, result.stderr) == (
        2,
        "logsleuth: gpu7:99999:/var/log/x.log: port 99999 out of range (1-65535)\n",
    )


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("plain name.log", "plain name.log"),
        ("\x1b]0;pwned\x07.log", "\\x1b]0;pwned\\x07.log"),
        ("a\nb\rc\td", "a\\nb\\rc\\td"),
        ("\x9b31m\x7f", "\\x9b31m\\x7f"),
        ("caf\u00e9 \u65e5\u672c", "caf\u00e9 \u65e5\u672c"),  # printable non-ASCII stays as it is
        ("bad\udcff byte", "bad\\xff byte"),  # an undecodable byte (surrogateescape) as the byte it was
        ("\u202eevil", "\\u202eevil"),  # a bidi override would reorder the terminal line
    ],
)
def test_printable_escapes_control_characters(raw: str, shown: str) -> None:
    assert printable(raw) == shown


@pytest.mark.parametrize(("text", "seconds"), [
    ("90", 90.0), ("90s", 90.0), ("1m30s", 90.0), ("1h30", 3630.0), ("2W", 1209600.0),
    ("soon", None), ("1hh", None), ("", None), ("9" * 5000 + "x", None),  # a long run of digits: once exponential
])
def test_openssh_time_values(text: str, seconds: float | None) -> None:
    assert parse_time(text) == seconds
