"""Public-key authentication in OpenSSH's order: ssh-agent keys, then IdentityFile (or the default key files).

logsleuth never prompts: a passphrase-protected key that is not in the agent is skipped, and if nothing else
works the error says to `ssh-add` it.  Password and keyboard-interactive logins are not attempted.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import paramiko

from logsleuth.sources.spec import RemoteError
from logsleuth.sources.ssh.config import HostSettings


@dataclass
class _Attempts:
    """The keys tried while authenticating, for the error that names them."""
    tried: list[str] = field(default_factory=list)
    locked: list[str] = field(default_factory=list)  # passphrase-protected files we could not use


def authenticate(settings: HostSettings, transport: paramiko.Transport) -> None:
    user = settings.user
    attempts = _Attempts()
    # Keys first, without the usual "none" probe: one round trip less on the common path.  The server's list
    # of allowed methods is asked for only when no key worked, for the error message.
    allowed: list[str] | None = None
    for label, key in _candidate_keys(settings, attempts):
        attempts.tried.append(label)
        try:
            transport.auth_publickey(user, key)
        except paramiko.BadAuthenticationType as exc:
            allowed = list(exc.allowed_types)  # publickey is not accepted at all
            break
        except paramiko.AuthenticationException:
            continue
        except paramiko.SSHException as exc:
            raise RemoteError(f"{settings.alias}: authentication error: {exc}") from None
        if transport.is_authenticated():
            return
    if allowed is None:
        try:
            transport.auth_none(user)
            return  # the server lets this user in without credentials
        except paramiko.BadAuthenticationType as exc:
            allowed = list(exc.allowed_types)
        except paramiko.SSHException:
            allowed = []
    raise RemoteError(_failure_message(settings, allowed, attempts))


def _failure_message(settings: HostSettings, allowed: list[str], attempts: _Attempts) -> str:
    who = f"{settings.user}@{settings.hostname}"
    if attempts.locked and not attempts.tried:
        path = attempts.locked[0]
        return (
            f"{settings.alias}: authentication failed for {who}: key {path} is passphrase-protected and "
            f"logsleuth does not prompt; load it into ssh-agent with: ssh-add {path}"
        )
    tried = ", ".join(attempts.tried) if attempts.tried else "no keys (no ssh-agent keys, no key files)"
    message = f"{settings.alias}: authentication failed for {who} (tried publickey with: {tried}; "
    message += f"server allows: {', '.join(allowed) or 'nothing'})"
    if attempts.locked:
        message += f"; passphrase-protected keys need ssh-add first: {', '.join(attempts.locked)}"
    return message


def _candidate_keys(settings: HostSettings, attempts: _Attempts) -> list[tuple[str, paramiko.PKey]]:
    candidates: list[tuple[str, paramiko.PKey]] = []
    wanted_public = {_public_blob(path) for path in settings.identity_files} - {None}
    for key in _agent_keys():
        if settings.identities_only and key.asbytes() not in wanted_public:
            continue  # IdentitiesOnly: only agent keys that match a configured IdentityFile
        candidates.append((f"agent key {key.fingerprint}", key))
    seen = {key.asbytes() for _, key in candidates}
    for path in settings.identity_files:
        if not os.path.exists(path):
            continue
        try:
            key = paramiko.PKey.from_path(path)
        except (paramiko.PasswordRequiredException, TypeError):
            # paramiko raises PasswordRequiredException for PEM keys; cryptography a TypeError for OpenSSH ones.
            if _public_blob(path) not in seen:
                attempts.locked.append(path)
            continue
        except (paramiko.SSHException, OSError, ValueError):
            continue  # not a key file we can read: OpenSSH skips it too
        if key.asbytes() not in seen:
            seen.add(key.asbytes())
            candidates.append((path, key))
    return candidates


def _agent_keys() -> list[paramiko.AgentKey]:
    if not os.environ.get("SSH_AUTH_SOCK"):
        return []
    try:
        return list(paramiko.Agent().get_keys())
    except (paramiko.SSHException, OSError):
        return []


def _public_blob(path: str) -> bytes | None:
    """The public half from `path.pub`, readable even when the private key is encrypted."""
    try:
        with open(path + ".pub", encoding="ascii") as handle:
            fields = handle.read().split()
        return paramiko.PublicBlob.from_string(f"{fields[0]} {fields[1]}").key_blob
    except (OSError, IndexError, ValueError):
        return None
