"""Fleet syntax: host ranges, `{host}` templates and hosts files (logsleuth/sources/fleet.py).

Pure string work plus real files in tmp_path; no sshd needed.  The CLI wiring is tested where it is done.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from logsleuth.errors import ExitStatus, UsageError
from logsleuth.sources.fleet import MAX_SOURCES, expand_sources


def usage_error(specs: list[str], hosts_file: str | None = None) -> str:
    """The one-line message of the UsageError that expanding `specs` raises."""
    with pytest.raises(UsageError) as caught:
        expand_sources(specs, hosts_file)
    assert caught.value.exit_status == ExitStatus.USAGE
    message = str(caught.value)
    assert "\n" not in message
    return message


def hosts_file(tmp_path: Path, text: str | bytes) -> str:
    path = tmp_path / "hosts.txt"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return str(path)


# --- ranges in the host part --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("node[01-04]:/var/log/sglang.log", [f"node0{n}:/var/log/sglang.log" for n in range(1, 5)]),
        ("node[1,3,5-7]:x", ["node1:x", "node3:x", "node5:x", "node6:x", "node7:x"]),
        ("node[8-10]:x", ["node8:x", "node9:x", "node10:x"]),  # no padding written, none added
        ("node[08-10]:x", ["node08:x", "node09:x", "node10:x"]),  # padding kept as written
        ("node[001-3]:x", ["node001:x", "node002:x", "node003:x"]),
        ("node[01,7,10]:x", ["node01:x", "node7:x", "node10:x"]),  # a single number stays as written
        ("node[7]:x", ["node7:x"]),
        ("user@gpu[1-4].dc:x", [f"user@gpu{n}.dc:x" for n in range(1, 5)]),
        ("u@gpu[1-2]:2222:/x.log", ["u@gpu1:2222:/x.log", "u@gpu2:2222:/x.log"]),
        ("ssh://u@gpu[1-2]:2222/x.log", ["ssh://u@gpu1:2222/x.log", "ssh://u@gpu2:2222/x.log"]),
        ("ssh://gpu[1-2]/x.log", ["ssh://gpu1/x.log", "ssh://gpu2/x.log"]),
    ],
)
def test_ranges_and_lists_expand_with_their_padding(spec: str, expected: list[str]) -> None:
    assert expand_sources([spec]) == expected


def test_several_bracket_groups_are_a_product_in_order() -> None:
    assert expand_sources(["r[1-2]n[1-2]:x"]) == ["r1n1:x", "r1n2:x", "r2n1:x", "r2n2:x"]
    assert expand_sources(["r[1-2]n[08-9,11]:x"]) == [
        "r1n08:x",
        "r1n09:x",
        "r1n11:x",
        "r2n08:x",
        "r2n09:x",
        "r2n11:x",
    ]


def test_brackets_in_the_path_are_a_remote_glob_and_stay() -> None:
    assert expand_sources(["gpu7:/var/log/sglang[1-3].log"]) == ["gpu7:/var/log/sglang[1-3].log"]
    assert expand_sources(["node[1-2]:/logs/[ab]*.log"]) == ["node1:/logs/[ab]*.log", "node2:/logs/[ab]*.log"]
    assert expand_sources(["ssh://gpu7/logs/x[5-1].log"]) == ["ssh://gpu7/logs/x[5-1].log"]


@pytest.mark.parametrize(
    "spec", ["[::1]:/x.log", "u@[::1]:22:/x.log", "ssh://[::1]:2222/x.log", "[fe80::1%eth0]:x"]
)
def test_a_bracketed_ipv6_address_is_an_address_not_a_range(spec: str) -> None:
    assert expand_sources([spec]) == [spec]


@pytest.mark.parametrize(
    "spec", ["-", "server.log", "/var/log/x[1-2].log", "./node[1-2]:x", "dir/a[5-1]:b", "http://n[1-2]/x"]
)
def test_local_specs_are_left_alone(spec: str) -> None:
    assert expand_sources([spec]) == [spec]


def test_an_existing_local_file_named_like_a_range_is_never_expanded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    Path("a[1-2]:b").write_text("x")
    Path("n[5-1]:b").write_text("x")  # would be a backwards range if it were not a file
    assert expand_sources(["a[1-2]:b", "n[5-1]:b"]) == ["a[1-2]:b", "n[5-1]:b"]
    assert expand_sources(["a[1-3]:b"]) == ["a1:b", "a2:b", "a3:b"]  # no such file: a range


def test_order_is_kept_and_exact_duplicates_dropped() -> None:
    assert expand_sources(["n[2-3]:x", "server.log", "n[1-3]:x", "server.log"]) == [
        "n2:x",
        "n3:x",
        "server.log",
        "n1:x",
    ]


def test_no_specs_is_no_sources() -> None:
    assert expand_sources([]) == []


# --- {host} in the path -------------------------------------------------------------------------------------


def test_host_in_the_path_is_each_hosts_name_without_the_user() -> None:
    assert expand_sources(["node[01-02]:/logs/{host}.log"]) == [
        "node01:/logs/node01.log",
        "node02:/logs/node02.log",
    ]
    assert expand_sources(["me@gpu7:2222:/logs/{host}/{host}.log"]) == ["me@gpu7:2222:/logs/gpu7/gpu7.log"]
    assert expand_sources(["ssh://me@g[1-2]:22/l/{host}"]) == ["ssh://me@g1:22/l/g1", "ssh://me@g2:22/l/g2"]
    assert expand_sources(["[::1]:/logs/{host}.log"]) == ["[::1]:/logs/::1.log"]


def test_a_template_without_hosts_is_an_error() -> None:
    assert usage_error(["{host}:/var/log/sglang.log"]) == (
        "{host}:/var/log/sglang.log: {host} needs hosts to fill it: give --hosts-file FILE with one host a line"
    )
    assert usage_error(["/collected/{host}/x.log"]).startswith("/collected/{host}/x.log: {host} needs hosts")


def test_a_template_with_a_hosts_file_of_complete_sources_only(tmp_path: Path) -> None:
    path = hosts_file(tmp_path, "gpu7:/x.log\n")
    assert usage_error(["{host}:/y.log"], path) == (
        f"{{host}}:/y.log: {{host}} needs hosts to fill it: --hosts-file {path} has complete sources only, "
        "no bare hosts"
    )


# --- hosts files --------------------------------------------------------------------------------------------


def test_bare_hosts_fill_every_template_in_argument_order(tmp_path: Path) -> None:
    path = hosts_file(tmp_path, "# rack A\n  node[01-02]   # two nodes\n\nroot@gpu9\n")
    assert expand_sources(["{host}:/var/log/a.log", "local.log", "{host}:/b/{host}.log"], path) == [
        "node01:/var/log/a.log",
        "node02:/var/log/a.log",
        "root@gpu9:/var/log/a.log",
        "local.log",
        "node01:/b/node01.log",
        "node02:/b/node02.log",
        "root@gpu9:/b/gpu9.log",
    ]


def test_the_example_of_the_docs(tmp_path: Path) -> None:
    docs = (Path(__file__).parent.parent / "docs" / "fleet-syntax.md").read_text(encoding="utf-8")
    example = docs.split("$ cat rack-a.txt\n", 1)[1].split("$ logsleuth", 1)[0]
    assert expand_sources(["{host}:/var/log/sglang.log"], hosts_file(tmp_path, example)) == [
        "gpu01:/var/log/sglang.log",
        "gpu02:/var/log/sglang.log",
        "gpu03:/var/log/sglang.log",
        "gpu04:/var/log/sglang.log",
        "admin@gpu09:/var/log/sglang.log",
        "gpu12:/opt/sglang/server.log",
    ]


def test_a_hosts_file_user_replaces_the_templates_user(tmp_path: Path) -> None:
    path = hosts_file(tmp_path, "gpu1\nadmin@gpu2\n")
    assert expand_sources(["ubuntu@{host}:22:/x.log"], path) == [
        "ubuntu@gpu1:22:/x.log",
        "admin@gpu2:22:/x.log",
    ]
    assert expand_sources(["ssh://{host}/x.log"], path) == ["ssh://gpu1/x.log", "ssh://admin@gpu2/x.log"]


def test_an_ipv6_bare_host_is_written_in_brackets(tmp_path: Path) -> None:
    path = hosts_file(tmp_path, "[::1]\n")
    assert expand_sources(["{host}:/logs/{host}.log"], path) == ["[::1]:/logs/::1.log"]


def test_a_local_template_takes_the_host_name(tmp_path: Path) -> None:
    path = hosts_file(tmp_path, "u@n[1-2]\n")
    assert expand_sources(["/collected/{host}/sglang.log"], path) == [
        "/collected/n1/sglang.log",
        "/collected/n2/sglang.log",
    ]


def test_complete_specs_in_a_hosts_file_come_after_the_arguments(tmp_path: Path) -> None:
    path = hosts_file(
        tmp_path,
        "gpu7:/var/log/x#1.log  # a '#' inside a word is not a comment\r\nn[1-2]:/l/{host}\n/tmp/local.log\n",
    )
    assert expand_sources(["a.log"], path) == [
        "a.log",
        "gpu7:/var/log/x#1.log",
        "n1:/l/n1",
        "n2:/l/n2",
        "/tmp/local.log",
    ]
    assert expand_sources([], path) == ["gpu7:/var/log/x#1.log", "n1:/l/n1", "n2:/l/n2", "/tmp/local.log"]


def test_duplicates_across_arguments_and_hosts_file_are_dropped(tmp_path: Path) -> None:
    path = hosts_file(tmp_path, "n1\nn[1-2]\nn2:/x\n")
    assert expand_sources(["{host}:/x"], path) == ["n1:/x", "n2:/x"]


def test_hosts_file_from_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"n[1-2]\n")))
    assert expand_sources(["{host}:/x"], "-") == ["n1:/x", "n2:/x"]


def test_hosts_file_from_a_pipe(tmp_path: Path) -> None:
    """A FIFO, as `--hosts-file <(inventory --list)` passes one."""
    script = (
        "import sys; from logsleuth.sources.fleet import expand_sources;"
        "print(expand_sources(['{host}:/x'], sys.argv[1]))"
    )
    result = subprocess.run(
        ["bash", "-c", f'{sys.executable} -c "{script}" <(printf "a\\nb\\n")'],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert (result.returncode, result.stdout) == (0, "['a:/x', 'b:/x']\n"), result.stderr


# --- errors: one line, naming the offending text, exit 2 ----------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("node[5-1]:/x.log", "node[5-1]:/x.log: host range [5-1] goes backwards (5 > 1)"),
        ("node[]:/x.log", "node[]:/x.log: empty host range []"),
        ("node[1,,3]:/x.log", "node[1,,3]:/x.log: empty item in host range [1,,3]"),
        ("node[1-]:/x.log", "node[1-]:/x.log: host range [1-]: '' is not a number"),
        ("node[1-3:/x.log", "node[1-3:/x.log: '[' without ']' in the host name"),
        ("node1-3]:/x.log", "node1-3]:/x.log: ']' without '[' in the host name"),
        ("node[[1-2]]:/x.log", "node[[1-2]]:/x.log: '[' inside '[...]' in the host name"),
        (
            "node[a-c]:/x.log",
            "node[a-c]:/x.log: host range [a-c]: 'a' is not a number (alphabetic ranges are not supported)",
        ),
        ("node[1-2-3]:/x.log", "node[1-2-3]:/x.log: host range [1-2-3]: '2-3' is not a number"),
        ("node[8-010]:/x.log", "node[8-010]:/x.log: host range [8-010]: pad both bounds to the same width"),
        ("u@[::1:/x", "u@[::1:/x: '[' without ']' in the host name"),
    ],
)
def test_bad_ranges_are_one_line_usage_errors(spec: str, message: str) -> None:
    assert usage_error([spec]) == message


def test_an_expansion_over_the_cap_is_refused_without_building_it() -> None:
    assert MAX_SOURCES == 4096
    assert usage_error(["n[1-100000000000]:/x"]) == (
        "n[1-100000000000]:/x: expands to 100000000000 sources, more than the limit of 4096"
    )
    assert usage_error(["a[1-64]b[1-64]:/x", "c[1-2]:/x"]) == (
        "c[1-2]:/x: the sources add up to 4098, more than the limit of 4096"
    )
    assert len(expand_sources(["a[1-64]b[1-64]:/x"])) == MAX_SOURCES


def test_the_cap_holds_as_a_hosts_file_grows(tmp_path: Path) -> None:
    """Checked line by line, so a 1 MiB file of ranges never builds millions of sources first."""
    path = hosts_file(tmp_path, "a[1-4096]:/x\nb[1-4096]:/x\n" * 1000)
    assert (
        usage_error([], path)
        == f"{path}:2: b[1-4096]:/x: the sources add up to 8192, more than the limit of 4096"
    )
    path = hosts_file(tmp_path, "a[1-4000]\nb[1-97]\n")
    assert (
        usage_error(["{host}:/x"], path)
        == f"{path}:2: b[1-97]: the hosts add up to 4097, more than the limit of 4096"
    )
    path = hosts_file(tmp_path, "a[1-4096]\n")
    assert usage_error(["{host}-[1-4096]:/x"], path) == (
        "{host}-[1-4096]:/x: the sources add up to 8192, more than the limit of 4096"
    )
    path = hosts_file(tmp_path, "a[1-2]\n")
    assert expand_sources(["{host}-[1-2]:/x"], path) == ["a1-1:/x", "a1-2:/x", "a2-1:/x", "a2-2:/x"]


def test_control_characters_are_escaped_in_messages() -> None:
    assert usage_error(["n[5-1]\x1b[2J:/x"]) == "n[5-1]\\x1b[2J:/x: host range [5-1] goes backwards (5 > 1)"


def test_bare_hosts_without_a_template(tmp_path: Path) -> None:
    path = hosts_file(tmp_path, "n1\ngpu7:/x.log\n")
    assert usage_error(["a.log"], path) == (
        f"{path}:1: n1 is a host, but no source has {{host}} to put it in (e.g. '{{host}}:/var/log/sglang.log')"
    )


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n   # and another\n"])
def test_an_empty_hosts_file(tmp_path: Path, text: str) -> None:
    path = hosts_file(tmp_path, text)
    assert usage_error(["{host}:/x"], path) == f"--hosts-file {path}: no hosts or sources in it"


def test_a_missing_or_unreadable_hosts_file(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.txt")
    assert usage_error(["{host}:/x"], missing) == f"--hosts-file {missing}: no such file"
    assert usage_error(["{host}:/x"], str(tmp_path)) == f"--hosts-file {tmp_path}: is a directory"


def test_a_binary_or_non_utf8_hosts_file(tmp_path: Path) -> None:
    path = hosts_file(tmp_path, b"n1\n\x00\x01\x02")
    assert usage_error(["{host}:/x"], path) == f"--hosts-file {path}: a binary file, not a list of hosts"
    path = hosts_file(tmp_path, b"n1\nn\xff2\n")
    assert usage_error(["{host}:/x"], path) == f"{path}:2: not UTF-8 text"


def test_a_hosts_file_that_never_ends_is_refused(tmp_path: Path) -> None:
    path = hosts_file(tmp_path, "n1\n" * 400_000)
    assert (
        usage_error(["{host}:/x"], path)
        == f"--hosts-file {path}: larger than 1 MiB, too large for a list of hosts"
    )


@pytest.mark.parametrize(
    ("text", "source", "message"),
    [
        ("n1\n\nnode[5-1]\n", "{host}:/x", "3: node[5-1]: host range [5-1] goes backwards (5 > 1)"),
        ("n1\nnode one\n", "{host}:/x", "2: 'node one' is not a host name"),
        ("-\n", "{host}:/x", "1: '-' is not a host name"),
        ("{host}:/x\n", "a.log", "1: {host}:/x: a {host} template belongs on the command line"),
        ("n[1-5000]\n", "{host}:/x", "1: n[1-5000]: expands to 5000 hosts, more than the limit of 4096"),
    ],
)
def test_errors_in_a_hosts_file_name_the_line(tmp_path: Path, text: str, source: str, message: str) -> None:
    path = hosts_file(tmp_path, text)
    assert usage_error([source], path) == f"{path}:{message}"


def test_stdin_cannot_be_both_a_source_and_the_hosts_file() -> None:
    assert usage_error(["-", "{host}:/x"], "-") == "--hosts-file -: stdin is already a source ('-')"


def test_hosts_file_from_a_terminal_or_a_closed_stdin(monkeypatch: pytest.MonkeyPatch) -> None:
    """A terminal would wait for typing; a stdin that is closed or not readable is one line, not a traceback."""
    terminal, tty = os.openpty()
    with open(tty, encoding="utf-8") as stdin:
        monkeypatch.setattr(sys, "stdin", stdin)
        assert usage_error(["{host}:/x"], "-") == (
            "--hosts-file -: stdin is a terminal; pipe the hosts in (inventory | logsleuth ...)"
        )
    os.close(terminal)
    monkeypatch.setattr(sys, "stdin", None)
    assert usage_error(["{host}:/x"], "-") == "--hosts-file -: stdin is not open"
    read_end, write_end = os.pipe()  # fd 0 open for writing only, as `0>file` in a shell leaves it
    os.close(read_end)
    with open(write_end, encoding="utf-8") as write_only:
        monkeypatch.setattr(sys, "stdin", write_only)
        assert usage_error(["{host}:/x"], "-") == "--hosts-file -: Bad file descriptor"


def test_importing_the_fleet_module_is_cheap() -> None:
    """It runs at start-up of every command: it must not pull in dataclasses (the spec parser) or more."""
    code = (
        "import sys; before = set(sys.modules); import logsleuth.sources.fleet;"
        "print(sorted(set(sys.modules) - before))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert (
        result.stdout == "['logsleuth', 'logsleuth.errors', 'logsleuth.sources', 'logsleuth.sources.fleet']\n"
    )


@pytest.mark.parametrize(
    "argv, message",
    [
        (["diagnose", "node[5-1]:/x"], "logsleuth: node[5-1]:/x: host range [5-1] goes backwards (5 > 1)\n"),
        (["watch", "node[5-1]:/x"], "logsleuth: node[5-1]:/x: host range [5-1] goes backwards (5 > 1)\n"),
        (["diagnose", "--hosts-file", "{empty}"], "logsleuth: --hosts-file {empty}: no hosts or sources in it\n"),
        (["watch", "--hosts-file", "{empty}"], "logsleuth: --hosts-file {empty}: no hosts or sources in it\n"),
    ],
)
def test_the_console_script_says_it_in_one_line_with_exit_2(tmp_path: Path, argv: list[str], message: str) -> None:
    """Through the real console script, for diagnose and watch: the error line, exit 2, no traceback."""
    empty = tmp_path / "hosts.txt"
    empty.write_text("# nothing yet\n")
    argv = [word.replace("{empty}", str(empty)) for word in argv]
    run = subprocess.run([sys.executable, "-m", "logsleuth", *argv], capture_output=True, text=True, timeout=60)
    assert (run.returncode, run.stdout, run.stderr) == (2, "", message.replace("{empty}", str(empty)))
