"""Rule rule-trust-remote-code (reasoning/remote_code.py): a model repository's own code that transformers was not
allowed to run.  Facts from the code that decides, transformers' `resolve_trust_remote_code`
(transformers/dynamic_module_utils.py), and from threads where it stopped a server: SeldonIO/MLServer#1303 (the
older "requires you to execute the configuration file" wording), 2U1/Phi3-Vision-Finetune#23 (the stdin prompt with
no terminal), kserve/kserve#3580 (a model server that must pass the switch on).  Each traceback here is printed by
real CPython, through a mirror of the deciding function."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text

# The deciding function's three endings, as a mirror: the refusal, the prompt on stdin, the older refusal.
TRANSFORMERS = '''
def resolve_trust_remote_code(trust_remote_code, model_name, how):
    error = f"The repository {model_name} contains custom code which must be executed to correctly load the model."
    if how == "prompt":
        input(f"{error} You can inspect the repository content at https://hf.co/{model_name}.\\n"
              "You can avoid this prompt in future by passing the argument `trust_remote_code=True`.\\n\\n"
              "Do you wish to run the custom code? [y/N] ")
    if how == "older":
        raise ValueError(f"Loading {model_name} requires you to execute the configuration file in that repo on your "
                         "local machine. Make sure you have read the code there to avoid malicious use, then set the "
                         "option `trust_remote_code=True` to remove this error.")
    raise ValueError(f"{error} You can inspect the repository content at https://hf.co/{model_name}.\\n"
                     "Please pass the argument `trust_remote_code=True` to allow custom code to be run.")
'''
ENGINE_CALLER = {
    "sglang": ("sglang/srt/hf_transformers_utils.py", "get_config"),
    "vllm": ("vllm/transformers_utils/config.py", "get_config"),
}
LAUNCH = {
    "sglang": "python3 -m sglang.launch_server --model-path acme/custom-7b --port 30000",
    "vllm": "vllm serve acme/custom-7b --port 8000",
}


def _log(tmp_path: Path, engine: str, how: str, command: str | None) -> str:
    site = tmp_path / "site-packages"
    (site / "transformers").mkdir(parents=True)
    (site / "transformers" / "__init__.py").write_text("")
    (site / "transformers" / "dynamic_module_utils.py").write_text(TRANSFORMERS)
    relative, function = ENGINE_CALLER[engine]
    caller = site / relative
    caller.parent.mkdir(parents=True)
    for package in caller.relative_to(site).parents:
        if str(package) != ".":
            (site / package / "__init__.py").touch()
    caller.write_text("from transformers.dynamic_module_utils import resolve_trust_remote_code\n"
                      f"def {function}(model, how):\n    return resolve_trust_remote_code(None, model, how)\n")
    module = relative.removesuffix(".py").replace("/", ".")
    script = tmp_path / "serve.py"
    script.write_text(f"import sys\nfrom {module} import {function}\n{function}('acme/custom-7b', sys.argv[1])\n")
    ran = subprocess.run([sys.executable, str(script), how], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                         env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"}, check=False)
    assert "Traceback" in ran.stderr, ran.stderr
    head = f"{command}\n" if command else ""
    return head + ran.stdout + ran.stderr


@pytest.mark.parametrize("engine", ["sglang", "vllm"])
@pytest.mark.parametrize("how", ["refusal", "prompt", "older"])
def test_the_switch_is_added_to_the_users_own_launch(tmp_path: Path, engine: str, how: str) -> None:
    diagnosis = diagnose_text(_log(tmp_path, engine, how, LAUNCH[engine])).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.pattern == "rule-trust-remote-code", diagnosis
    assert diagnosis.category == "missing-flag" and diagnosis.basis == "rule"
    assert diagnosis.fix is not None and diagnosis.fix.command == f"{LAUNCH[engine]} --trust-remote-code"
    assert "a repository you trust" in diagnosis.fix.summary  # the switch runs someone's code: said plainly


def test_a_launch_that_already_gives_the_switch_is_not_told_to_add_it(tmp_path: Path) -> None:
    """One loader (a tokenizer, processor or draft model loaded on its own) did not get it: nothing to add."""
    command = LAUNCH["sglang"] + " --trust-remote-code"
    diagnosis = diagnose_text(_log(tmp_path, "sglang", "prompt", command)).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.pattern == "rule-trust-remote-code"
    assert diagnosis.category == "engine-bug"
    assert diagnosis.fix is not None and not diagnosis.fix.flags and diagnosis.fix.command is None
    assert diagnosis.fix.needs_input


def test_without_a_launch_command_the_flag_is_named_and_no_command_is_made_up(tmp_path: Path) -> None:
    diagnosis = diagnose_text(_log(tmp_path, "vllm", "refusal", None)).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.pattern == "rule-trust-remote-code"
    assert diagnosis.fix is not None and diagnosis.fix.command is None
    assert [op.flag for op in diagnosis.fix.flags] == ["--trust-remote-code"]


def test_an_eof_error_elsewhere_is_not_read_as_the_prompt(tmp_path: Path) -> None:
    script = tmp_path / "ask.py"
    script.write_text("input('continue? ')\n")
    ran = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, stdin=subprocess.DEVNULL,
                         check=False)
    report = diagnose_text(ran.stderr, DiagnoseOptions(include_user_patterns=False))
    assert all(g.diagnosis is None or g.diagnosis.pattern != "rule-trust-remote-code" for g in report.failures)


def test_the_engines_own_dump_of_its_settings_counts_as_given(tmp_path: Path) -> None:
    """SGLang prints its settings (`server_args=ServerArgs(…, trust_remote_code=True, …)`): the switch was on, so
    one loader did not get it; the failure's own message, which names `trust_remote_code=True`, never counts."""
    dump = "[2025-06-01 10:00:00] server_args=ServerArgs(model_path='acme/custom-7b', trust_remote_code=True, tp_size=1)"
    diagnosis = diagnose_text(_log(tmp_path, "sglang", "prompt", dump)).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category == "engine-bug" and not diagnosis.fix.flags  # type: ignore[union-attr]


