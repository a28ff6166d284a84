"""Where --explain sends the case file: --llm-url, then $LOGSLEUTH_LLM_URL, then config.toml; never without
--explain; the API key only from the variable the config names."""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth.errors import UsageError
from logsleuth.explain import ExplainError
from logsleuth.explain.config import (
    ExplainOptions,
    completions_url,
    config_file,
    explain_options,
    resolve_settings,
)

ON = ExplainOptions(enabled=True)


def write_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


def test_the_command_line_wins_then_the_environment_then_the_file(tmp_path: Path) -> None:
    path = write_config(tmp_path, '[explain]\nurl = "http://from-file:1/v1"\nmodel = "file-model"\n')
    env = {"LOGSLEUTH_LLM_URL": "http://from-env:2", "LOGSLEUTH_LLM_MODEL": "env-model"}
    flags = ExplainOptions(enabled=True, url="https://from-flag:3/v1/chat/completions", model="flag-model")
    assert resolve_settings(flags, env, path).url == "https://from-flag:3/v1/chat/completions"
    assert resolve_settings(flags, env, path).model == "flag-model"
    assert resolve_settings(ON, env, path).url == "http://from-env:2/v1/chat/completions"
    assert resolve_settings(ON, env, path).model == "env-model"
    assert resolve_settings(ON, {}, path).url == "http://from-file:1/v1/chat/completions"
    assert resolve_settings(ON, {}, path).model == "file-model"


def test_the_config_file_lives_under_xdg_config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert config_file() == tmp_path / "logsleuth" / "config.toml"


@pytest.mark.parametrize(
    ("given", "url"),
    [
        ("http://gpu7:30000", "http://gpu7:30000/v1/chat/completions"),
        ("http://gpu7:30000/v1/", "http://gpu7:30000/v1/chat/completions"),
        ("https://llm.internal/openai/v1/chat/completions", "https://llm.internal/openai/v1/chat/completions"),
        ("http://[::1]:8000/v1", "http://[::1]:8000/v1/chat/completions"),
    ],
)
def test_a_base_url_names_its_chat_completions_endpoint(given: str, url: str) -> None:
    assert completions_url(given) == url


@pytest.mark.parametrize("given", ["ftp://gpu7/v1", "gpu7:30000", "http:///v1", "http://gpu7:port/v1"])
def test_what_is_not_an_http_url_is_one_line(given: str) -> None:
    with pytest.raises(ExplainError) as caught:
        completions_url(given)
    assert "\n" not in str(caught.value)


def test_no_endpoint_says_the_three_ways_to_name_one_and_that_nothing_was_sent(tmp_path: Path) -> None:
    with pytest.raises(ExplainError) as caught:
        resolve_settings(ON, {}, tmp_path / "missing.toml")
    text = str(caught.value)
    assert "--llm-url" in text and "LOGSLEUTH_LLM_URL" in text and "missing.toml" in text
    assert "nothing was sent" in text


def test_llm_options_without_explain_are_a_usage_error() -> None:
    with pytest.raises(UsageError, match="--llm-url needs --explain"):
        explain_options(False, "http://gpu7:30000/v1", None)
    with pytest.raises(UsageError, match="--llm-model needs --explain"):
        explain_options(False, None, "qwen")
    assert explain_options(False, None, None) == ExplainOptions(enabled=False)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("[explain\nurl = 1", "config.toml"),
        ('[explain]\nurl = "http://h:1"\nendpoint = "x"\n', "no key 'endpoint'"),
        ("[explain]\nurl = 5\n", "url has the wrong type"),
        ('[explain]\nurl = "http://h:1"\ntimeout = 0\n', "timeout must be"),
    ],
)
def test_a_broken_config_file_is_one_line_naming_it(tmp_path: Path, text: str, says: str) -> None:
    with pytest.raises(ExplainError) as caught:
        resolve_settings(ON, {}, write_config(tmp_path, text))
    assert says in str(caught.value) and "\n" not in str(caught.value)


def test_the_api_key_comes_from_the_variable_the_config_names(tmp_path: Path) -> None:
    path = write_config(tmp_path, '[explain]\nurl = "http://h:1"\napi_key_env = "MY_LLM_KEY"\n')
    settings = resolve_settings(ON, {"MY_LLM_KEY": "k-123", "OPENAI_API_KEY": "sk-not-this-one"}, path)
    assert settings.api_key == "k-123"
    assert "k-123" not in repr(settings)
    with pytest.raises(ExplainError, match="MY_LLM_KEY"):
        resolve_settings(ON, {}, path)


def test_an_openai_key_in_the_environment_is_never_picked_up(tmp_path: Path) -> None:
    settings = resolve_settings(ON, {"LOGSLEUTH_LLM_URL": "http://h:1", "OPENAI_API_KEY": "sk-elsewhere"}, None)
    assert settings.api_key is None
    assert resolve_settings(ON, {"LOGSLEUTH_LLM_URL": "http://h:1", "LOGSLEUTH_LLM_API_KEY": "k"}, None).api_key == "k"


def test_credentials_in_the_url_are_never_shown(tmp_path: Path) -> None:
    settings = resolve_settings(ExplainOptions(enabled=True, url="http://me:pa55word@h:1/v1?token=abc"), {}, None)
    assert settings.endpoint == "http://h:1/v1/chat/completions"
