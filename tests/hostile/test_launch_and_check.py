"""Hostile input to `check`, `diagnose --verify-fix` and `launch` (issue 26, second round).

The first tests plant a model directory whose `trust_remote_code` module, and a `sitecustomize.py` beside it,
write a marker file when Python imports them, then name that directory in a log or a pasted command: the
validation must never load them.  The real-SGLang ones are marked `oracle` (they need scripts/oracle/setup.sh's
venvs); the fast ones hand the validation a stand-in Python that records the argv and environment it was given.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from logsleuth.check.validation import oracle_home, oracle_python

LOGSLEUTH = str(Path(sys.executable).with_name("logsleuth"))
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "eagle3-incident.log"
VERSION = "0.5.9"
FIX = "add --speculative-num-steps 15"


def plant_model(directory: Path, marker: Path) -> Path:
    """A model directory whose own code, and a sitecustomize beside it, write `marker` when imported."""
    directory.mkdir()
    writes_marker = f"import pathlib\npathlib.Path({str(marker)!r}).write_text('imported {{}}'.format(__name__))\n"
    config = {"architectures": ["PlantedForCausalLM"], "model_type": "planted",
              "auto_map": {"AutoConfig": "configuration_planted.PlantedConfig",
                           "AutoModelForCausalLM": "modeling_planted.PlantedForCausalLM",
                           "AutoTokenizer": ["tokenization_planted.PlantedTokenizer", None]},
              "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 1, "vocab_size": 128,
              "max_position_embeddings": 2048}
    (directory / "config.json").write_text(json.dumps(config), encoding="utf-8")
    (directory / "tokenizer_config.json").write_text(json.dumps({"auto_map": config["auto_map"]}), encoding="utf-8")
    (directory / "configuration_planted.py").write_text(
        writes_marker + "from transformers import PretrainedConfig\n\n\nclass PlantedConfig(PretrainedConfig):\n"
        "    model_type = 'planted'\n", encoding="utf-8")
    for module in ("modeling_planted", "tokenization_planted", "sitecustomize", "usercustomize"):
        (directory / f"{module}.py").write_text(writes_marker, encoding="utf-8")
    return directory


def launch_command(model: Path, env: str = "") -> str:
    return (f"{env}python -m sglang.launch_server --model-path {model} --trust-remote-code --tokenizer-path {model} "
            f"--speculative-algorithm EAGLE3 --speculative-draft-model-path {model} "
            "--speculative-num-draft-tokens 16 --speculative-eagle-topk 1 --device cpu")


def log_naming(tmp_path: Path, command: str) -> Path:
    """The shipped EAGLE-3 incident, launched with `command` and saying its SGLang version."""
    lines = EXAMPLE.read_text(encoding="utf-8").splitlines(keepends=True)
    log = tmp_path / "server.log"
    log.write_text(f"+ {command}\nsglang version: {VERSION}\n" + "".join(lines[1:]), encoding="utf-8")
    return log


def run_logsleuth(*args: str, stdin: str | None = None, env: dict[str, str] | None = None,
                  cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([LOGSLEUTH, *args], input=stdin, capture_output=True, text=True, timeout=300,
                          env=env, cwd=cwd, check=False)


# The three ways a command logsleuth did not get from the user's own typing reaches the validation.
ENTRIES = ("verify-fix", "verify-fix-env", "check-stdin")


def run_entry(entry: str, tmp_path: Path, model: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    if entry == "check-stdin":
        return run_logsleuth("check", "--engine-version", VERSION, "-", stdin=launch_command(model) + "\n", env=env,
                             cwd=model)
    prefix = f"PYTHONPATH={model} " if entry == "verify-fix-env" else ""
    log = log_naming(tmp_path, launch_command(model, prefix))
    return run_logsleuth("diagnose", str(log), "--verify-fix", FIX, "--format", "json", env=env, cwd=model)


@pytest.mark.oracle
@pytest.mark.parametrize("entry", ENTRIES)
def test_real_validation_never_imports_a_log_named_model_directory(entry: str, tmp_path: Path) -> None:
    if oracle_python(VERSION) is None:
        pytest.skip(f"no oracle venv for SGLang {VERSION} in {oracle_home()} (make oracle-setup)")
    marker = tmp_path / "planted-code-ran"
    model = plant_model(tmp_path / "planted-model", marker)
    done = run_entry(entry, tmp_path, model)
    assert "Traceback" not in done.stderr, done.stderr
    assert not marker.exists(), marker.read_text()
    output = done.stdout
    if entry != "check-stdin":
        output = json.dumps(json.loads(done.stdout)["verify_fix"])
    assert "validat" in output  # the validation ran (on stand-ins), or said why not


@pytest.mark.oracle
def test_the_hook_refuses_a_models_own_code_even_when_asked(tmp_path: Path) -> None:
    """What `check HOST` runs on a host, given --trust-remote-code and the planted directory as is."""
    python = oracle_python(VERSION)
    if python is None:
        pytest.skip(f"no oracle venv for SGLang {VERSION} in {oracle_home()} (make oracle-setup)")
    from logsleuth.check.validation import hook_source, read_hook_result

    marker = tmp_path / "planted-code-ran"
    model = plant_model(tmp_path / "planted-model", marker)
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTHONPATH", None)
    done = subprocess.run([str(python), "-c", hook_source(), "launch_server", "--model-path", str(model),
                           "--trust-remote-code", "--device", "cpu"], env=env, cwd=tmp_path, capture_output=True,
                          text=True, timeout=300, check=False)
    assert not marker.exists(), marker.read_text()
    result = read_hook_result(done.stdout)
    assert result is not None and result.type == "ModelCodeRefused", done.stdout[-2000:]


RECORDING_PYTHON = """#!{python}
# A stand-in for the oracle's Python (no SGLang runs here): it records what logsleuth hands the validation.
import json, os, sys
record = {{"argv": sys.argv[3:], "cwd": os.getcwd(), "env": dict(os.environ)}}
with open({record!r}, "w") as out:
    json.dump(record, out)