@pytest.mark.parametrize("engine", ["sglang", "vllm"])
def test_the_refusal_pasted_without_its_last_line_still_adds_the_switch(tmp_path: Path, engine: str) -> None:
    """Stop 38's blind split (issue 28): the refusal's first line alone (the line naming trust_remote_code=True cut
    from the paste) was filed under another category; transformers' own words decide."""
    log = "\n".join(line for line in _log(tmp_path, engine, "refusal", LAUNCH[engine]).splitlines()
                    if "trust_remote_code=True" not in line) + "\n"
    diagnosis = diagnose_text(log).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.pattern == "rule-trust-remote-code"
    assert diagnosis.fix is not None and diagnosis.fix.command == f"{LAUNCH[engine]} --trust-remote-code"


def test_an_unsupported_architecture_message_that_asks_for_remote_code_lets_the_rule_lead() -> None:
    """A message naming both (the architecture, and the model's own code to run): the switch leads, not an upgrade."""
    log = (LAUNCH["sglang"] + "\nValueError: Model architectures ['InternLM2ForCausalLM'] are not supported for now. "
           "Please set `trust_remote_code=True` to load the model's own code.\n")
    diagnosis = diagnose_text(log).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.pattern == "rule-trust-remote-code"
    plain = diagnose_text(LAUNCH["sglang"] + "\nValueError: Model architectures ['InternLM2ForCausalLM'] are not "
                          "supported for now. Supported architectures: dict_keys(['LlamaForCausalLM'])\n")
    assert plain.failures[0].diagnosis is not None and plain.failures[0].diagnosis.pattern == "sglang-unsupported-architecture"
@pytest.mark.parametrize("dump", [
    # vLLM 0.9 and later: the API server logs the arguments it was given as a dict (entrypoints/utils.py)
    "INFO 06-01 10:00:00 [utils.py:326] non-default args: {'model': 'acme/custom-7b', 'trust_remote_code': True}",
    # vLLM before 0.9: the API server logs argparse's Namespace (vllm-project/vllm#4604)
    "INFO 06-01 10:00:00 api_server.py:152] args: Namespace(host=None, port=8000, model='acme/custom-7b', trust_remote_code=True)",
    # SGLang 0.5.23 and later: server_args as a dict
    "[2025-06-01 10:00:00] server_args={'model_path': 'acme/custom-7b', 'trust_remote_code': True, 'tp_size': 1}",
])
def test_a_settings_dump_as_a_dict_or_namespace_counts_as_given(tmp_path: Path, dump: str) -> None:
    engine = "sglang" if "server_args" in dump else "vllm"
    diagnosis = diagnose_text(_log(tmp_path, engine, "prompt", dump)).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.pattern == "rule-trust-remote-code"
    assert diagnosis.category == "engine-bug" and not diagnosis.fix.flags  # type: ignore[union-attr]


@pytest.mark.parametrize("dump", [
    "INFO 06-01 10:00:00 [utils.py:326] non-default args: {'model': 'acme/custom-7b', 'trust_remote_code': False}",
    "INFO 06-01 10:00:00 [utils.py:326] non-default args: {'model': 'acme/custom-7b'}",
])
def test_a_dump_without_the_switch_on_still_asks_for_it(tmp_path: Path, dump: str) -> None:
    diagnosis = diagnose_text(_log(tmp_path, "vllm", "refusal", dump)).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category == "missing-flag"
    assert [op.flag for op in diagnosis.fix.flags] == ["--trust-remote-code"]  # type: ignore[union-attr]
