"""OpenSSH's stderr read into one error line (sources/ssh/openssh_log.py), without an sshd: the wordings are
OpenSSH's own (ssh.c, sshconnect.c, channels.c, as ssh -v prints them), each case naming the lines it reads
together: a jump host's proxy command and its channel failure, a handshake cut and who closed it, the server's key
and the known_hosts line it contradicts, the permission refusal."""

from __future__ import annotations

from logsleuth.sources.ssh.openssh_log import HostKeyFiles, failure

KEYS = HostKeyFiles(name="node1", paths=())


def _error(log: str) -> str:
    return str(failure(log, "node1", connected=False, timeout=5, stall_limit=30, keys=KEYS))


def test_a_jump_host_that_could_not_connect_is_named_with_its_target() -> None:
    log = ("debug1: Executing proxy command: exec /usr/bin/ssh -l u -W '[10.0.0.5]:22' bastion\n"
           "channel 0: open failed: connect failed: No route to host\n")
    assert _error(log) == "node1: jump host bastion could not connect to 10.0.0.5 port 22 (connect failed: No route to host)"


def test_a_handshake_cut_names_the_host_that_closed_it() -> None:
    log = "kex_exchange_identification: read: Connection reset by peer\nConnection reset by 10.0.0.5 port 22\n"
    assert _error(log) == ("node1: 10.0.0.5 port 22 closed the connection during the SSH handshake "
                           "(read: Connection reset by peer)")


def test_a_changed_key_names_the_server_key_and_the_offending_file() -> None:
    log = ("debug1: Server host key: ssh-ed25519 SHA256:AbCdEf0123\n"
           "Host key for node1 has changed and you have requested strict checking.\n"
           "Offending ED25519 key in /root/.ssh/known_hosts:3\nHost key verification failed.\n")
    error = _error(log)
    assert "presents ssh-ed25519 SHA256:AbCdEf0123, which does not match /root/.ssh/known_hosts;" in error
    bare = _error("Host key for node1 has changed and you have requested strict checking.\nHost key verification failed.\n")
    assert "presents a key, which does not match your known_hosts;" in bare


def test_a_refused_login_names_who_was_refused() -> None:
    assert _error("u@node1: Permission denied (publickey,password).\n").startswith("node1: authentication failed for u@node1")
