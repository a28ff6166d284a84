"""Hostile log content as data: each case is log text that logsleuth must show but never obey or leak.

A case places its text where a log puts it: lines just before the traceback (they name a warning, so they
become the failure's context), the exception message, the frame's source line, the text before
`Traceback` on its first line (the "where" line), the launch command as `bash -x` prints it, and `--cmd`.
`secrets` are values that must appear nowhere: not in any format, not on stderr, not in a printed command.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
INCIDENT_LOG = REPO / "examples" / "eagle3-incident.log"  # diagnosed: a fix with corrected commands
EAGLE_FLAGS = (
    "--speculative-algorithm EAGLE3 --speculative-draft-model-path /d "
    "--speculative-num-draft-tokens 16 --speculative-eagle-topk 1"
)
VLLM_WARNING = "WARNING 03-25 21:13:53 [hostile.py:1] "  # a vLLM record header: the line is context


@dataclass(frozen=True)
class Case:
    name: str
    context: tuple[str, ...] = ()
    message: tuple[str, ...] = ("boom",)
    source_line: str = "main()"
    header: str = ""
    command: str | None = None  # a `+ python …` line; the EAGLE flags are appended so the pattern matches
    cmd: str | None = None  # --cmd; the EAGLE flags are appended too
    secrets: tuple[str, ...] = ()
    file_name: str = "x"  # part of the log's file name, and of a second source that does not exist
    # With one source only, the text before `Traceback` is all of the "where" line (`---` alone is a rule).
    second_source: bool = True


def _launch(prefix: str) -> str:
    return f"{prefix} --model-path /m {EAGLE_FLAGS}"


SECRET_CASES = (
    Case(
        "quoted-values-with-spaces",
        context=(
            f"{VLLM_WARNING}server_args=ServerArgs(model_path='/m', api_key='tw0q SECRETone w0rdz', "
            "admin_api_key=\"it's SECRETtwo\", tp_size=1)",
            f'{VLLM_WARNING}request body {{"api_key": "kq4 SECRETfive zq4"}} rejected',
        ),
        message=('login failed: password="kq5 SECRETsix" {"api_key": "kq6 SECRETseven zq6"}',),
        source_line="connect(api_key='tw0q SECRETone w0rdz')",
        file_name="api_key=SECRETfile",
        secrets=("SECRETfile", "tw0q", "SECRETone", "w0rdz", "SECRETtwo", "kq4", "SECRETfive", "zq4", "kq5", "SECRETsix",
                 "kq6", "SECRETseven", "zq6"),
    ),
    Case(
        "quoted-values-in-the-launch-command",
        # flags SGLang has: a line with one it lacks could not have run, and gets no corrected command (cut_command.py)
        command=_launch("python -m sglang.launch_server --api-key 'kq1 SECRETeight zq1' --admin-api-key \"kq2 SECRETnine\""),
        message=("+ python -m sglang.launch_server --api-key 'kq1 SECRETeight zq1' --hf-token \"kq2 SECRETnine\" --port 30000",),
        secrets=("kq1", "SECRETeight", "zq1", "kq2", "SECRETnine"),
    ),
    Case(
        "quoted-value-in-cmd",
        cmd=_launch("python -m sglang.launch_server --api-key 'kq3 SECRETten zq3' --admin-api-key=SECRETadmin"),
        secrets=("kq3", "SECRETten", "zq3", "SECRETadmin"),
    ),
    Case(
        "server-args-only",  # the command is rebuilt from server_args: the key must not come back
        context=("server_args=ServerArgs(model_path='/m', api_key='kq7 SECRETrebuilt', tp_size=2)",),
        secrets=("kq7", "SECRETrebuilt"),
    ),
    Case(
        "environment-assignments",
        command=_launch(
            "HF_TOKEN=hf_SECRETabcdefghijklmnopqrstu OPENAI_API_KEY='sk SECRETopenai' PGPASSWORD=SECRETpg1 "
            "python -m sglang.launch_server"
        ),
        context=(f"{VLLM_WARNING}psql failed with PGPASSWORD=SECRETpg2 set",),
        secrets=("hf_SECRETabcdefghijklmnopqrstu", "SECRETopenai", "SECRETpg1", "SECRETpg2"),
    ),
    Case(
        "value-starting-with-a-dash",
        command=_launch("python -m sglang.launch_server --api-key -DashSECRETone"),
        cmd=_launch("python -m sglang.launch_server --api-key -DashSECRETtwo --port 30000"),
        message=("argument --api-key -DashSECRETthree was refused",),
        secrets=("DashSECRETone", "DashSECRETtwo", "DashSECRETthree"),
    ),
    Case(
        "at-sign-in-a-url-password",
        context=(f"{VLLM_WARNING}cache redis://u:p4ssSECRETa@w0rdSECRETb@cachehost:6379/0 unreachable",),
        message=("cannot reach postgres://admin:x@SECRETc@db.internal/prod",),
        secrets=("p4ssSECRETa", "w0rdSECRETb", "SECRETc"),
    ),
    Case(
        "hf-token-wrapped-across-lines",
        context=(f"{VLLM_WARNING}using token hf_AbCdEfGhIj", f"{VLLM_WARNING}KlMnOpQrStUvWxYz0123456789 to download"),
        message=("download failed for token hf_ZyXwVuTsRq", "PoNmLkJiHgFeDcBa9876543210 (401)"),
        secrets=("hf_AbCdEfGhIj", "KlMnOpQrStUvWxYz0123456789", "hf_ZyXwVuTsRq", "PoNmLkJiHgFeDcBa9876543210"),
    ),
    Case(
        "cookies",
        context=(
            f"{VLLM_WARNING}request failed, Cookie: session=SECRETcookie1; theme=d4rkSECRET",
            f"{VLLM_WARNING}response Set-Cookie: id=SECRETcookie2; Path=/; HttpOnly",
        ),
        message=("upstream rejected cookie=SECRETcookie3",),
        secrets=("SECRETcookie1", "d4rkSECRET", "SECRETcookie2", "SECRETcookie3"),
    ),
    Case(
        "pem-private-keys",
        context=(
            f"{VLLM_WARNING}-----BEGIN PRIVATE KEY-----",
            f"{VLLM_WARNING}MIIEvSECRETpemA",
            f"{VLLM_WARNING}QwertySECRETpemB",
            f"{VLLM_WARNING}-----END PRIVATE KEY-----",
        ),
        message=(
            "bad key -----BEGIN RSA PRIVATE KEY----- MIIEpSECRETpemC -----END RSA PRIVATE KEY-----",
            "-----BEGIN OPENSSH PRIVATE KEY-----",
            "b3BlbnNzaSECRETpemD",
            "-----END OPENSSH PRIVATE KEY-----",
        ),
        secrets=("MIIEvSECRETpemA", "QwertySECRETpemB", "MIIEpSECRETpemC", "b3BlbnNzaSECRETpemD"),
    ),
    Case(
        "service-tokens",
        context=(
            f"{VLLM_WARNING}github ghp_SECRETaBcDeFgHiJkLmNoPqRsTuVwXyZ012345 and gho_SECRETaBcDeFgHiJkLmNoPqRsTuVwXyZ0123",
            f"{VLLM_WARNING}pat github_pat_11SECRETAAAA0aBcDeFgHiJ_kLmNoPqRsTuVwXyZ0123456789",
            f"{VLLM_WARNING}slack xoxb-1234-5678-SECRETslackbot and xoxp-1234-5678-SECRETslackuser",
            f"{VLLM_WARNING}webhook https://hooks.slack.com/services/T0SECRET/B0SECRET/XXSECREThook failed",
            f"{VLLM_WARNING}aws AKIAIOSFODNN7EXAMPLE Authorization: Bearer eyJSECRETbearer.payload.sig",
        ),
        secrets=("ghp_SECRET", "gho_SECRET", "github_pat_11SECRET", "kLmNoPqRsTuVwXyZ0123456789", "SECRETslackbot",
                 "SECRETslackuser", "T0SECRET", "B0SECRET", "XXSECREThook", "AKIAIOSFODNN7EXAMPLE", "eyJSECRETbearer"),
    ),
)

# Issue 26: the forms the first round missed.
ROUND_TWO_SECRET_CASES = (
    Case(
        "several-vllm-keys",  # vLLM's --api-key takes several; its non-default args line lists them
        command=_launch("python -m sglang.launch_server --api-key SECRETkeyA1 SECRETkeyA2 SECRETkeyA3"),
        cmd=_launch("python -m sglang.launch_server --api-key SECRETkeyB1 SECRETkeyB2"),
        context=(
            f"{VLLM_WARNING}non-default args: {{'model': '/m', 'api_key': ['SECRETlist1', 'SECRETlist2'], 'port': 8000}}",
            f"{VLLM_WARNING}args: Namespace(api_key=[\"SECRETlist3\", \"SECRETlist4\"], port=8000)",
        ),
        message=("+ vllm serve /m --api-key SECRETkeyC1 SECRETkeyC2 --port 8000",),
        secrets=("SECRETkeyA1", "SECRETkeyA2", "SECRETkeyA3", "SECRETkeyB1", "SECRETkeyB2", "SECRETlist1", "SECRETlist2",
                 "SECRETlist3", "SECRETlist4", "SECRETkeyC1", "SECRETkeyC2"),
    ),
    Case(
        "line-continuations",  # the value of a secret flag on the line after `\`
        command=_launch("python -m sglang.launch_server --api-key \\\n    SECRETcontA --hf-token=\\\nSECRETcontB"),
        cmd=_launch("python -m sglang.launch_server --api-key \\\n  SECRETcontC"),
        context=(f"{VLLM_WARNING}retrying with --api-key \\", "    SECRETcontD and the same settings"),
        secrets=("SECRETcontA", "SECRETcontB", "SECRETcontC", "SECRETcontD"),
    ),
    Case(
        "more-secret-forms",
        context=(
            f"{VLLM_WARNING}db postgres://app:pa/ssSECRETslash@db.internal/prod refused",
            f"{VLLM_WARNING}claims eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJTRUNSRVRqd3QifQ.SECRETjwtSig0123456789 expired",
            f"{VLLM_WARNING}notify http://hooks.slack.com/services/T0SECRETh/B0SECRETh/XXSECREThttp failed",
            f'{VLLM_WARNING}payload {{"webhook": "https:\\/\\/hooks.slack.com\\/services\\/T0SECRETj\\/XXSECRETjson"}}',
            f"{VLLM_WARNING}openssl passphrase=SECRETphrase Pwd=SECRETodbc;",
            f"{VLLM_WARNING}gitlab glpat-SECRETgitlab0123456789ab maps ?key=AIzaSECRETgoogle0123456789abcdefghijklm",
            f"{VLLM_WARNING}blob https://a.blob.core.windows.net/c/b?sv=2020-08-04&sig=SECRETsas%2Bx%3D&se=1",
            f"{VLLM_WARNING}rsync admin:SECRETscp/pw@backup.example.com:/data failed",
        ),
        message=("upload to deploy:SECRETscp2@git.internal:repo.git failed with passphrase='kq8 SECRETphrase2'",),
        file_name="glpat-SECRETgitlabFile0123456789",
        secrets=("SECRETslash", "SECRETjwtSig0123456789", "eyJzdWIiOiJTRUNSRVRqd3QifQ", "T0SECRETh", "XXSECREThttp",
                 "T0SECRETj", "XXSECRETjson", "SECRETphrase", "SECRETodbc", "SECRETgitlab", "SECRETgoogle", "SECRETsas",
                 "SECRETscp", "SECRETscp2", "kq8", "SECRETphrase2"),
    ),
)
SECRET_CASES += ROUND_TWO_SECRET_CASES

OSC52 = "\x1b]52;c;cm0gLXJmIH4K\x07"  # writes "rm -rf ~" to the clipboard
TITLE = "\x1b]0;pwned-title\x1b\\"
CURSOR = "\x1b[2J\x1b[1;1H\x1b[5A"
ESCAPES = f"{OSC52}{TITLE}{CURSOR}\x9b2J\x9d0;c1-title\x07\u202e\u2066\x00\x08\x7f\r\v\f"
# The payloads of the 7-bit sequences must not survive either.  (The reader drops C1 characters on their
# own, so the text of an 8-bit sequence, `0;c1-title`, is shown as plain text without its introducer.)
ESCAPE_MARKERS = ("pwned-title", "cm0gLXJmIH4K")

ESCAPE_CASES = (
    Case(
        "terminal-escapes",
        context=(f"{VLLM_WARNING}{ESCAPES}context", f"{VLLM_WARNING}tab\there"),
        message=(f"{ESCAPES} message", f"second {ESCAPES} line"),
        source_line=f"main()  # {ESCAPES}",
        header=f"{ESCAPES} header",
        command=_launch(f"python -m sglang.launch_server --served-model-name {OSC52}name"),
        file_name=f"{OSC52}{TITLE}{CURSOR}\u202e",
    ),
)

MENTIONS = ('"@here"', "'@channel'", "[@here]", ":@here", '"@alice"', "(@everyone)", "<!channel>", "<@U024BE7LH>",
            "*@here*", "@channel")
MENTION_CASES = (
    Case(
        "mentions",
        context=(f"{VLLM_WARNING}ping {' '.join(MENTIONS)}",),
        message=(f"ping {' '.join(MENTIONS)}", "@here at the start of a line"),
        source_line=f"notify({MENTIONS[0]})",
        header=f"@here {MENTIONS[4]} asked:",
        file_name="@here",
    ),
)

BLOCK_STARTS = ("# pwned heading", "1. pwned list", "2) pwned list", "- pwned bullet", "+ pwned plus", "* pwned star",
                "> pwned quote", "| pwned | table |", "===", "---", "    pwned indented code", "~~~ pwned fence",
                "```pwned", "<div>pwned</div>")
MARKDOWN_CASES = tuple(
    Case(
        f"markdown-{index}",
        context=(f"warning: {text}",),  # no record header: its timestamp would open the "where" line
        message=(text, *BLOCK_STARTS),
        header=text,
        file_name="# pwned",
        second_source=index % 2 == 0,
    )
    for index, text in enumerate(BLOCK_STARTS)
)

ALL_CASES = SECRET_CASES + ESCAPE_CASES + MENTION_CASES + MARKDOWN_CASES


def unknown_failure_log(case: Case) -> str:
    """A crash no pattern knows: context, header, source line and message are all shown."""
    lines = [f"+ {case.command}"] if case.command else []
    lines += [*case.context, f"{case.header} Traceback (most recent call last):"]
    lines += [
        '  File "/usr/local/lib/python3.11/dist-packages/sglang/launch_server.py", line 32, in <module>',
        f"    {case.source_line}",
        f"RuntimeError: {case.message[0]}",
        *case.message[1:],
    ]
    return "\n".join(lines) + "\n"


def diagnosed_failure_log(case: Case) -> str:
    """The EAGLE-3 incident: a known pattern, so fixes with corrected commands are printed."""
    lines = INCIDENT_LOG.read_text().splitlines()
    if case.command:
        lines[0] = f"+ {case.command}"
    start = next(index for index, line in enumerate(lines) if line.startswith("Traceback"))
    lines[start:start] = list(case.context)
    return "\n".join(lines) + "\n"


LOGS = {"unknown": unknown_failure_log, "diagnosed": diagnosed_failure_log}