print('LOGSLEUTH-CHECK {{"outcome": "passed", "version": "{version}"}}')
"""


def recording_oracle(tmp_path: Path) -> tuple[Path, Path]:
    """An oracle home whose SGLang {VERSION} venv is a recorder, with the real layout's stand-in models."""
    home, record = tmp_path / "oracle", tmp_path / "handed-to-validation.json"
    python = home / f"sglang-{VERSION}" / "bin" / "python"
    python.parent.mkdir(parents=True)
    (python.parent.parent / ".ready").touch()
    python.write_text(RECORDING_PYTHON.format(python=sys.executable, record=str(record), version=VERSION))
    python.chmod(0o755)
    for stand_in in ("tiny-llama", "tiny-eagle3"):
        (home / "models" / stand_in).mkdir(parents=True)
        (home / "models" / stand_in / "config.json").write_text("{}")
    return home, record


@pytest.mark.parametrize("entry", ENTRIES)
def test_the_validation_is_handed_neither_remote_code_nor_a_log_named_directory(entry: str, tmp_path: Path) -> None:
    home, record = recording_oracle(tmp_path)
    marker = tmp_path / "planted-code-ran"
    model = plant_model(tmp_path / "planted-model", marker)
    env = {**os.environ, "LOGSLEUTH_ORACLE_HOME": str(home)}
    done = run_entry(entry, tmp_path, model, env=env)
    assert "Traceback" not in done.stderr, done.stderr
    handed = json.loads(record.read_text())
    argv = handed["argv"]
    assert argv[0] == "launch_server"
    assert not any(word.startswith("--trust-remote-code") for word in argv), argv
    assert not any(str(model) in word for word in argv), argv
    assert argv[argv.index("--model-path") + 1] == str(home / "models" / "tiny-llama")
    assert argv[argv.index("--speculative-draft-model-path") + 1] == str(home / "models" / "tiny-eagle3")
    assert "PYTHONPATH" not in handed["env"] and handed["env"]["HF_HUB_OFFLINE"] == "1"
    assert not Path(handed["cwd"]).resolve().is_relative_to(tmp_path.resolve())  # not the user's (here, the model's)
    assert not marker.exists()


def test_a_directory_the_user_typed_is_read_but_never_with_remote_code(tmp_path: Path) -> None:
    home, record = recording_oracle(tmp_path)
    model = plant_model(tmp_path / "planted-model", tmp_path / "planted-code-ran")
    env = {**os.environ, "LOGSLEUTH_ORACLE_HOME": str(home)}
    typed = ["python", "-m", "sglang.launch_server", "--model-path", str(model)]
    run_logsleuth("check", "--engine-version", VERSION, "--", *typed, env=env)
    assert json.loads(record.read_text())["argv"][1:3] == ["--model-path", str(model)]
    run_logsleuth("check", "--engine-version", VERSION, "--", *typed, "--trust-remote-code", env=env)
    argv = json.loads(record.read_text())["argv"]
    assert "--trust-remote-code" not in argv and str(model) not in argv


# -- launch: the printed lines show what runs --------------------------------------------------------------

HIDDEN = ("tab\there", "cr\rhere", "esc\x1b[31mred", "bidi\u202eevil", "nl\nhere", "quote'and\\slash")


def _dry_run_lines(words: list[str]) -> list[str]:
    import io

    from logsleuth.api import DiagnoseOptions
    from logsleuth.watch.launch import LaunchStreams, run_launch

    stdout, stderr = io.StringIO(), io.StringIO()
    status = run_launch("gpu7", words, options=DiagnoseOptions(), streams=LaunchStreams(stdout, stderr),
                        dry_run=True)
    assert status == 0, stderr.getvalue()
    return stdout.getvalue().splitlines()


def test_launch_prints_hidden_characters_escaped_and_the_line_runs_them() -> None:
    words = ["python3", "-m", "sglang.launch_server", "--served-model-name", *HIDDEN]
    lines = _dry_run_lines(words)
    printed = "\n".join(lines)
    assert not any(ord(char) < 0x20 or 0x7F <= ord(char) <= 0x9F or 0x202A <= ord(char) <= 0x202E
                   for char in printed.replace("\n", "")), repr(printed)
    for visible in ("\\t", "\\r", "\\x1b", "\\u202e", "\\n"):
        assert visible in printed
    start = next(line for line in lines if line.startswith("setsid nohup "))
    shown = start.removeprefix("setsid nohup ").rpartition(" >> ")[0]
    ran = subprocess.run(["bash", "-c", f"printf '%s\\0' {shown}"], capture_output=True, check=True).stdout
    assert ran.decode("utf-8").split("\0")[:-1] == words  # what the line runs is exactly the command


# -- a fix's env line --------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["0; touch owned #", "$(touch owned)", "a b", "tab\there"])
def test_a_fixs_env_value_prints_as_one_shell_word(value: str, tmp_path: Path) -> None:
    from logsleuth.models import Fix
    from logsleuth.render.view import fix_view

    (change,) = fix_view(Fix("set the devices", env=(("CUDA_VISIBLE_DEVICES", value),))).changes
    assert change.startswith("env ")
    ran = subprocess.run(["bash", "-c", f"printf '%s\\0' {change.removeprefix('env ')}"], capture_output=True,
                         cwd=tmp_path, check=True).stdout  # bash reads the line back: one word, nothing runs
    assert ran.decode().split("\0")[:-1] == [f"CUDA_VISIBLE_DEVICES={value}"]
    assert not (tmp_path / "owned").exists()


# -- check HOST: a source spec is not a host ---------------------------------------------------------------


@pytest.mark.parametrize("host", ["127.0.0.1:1:docker:x", "127.0.0.1:1:/var/log/x.log", "127.0.0.1:journal:u",
                                  "127.0.0.1:1:k8s:pod/x"])
def test_check_refuses_a_source_spec_as_its_host(host: str, capsys: pytest.CaptureFixture[str]) -> None:
    from logsleuth.cli.check import run_check

    status = run_check([host, "python3", "-m", "sglang.launch_server", "--model-path", "/m"], None, "text")
    out, err = capsys.readouterr()
    assert (status, out) == (2, ""), err
    assert err.count("\n") == 1 and "not a host" in err


# -- check: stdin closed, an ASCII-only stdout -------------------------------------------------------------


def test_check_stdin_closed_is_one_line_not_an_internal_error() -> None:
    done = subprocess.run(["bash", "-c", f"exec {LOGSLEUTH} check - <&-"], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "internal error" not in done.stderr, done.stderr
    assert "standard input" in done.stderr


@pytest.mark.parametrize("locale", [{"PYTHONIOENCODING": "ascii"},
                                    {"LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0",
                                     "PYTHONIOENCODING": ""}])
@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_check_on_an_ascii_stdout_delivers_the_report(locale: dict[str, str], fmt: str) -> None:
    env = {**os.environ, **locale}
    for argv, stdin in ((["check", "--format", fmt, "--", "--tp-size", "2"], None),
                        (["check", "--format", fmt, "-"], "add --tp-size 2 …\n")):
        done = run_logsleuth(*argv, stdin=stdin, env=env)
        assert done.returncode == 0, done.stderr
        assert done.stderr == "" and "--tp-size" in done.stdout
        if fmt == "json":
            assert json.loads(done.stdout)["passed"] is True
        else:
            assert "\\xb7" in done.stdout  # ·, "the flag exists" (not verified), written as an escape the stream can carry
