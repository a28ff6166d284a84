"""vLLM model, tokenizer, hub and config failures: a local model path read as a repo id (HFValidationError), a
gated repo, a hub request that fails before vLLM reports the model as invalid (logged without its exception
type), a tokenizer class transformers does not have, no chat template at request time, max_model_len above the
model's own, a quantization method the GPU is too old for, EAGLE3 on a target model without EAGLE3 support, and a
feature the V1 engine refuses under VLLM_USE_V1=1.

Patterns: vllm-hf-validation-error, vllm-gated-repo, vllm-error-without-type, vllm-tokenizer-load-failed,
vllm-chat-template-missing, vllm-max-model-len-exceeds-derived, vllm-quantization-capability,
vllm-eagle-unsupported-architecture, vllm-v1-unsupported-feature.

The mirrored files, functions, source lines and line numbers follow the vLLM wheels from PyPI: 0.6.6.post1 (the V0
multiprocessing engine, whose `run_mp_engine` logs `logger.exception(e)`: the message with no type first),
0.10.1.1, 0.11.0 and 0.33.0; transformers 4.57.1 and huggingface_hub 0.35.3 for the frames of those packages.  The
process wiring (log format, process prefixes, how an engine core or the API server dies) is shared with vllm.py,
whose docstring explains it.  Error texts are composed from the format strings in those sources; the numbers,
model names and paths in them are ours.
"""

from __future__ import annotations

import json
from dataclasses import replace
from types import SimpleNamespace

from ..engine import Case, Frame
from ..mirror import frame_at
from .vllm import (
    _HELPER,
    _INVALID_MODEL,
    _PYDANTIC_CORE,
    API_PID,
    API_SERVER,
    ARCH_CASE,
    BF16_CASE,
    GPU_WORKER,
    KV_0110,
    PATH_CASE,
    STAMP,
    engine_crash,
    engine_process,
    model_config_rejected,
    placed,
    to_engine_core,
    to_worker,
)

ARG_UTILS = "vllm/engine/arg_utils.py"
HF_UTILS = "vllm/transformers_utils/config.py"
VALIDATORS = "huggingface_hub/utils/_validators.py"
PYDANTIC_INIT = "pydantic/_internal/_dataclasses.py"


def vllm_process(style: str, name: str | None, pid: int, records: tuple[tuple[str, str, int, str], ...] = (),
                 uncaught: bool = False) -> str:
    """The statement that makes a fixture interpreter print like vLLM's process `name` (vllm.py `_lsfx_vllm.process`)."""
    return f"__import__('_lsfx_vllm').process({name!r}, {pid}, {style!r}, {STAMP!r}, {records!r}, {uncaught})"


# -- the API server (`vllm serve`) dying uncaught while it builds the engine's config ------------------------

# vllm/entrypoints/cli/serve.py ServeSubcommand.cmd: the line of `uvloop.run(run_server(args))`
_SERVE_LINE = {"0.10.1.1": 50, "0.11.0": 57}
# vllm/entrypoints/openai/api_server.py build_async_engine_client_from_engine_args: `vllm_config = engine_args.
# create_engine_config(usage_context=usage_context)`; arg_utils.py EngineArgs.create_engine_config: its call of
# create_model_config, and create_model_config's `return ModelConfig(`
_CONFIG_LINES = {"0.10.1.1": (204, 1057, 904), "0.11.0": (206, 1142, 994)}


def api_server_at(version: str, below: tuple[Frame, ...], records: tuple[tuple[str, str, int, str], ...] = ()) -> tuple[Frame, ...]:
    """`vllm serve` dying uncaught below `cmd`; `records` are the API server's log records before it fails."""
    return (
        frame_at("vllm/entrypoints/cli/main.py", "main", "args.dispatch_function(args)", 54, env=(
            ("_vllm_logging", vllm_process("v1", "APIServer", API_PID, records, uncaught=True)), ("args", "HOP:dispatch_function"))),
        frame_at("vllm/entrypoints/cli/serve.py", "cmd", "uvloop.run(run_server(args))", _SERVE_LINE[version],
                 env=(("uvloop", "NS(run=lambda coroutine: coroutine)"), ("run_server", "NEXT"), ("args", "None"))),
        *below,
    )


def to_create_engine_config(version: str) -> Frame:
    return frame_at(API_SERVER, "build_async_engine_client_from_engine_args",
                    "vllm_config = engine_args.create_engine_config(usage_context=usage_context)", _CONFIG_LINES[version][0])


def to_model_config(version: str) -> tuple[Frame, ...]:
    """The API server down to `ModelConfig(...)`, a pydantic dataclass from 0.10."""
    _, call_line, model_line = _CONFIG_LINES[version]
    return (
        to_create_engine_config(version),
        frame_at(ARG_UTILS, "create_engine_config", "model_config = self.create_model_config()", call_line),
        placed(ARG_UTILS, "create_model_config", model_line, "return ModelConfig(\n    model=self.model,\n    hf_config_path=self.hf_config_path)",
               env=(("ModelConfig", "NEXT"), ("self", "_Any()"))),
    )


def pydantic_error(config_class: str, message: str, arguments: str) -> str:
    """pydantic-core's text for a ValueError raised while a pydantic dataclass validates (its __post_init__ or an
    after-validator); `arguments` is the repr of the keyword arguments, which pydantic cuts to the first 25 and
    the last 24 characters of `ArgsKwargs((), {...})`."""
    shown = f"ArgsKwargs((), {arguments})"
    return (f"1 validation error for {config_class}\n"
            f"  Value error, {message} [type=value_error, input_value={shown[:25]}...{shown[-24:]}, input_type=ArgsKwargs]\n"
            "    For further information visit https://errors.pydantic.dev/2.11/v/value_error")


def pydantic_rejects(config_class: str, message: str, arguments: str) -> Frame:
    """pydantic's dataclass __init__ handing the arguments to pydantic-core, which raises its ValidationError from
    Rust: no frame of the validator that raised is printed (vllm.py `model_config_rejected` does the same)."""
    error = (f"__import__('pydantic_core._pydantic_core', fromlist=['ValidationError'])"
             f".ValidationError({pydantic_error(config_class, message, arguments)!r})")
    return placed(PYDANTIC_INIT, "__init__", 121,
                  "__tracebackhide__ = True\ns = __dataclass_self__\ns.__pydantic_validator__.validate_python(ArgsKwargs(args, kwargs), self_instance=s)",
                  env=(("__dataclass_self__", "NS(__pydantic_validator__=NS(validate_python=dict))"),
                       ("ArgsKwargs", f"__import__('functools').partial(map, __import__('_lsfx').c_raiser({error}))"),
                       ("args", "(0,)"), ("kwargs", "(0,)")))


def api_config_rejected(version: str, to_config: tuple[Frame, ...], config_class: str, message: str,
                        arguments: str, records: tuple[tuple[str, str, int, str], ...] = ()) -> Case:
    """`vllm serve` stopped by a config class's validation (pydantic-wrapped), `records` logged before it."""
    frames = api_server_at(version, (*to_config, pydantic_rejects(config_class, message, arguments)), records)
    return Case("", "", frames, mode="plain", ranks="", extra_modules=(_HELPER, _PYDANTIC_CORE))


def model_arguments(model: str) -> str:
    """The repr of ModelConfig's keyword arguments in create_model_config (0.11.0): model first, logits_processors last."""
    return repr({"model": model, "runner": "auto", "convert": "auto", "tokenizer": model, "logits_processors": None})


# -- V0 (0.6.6.post1): the MQ engine process building its config ------------------------------------------

MQ_ENGINE = "vllm/engine/multiprocessing/engine.py"
CONFIG_066 = "vllm/config.py"


def v0_to_model_config() -> tuple[Frame, ...]:
    """MQLLMEngine.from_engine_args -> EngineArgs.create_engine_config -> ModelConfig.__init__ (0.6.6.post1)."""
    return (
        frame_at(MQ_ENGINE, "from_engine_args", "engine_config = engine_args.create_engine_config(usage_context)", 114,
                 env=(("engine_args", "HOP:create_engine_config"), ("usage_context", "None"))),
        frame_at(ARG_UTILS, "create_engine_config", "model_config = self.create_model_config()", 1044),
        placed(ARG_UTILS, "create_model_config", 970, "return ModelConfig(\n    model=self.model,\n    task=self.task)",
               env=(("ModelConfig", "NEXT"), ("self", "_Any()"))),
    )


def v0_get_config(model: str, below: tuple[Frame, ...]) -> tuple[Frame, ...]:
    """ModelConfig.__init__ -> get_config -> file_or_path_exists for `model` (0.6.6.post1), `below` it."""
    return (
        *v0_to_model_config(),
        placed(CONFIG_066, "__init__", 276, "hf_config = get_config(self.model, trust_remote_code, revision,\n"
               "                       code_revision, config_format)",
               env=(("get_config", "NEXT"), ("self", f"NS(model={model!r})"), ("trust_remote_code", "False"), ("revision", "None"),
                    ("code_revision", "None"), ("config_format", "'auto'"))),
        placed(HF_UTILS, "get_config", 179, "if is_gguf or file_or_path_exists(\n        model, HF_CONFIG_NAME, revision=revision):\n"
               "    config_format = ConfigFormat.HF",
               env=(("is_gguf", "False"), ("file_or_path_exists", "NEXT"), ("model", repr(model)), ("HF_CONFIG_NAME", "'config.json'"),
                    ("revision", "None"), ("ConfigFormat", "_Any()"))),
        *below,
    )


# huggingface_hub/utils/_validators.py validate_repo_id (0.35.3), lines 153-163
_VALIDATE_REPO_ID = """
if repo_id.count("/") > 1:
    raise HFValidationError(
        "Repo id must be in the form 'repo_name' or 'namespace/repo_name':"
        f" '{repo_id}'. Use `repo_type` argument if needed."
    )

if not REPO_ID_REGEX.match(repo_id):
    raise HFValidationError(
        "Repo id must use alphanumeric chars or '-', '_', '.', '--' and '..' are"
        " forbidden, '-' and '.' cannot start or end the name, max length is 96:"
        f" '{repo_id}'."
    )
"""
_HUB_ERRORS = ("huggingface_hub/errors.py", '''
class HFValidationError(ValueError):
    """huggingface_hub/errors.py: a repo id that is not one."""


class HfHubHTTPError(OSError):
    def __init__(self, message, response=None, server_message=None):
        super().__init__(message)


class RepositoryNotFoundError(HfHubHTTPError):
    pass


class GatedRepoError(RepositoryNotFoundError):
    pass
''')
# the id regex of huggingface_hub/utils/_validators.py (0.35.3)
_REPO_ID_REGEX = r"__import__('re').compile(r'^(\b[\w\-.]+\b/)?\b[\w\-.]{1,96}\b$')"


def hf_validation(model: str) -> tuple[Frame, ...]:
    """file_or_path_exists -> try_to_load_from_cache, whose decorator validates `model` as a repo id (0.6.6.post1)."""
    return (
        placed(HF_UTILS, "file_or_path_exists", 88, "cached_filepath = try_to_load_from_cache(repo_id=model,\n"
               "                                         filename=config_name,\n                                         revision=revision)",
               env=(("try_to_load_from_cache", "NEXT"), ("model", repr(model)), ("config_name", "'config.json'"), ("revision", "None"))),
        frame_at(VALIDATORS, "_inner_fn", "validate_repo_id(arg_value)", 106, env=(("validate_repo_id", "NEXT"), ("arg_value", repr(model)))),
        placed(VALIDATORS, "validate_repo_id", 153, _VALIDATE_REPO_ID, env=(
            ("repo_id", repr(model)), ("HFValidationError", "__import__('huggingface_hub.errors', fromlist=['x']).HFValidationError"),
            ("REPO_ID_REGEX", _REPO_ID_REGEX))),
    )


def bind_next_index(frames: tuple[Frame, ...]) -> tuple[Frame, ...]:
    """Write the next frame's key where a frame's env says `{NEXT_INDEX}`: a frame that reaches the next one
    through an attribute of a value it was handed (a response's raise_for_status), not by a call in its line."""
    bound = []
    for index, frame in enumerate(frames):
        if any("{NEXT_INDEX}" in value for _, value in frame.env):
            frame = replace(frame, env=tuple((name, value.replace("{NEXT_INDEX}", str(index + 1))) for name, value in frame.env))
        bound.append(frame)
    return tuple(bound)


def v0_engine_crash(pattern: str, name: str, below: tuple[Frame, ...], extra: tuple[tuple[str, str], ...] = ()) -> Case:
    """The 0.6.6.post1 MQ engine process failing: `run_mp_engine` logs the message without its type, then the traceback."""
    frames = bind_next_index(engine_process("0.6.6.post1", below))
    return Case(pattern, name, frames, mode="plain", ranks="", extra_modules=(_HELPER, *extra))


HFV = "vllm-hf-validation-error"
HFV_CASES = [
    v0_engine_crash(HFV, f"{kind}-0.6.6.post1-{label}", v0_get_config(model, hf_validation(model)), extra=(_HUB_ERRORS,))
    for kind, label, model in (
        ("positive", "absolute-path", "/data/models/Qwen2.5-7B-Instruct"),  # more than one '/': "must be in the form ..."
        ("positive", "one-slash", "/Qwen2.5-7B-Instruct"),  # one '/': "must use alphanumeric chars ..."
        ("negative", "repo-id-with-spaces", "Qwen/Qwen2.5 7B Instruct"),  # a mistyped repo id, not a path
    )
]


# -- a gated repo (0.6.6.post1: huggingface_hub's file_exists re-raises GatedRepoError, which nothing wraps) ------

HF_API = "huggingface_hub/hf_api.py"
FILE_DOWNLOAD = "huggingface_hub/file_download.py"
HUB_HTTP = "huggingface_hub/utils/_http.py"
HUB_ERRORS = "__import__('huggingface_hub.errors', fromlist=['x'])"
REQUEST_ID = "Root=1-67d3f0a1-5c2a9e4b7d1f30862e4a1b9c;0b6f1d2e-8c4a-4f7e-9a3b-2d5c6e7f8a90"
_REQUESTS = ("requests/exceptions.py", '''
class RequestException(IOError):
    def __init__(self, *args, **kwargs):
        self.response = kwargs.pop("response", None)
        super().__init__(*args, **kwargs)


class HTTPError(RequestException):
    pass
''')

# huggingface_hub/utils/_http.py hf_raise_for_status (0.35.3), lines 406-424, down to the gated branch
_RAISE_FOR_STATUS = """
try:
    response.raise_for_status()
except HTTPError as e:
    error_code = response.headers.get("X-Error-Code")
    error_message = response.headers.get("X-Error-Message")

    if error_code == "RevisionNotFound":
        message = f"{response.status_code} Client Error." + "\\n\\n" + f"Revision Not Found for url: {response.url}."
        raise _format(RevisionNotFoundError, message, response) from e

    elif error_code == "EntryNotFound":
        message = f"{response.status_code} Client Error." + "\\n\\n" + f"Entry Not Found for url: {response.url}."
        raise _format(EntryNotFoundError, message, response) from e

    elif error_code == "GatedRepo":
        message = (
            f"{response.status_code} Client Error." + "\\n\\n" + f"Cannot access gated repo for url {response.url}."
        )
        raise _format(GatedRepoError, message, response) from e
"""
# requests/models.py Response.raise_for_status (2.32.3), lines 1013-1024
_REQUESTS_RAISE = """
if 400 <= self.status_code < 500:
    http_error_msg = (
        f"{self.status_code} Client Error: {reason} for url: {self.url}"
    )

elif 500 <= self.status_code < 600:
    http_error_msg = (
        f"{self.status_code} Server Error: {reason} for url: {self.url}"
    )

if http_error_msg:
    raise HTTPError(http_error_msg, response=self)
"""
_REASONS = {401: "Unauthorized", 403: "Forbidden"}


def gated_message(repo: str, status: int) -> str:
    """What the hub says (its X-Error-Message) to an unauthenticated (401) or unapproved (403) download."""
    if status == 401:
        return f"Access to model {repo} is restricted. You must have access to it and be authenticated to access it. Please log in."
    return (f"Access to model {repo} is restricted and you are not in the authorized list. "
            f"Visit https://huggingface.co/{repo} to ask for access.")


def gated_download(repo: str, status: int) -> tuple[Frame, ...]:
    """file_or_path_exists -> huggingface_hub file_exists -> get_hf_file_metadata -> hf_raise_for_status (vLLM 0.6.6.post1,
    huggingface_hub 0.35.3), and below it the HTTPError of requests that GatedRepoError is raised from."""
    url = f"https://huggingface.co/{repo}/resolve/main/config.json"
    headers = {"X-Error-Code": "GatedRepo", "X-Error-Message": gated_message(repo, status)}
    response = f"NS(status_code={status}, url={url!r}, reason={_REASONS[status]!r}, headers={headers!r}"
    # huggingface_hub's _format: the server's message on its own line, the request id after the first line
    format_error = ("lambda error_type, message, response: error_type(message.replace('Client Error.', "
                    f"'Client Error. (Request ID: {REQUEST_ID})', 1) + chr(10) + response.headers['X-Error-Message'], response=response)")
    return (
        placed(HF_UTILS, "file_or_path_exists", 97, "try:\n    return file_exists(model,\n                       config_name,\n"
               "                       revision=revision,\n                       token=HF_TOKEN)\n"
               "except huggingface_hub.errors.OfflineModeIsEnabled:\n    return False",
               env=(("file_exists", "NEXT"), ("model", repr(repo)), ("config_name", "'config.json'"), ("revision", "None"), ("HF_TOKEN", "None"),
                    ("huggingface_hub", f"NS(errors=NS(OfflineModeIsEnabled={HUB_ERRORS}.HFValidationError))"))),
        frame_at(VALIDATORS, "_inner_fn", "return fn(*args, **kwargs)", 114, env=(("fn", "NEXT"), ("args", "()"), ("kwargs", "{}"))),
        placed(HF_API, "file_exists", 3014, "try:\n    get_hf_file_metadata(url, token=token)\n    return True\n"
               "except GatedRepoError:  # raise specifically on gated repo\n    raise",
               env=(("get_hf_file_metadata", "NEXT"), ("url", repr(url)), ("token", "None"), ("GatedRepoError", f"{HUB_ERRORS}.GatedRepoError"))),
        frame_at(VALIDATORS, "_inner_fn", "return fn(*args, **kwargs)", 114, env=(("fn", "NEXT"), ("args", "()"), ("kwargs", "{}"))),
        placed(FILE_DOWNLOAD, "get_hf_file_metadata", 1463, "r = _request_wrapper(\n    method=\"HEAD\",\n    url=url,\n    headers=hf_headers)",
               env=(("_request_wrapper", "NEXT"), ("url", "None"), ("hf_headers", "None"))),
        placed(FILE_DOWNLOAD, "_request_wrapper", 286, "response = _request_wrapper(\n    method=method,\n    url=url)",
               env=(("_request_wrapper", "NEXT"), ("method", "'HEAD'"), ("url", "None"))),
        frame_at(FILE_DOWNLOAD, "_request_wrapper", "hf_raise_for_status(response)", 310, env=(("hf_raise_for_status", "NEXT"), ("response", "None"))),
        placed(HUB_HTTP, "hf_raise_for_status", 406, _RAISE_FOR_STATUS, env=(
            ("response", response + ", raise_for_status=_target('f{NEXT_INDEX}'))"),
            ("HTTPError", "__import__('requests.exceptions', fromlist=['x']).HTTPError"),
            ("RevisionNotFoundError", "None"), ("EntryNotFoundError", "None"), ("GatedRepoError", f"{HUB_ERRORS}.GatedRepoError"),
            ("_format", format_error))),
        placed("requests/models.py", "raise_for_status", 1013, _REQUESTS_RAISE, env=(
            ("self", response + ")"), ("reason", repr(_REASONS[status])), ("http_error_msg", "''"),
            ("HTTPError", "__import__('requests.exceptions', fromlist=['x']).HTTPError"))),
    )


GATED = "vllm-gated-repo"
GATED_CASES = [
    v0_engine_crash(GATED, f"positive-0.6.6.post1-{status}", v0_get_config(repo, gated_download(repo, status)), extra=(_HUB_ERRORS, _REQUESTS))
    for status, repo in ((401, "meta-llama/Llama-3.1-8B-Instruct"), (403, "google/gemma-2-9b-it"))
]


def gated_oserror_paste(repo: str, transformers: str) -> Case:
    """The last lines of a traceback, pasted alone: transformers' OSError around the GatedRepoError (utils/hub.py
    cached_file in 4.34.1, without the hub's error; cached_files in 4.57.1, with it appended)."""
    if transformers == "4.34.1":
        text = ("You are trying to access a gated repo.\nMake sure to request access at "
                f"https://huggingface.co/{repo} and pass a token having permission to this repo either "
                "by logging in with `huggingface-cli login` or by passing `token=<your_token>`.")
    else:
        hub_error = (f"401 Client Error. (Request ID: {REQUEST_ID})\n\n"
                     f"Cannot access gated repo for url https://huggingface.co/{repo}/resolve/main/config.json.\n{gated_message(repo, 401)}")
        text = f"You are trying to access a gated repo.\nMake sure to have access to it at https://huggingface.co/{repo}.\n{hub_error}"
    return Case(GATED, f"positive-transformers-{transformers}-paste", (), mode="lines", ranks="", raw_after=(f"OSError: {text}",))


# -- a hub request that fails inside vLLM's with_retry, logged without its type (0.11.0) ----------------------

# vllm/transformers_utils/config.py with_retry (0.11.0): `logger.error("%s: %s, retrying %d of %d", …)` at line 278,
# then `logger.error("%s: %s", log_msg, e)` at 276 and `raise`; get_config wraps what it raises in the "Invalid
# repository ID or local directory specified" ValueError, which pydantic wraps again in the API server
def with_retry_records(error: str) -> tuple[tuple[str, str, int, str], ...]:
    return (("ERROR", HF_UTILS, 278, f"Error retrieving file list: {error}, retrying 1 of 2"),
            ("ERROR", HF_UTILS, 276, f"Error retrieving file list: {error}"))


def connect_timeout(repo: str) -> str:
    """str() of the ConnectionError huggingface_hub re-raises with its request id (args: the urllib3 error, the id)."""
    class MaxRetryError(Exception):
        pass

    url = f"/api/models/{repo}/tree/main?recursive=True&expand=False"
    pool = (f"HTTPSConnectionPool(host='huggingface.co', port=443): Max retries exceeded with url: {url} (Caused by "
            "ConnectTimeoutError(<urllib3.connection.HTTPSConnection object at 0x7f3a5c1e2b90>, "
            "'Connection to huggingface.co timed out. (connect timeout=None)'))")
    return str(Exception(MaxRetryError(pool), "(Request ID: 4c1f9a2e-7b3d-4e8a-9f61-2d0b5c7e3a18)"))


def repository_not_found(repo: str) -> str:
    """huggingface_hub 0.35.3 hf_raise_for_status, RepoNotFound branch: a repo that does not exist or is private."""
    return (f"401 Client Error. (Request ID: {REQUEST_ID})\n\n"
            f"Repository Not Found for url: https://huggingface.co/api/models/{repo}/tree/main?recursive=True&expand=False.\n"
            "Please make sure you specified the correct `repo_id` and `repo_type`.\n"
            "If you are trying to access a private or gated repo, make sure you are authenticated. "
            "For more details, see https://huggingface.co/docs/huggingface_hub/authentication\n"
            "Invalid username or password.")


def hub_request_failed(repo: str, error: str) -> Case:
    return api_config_rejected("0.11.0", to_model_config("0.11.0"), "ModelConfig", _INVALID_MODEL.format(model=repo),
                               model_arguments(repo), records=with_retry_records(error))


TYPELESS = "vllm-error-without-type"
TIMEOUT_CASE = hub_request_failed("Qwen/Qwen3-8B", connect_timeout("Qwen/Qwen3-8B"))
NOT_FOUND_CASE = hub_request_failed("acme-labs/llama-3-8b-ft", repository_not_found("acme-labs/llama-3-8b-ft"))




# -- the tokenizer: a class transformers does not have (0.11.0, AsyncLLM in the API server) -------------------

ASYNC_LLM = "vllm/v1/engine/async_llm.py"
TOKENIZER = "vllm/transformers_utils/tokenizer.py"
TOKENIZATION_AUTO = "transformers/models/auto/tokenization_auto.py"
TOKENIZATION_BASE = "transformers/tokenization_utils_base.py"

# vllm/transformers_utils/tokenizer.py get_tokenizer (0.11.0), lines 216-238
_GET_TOKENIZER_0110 = """
try:
    tokenizer = AutoTokenizer.from_pretrained(
        tokenizer_name,
        *args,
        trust_remote_code=trust_remote_code,
        revision=revision,
        **kwargs,
    )
except ValueError as e:
    # If the error pertains to the tokenizer class not existing or not
    # currently being imported,
    # suggest using the --trust-remote-code flag.
    if not trust_remote_code and (
            "does not exist or is not currently imported." in str(e)
            or "requires you to execute the tokenizer file" in str(e)):
        err_msg = ("Failed to load the tokenizer. If the tokenizer "
                   "is a custom tokenizer not yet available in the "
                   "HuggingFace transformers library, consider "
                   "setting `trust_remote_code=True` in LLM or using "
                   "the `--trust-remote-code` flag in the CLI.")
        raise RuntimeError(err_msg) from e
    else:
        raise e
"""
# transformers/tokenization_utils_fast.py PreTrainedTokenizerFast.__init__ (4.57.1), lines 142-148: neither a
# tokenizer.json nor sentencepiece/tiktoken to convert the slow tokenizer with
_NO_BACKEND_TOKENIZER = """
raise ValueError(
    "Couldn't instantiate the backend tokenizer from one of: \\n"
    "(1) a `tokenizers` library serialization file, \\n"
    "(2) a slow tokenizer instance to convert or \\n"
    "(3) an equivalent slow tokenizer class to instantiate and convert. \\n"
    "You need to have sentencepiece or tiktoken installed to convert a slow tokenizer to a fast one."
)
"""


def tokenizer_fails(model: str, below: tuple[Frame, ...]) -> Case:
    """`vllm serve MODEL` (0.11.0): AsyncLLM loads the tokenizer before it starts the engine core; `below` fails."""
    frames = api_server_at("0.11.0", (
        placed(API_SERVER, "build_async_engine_client_from_engine_args", 225, "async_llm = AsyncLLM.from_vllm_config(\n    vllm_config=vllm_config)",
               env=(("AsyncLLM", "HOP:from_vllm_config"), ("vllm_config", "None"))),
        placed(ASYNC_LLM, "from_vllm_config", 207, "return cls(\n    vllm_config=vllm_config)", env=(("cls", "NEXT"), ("vllm_config", "None"))),
        placed(ASYNC_LLM, "__init__", 114, "self.tokenizer = init_tokenizer_from_configs(\n    model_config=vllm_config.model_config)",
               env=(("self", "NS()"), ("init_tokenizer_from_configs", "NEXT"), ("vllm_config", "_Any()"))),
        placed(TOKENIZER, "init_tokenizer_from_configs", 286, "return get_tokenizer(\n    model_config.tokenizer,\n    tokenizer_mode=model_config.tokenizer_mode,\n"
               "    trust_remote_code=model_config.trust_remote_code)", env=(("get_tokenizer", "NEXT"), ("model_config", "_Any()"))),
        placed(TOKENIZER, "get_tokenizer", 216, _GET_TOKENIZER_0110, env=(
            ("AutoTokenizer", "HOP:from_pretrained"), ("tokenizer_name", repr(model)), ("args", "()"), ("trust_remote_code", "False"),
            ("revision", "None"), ("kwargs", "{}"))),
        *below,
    ))
    return Case("", "", frames, mode="plain", ranks="", extra_modules=(_HELPER,))


def unknown_tokenizer_class(class_name: str) -> tuple[Frame, ...]:
    """AutoTokenizer.from_pretrained (transformers 4.57.1): tokenizer_config.json names a class transformers lacks."""
    return (placed(TOKENIZATION_AUTO, "from_pretrained", 1136, "if tokenizer_class is None:\n    raise ValueError(\n"
                   "        f\"Tokenizer class {tokenizer_class_candidate} does not exist or is not currently imported.\"\n    )",
                   env=(("tokenizer_class", "None"), ("tokenizer_class_candidate", repr(class_name)))),)


NO_BACKEND_TOKENIZER = (
    frame_at(TOKENIZATION_AUTO, "from_pretrained", "return tokenizer_class.from_pretrained(pretrained_model_name_or_path, *inputs, **kwargs)", 1140,
             env=(("tokenizer_class", "HOP:from_pretrained"), ("pretrained_model_name_or_path", "None"), ("inputs", "()"), ("kwargs", "{}"))),
    placed(TOKENIZATION_BASE, "from_pretrained", 2097, "return cls._from_pretrained(\n    resolved_vocab_files,\n    pretrained_model_name_or_path,\n"
           "    init_configuration)", env=(("cls", "HOP:_from_pretrained"), ("resolved_vocab_files", "None"),
                                       ("pretrained_model_name_or_path", "None"), ("init_configuration", "None"))),
    frame_at(TOKENIZATION_BASE, "_from_pretrained", "tokenizer = cls(*init_inputs, **init_kwargs)", 2343,
             env=(("cls", "NEXT"), ("init_inputs", "()"), ("init_kwargs", "{}"))),
    placed("transformers/models/llama/tokenization_llama_fast.py", "__init__", 154, "super().__init__(\n    vocab_file=vocab_file,\n"
           "    tokenizer_file=tokenizer_file)", env=(("super", "NEXT"), ("vocab_file", "None"), ("tokenizer_file", "None"))),
    placed("transformers/tokenization_utils_fast.py", "__init__", 142, _NO_BACKEND_TOKENIZER),
)

TOKENIZER_FAILED = "vllm-tokenizer-load-failed"


# -- no chat template at request time --------------------------------------------------------------------------

SERVING_CHAT = "vllm/entrypoints/openai/serving_chat.py"
CHAT_TEMPLATE_MESSAGE = ("As of transformers v4.44, default chat template is no longer allowed, so you must provide a chat "
                         "template if the tokenizer does not define one.")

# vllm/entrypoints/openai/serving_chat.py OpenAIServingChat.create_chat_completion (0.11.0): the call of
# _preprocess_chat in its try (lines 235-253, the call on 239) and the handler that logs the error (261-264).  The
# method is a coroutine, so it is written as one inside the generated function and run by asyncio.
_CREATE_CHAT_COMPLETION = {
    186: "async def create_chat_completion(request, raw_request=None):", 187: "    try:",
    235: "        (", 236: "            conversation,", 237: "            request_prompts,", 238: "            engine_prompts,",
    239: "        ) = await self._preprocess_chat(", 240: "            request,", 241: "            tokenizer,",
    242: "            request.messages,", 243: "            chat_template=request_chat_template or self.chat_template,",
    244: "            chat_template_content_format=self.", 245: "            chat_template_content_format,",
    246: "            add_generation_prompt=request.add_generation_prompt,",
    247: "            continue_final_message=request.continue_final_message,", 248: "            tool_dicts=tool_dicts,",
    249: "            documents=request.documents,", 250: "            chat_template_kwargs=request.chat_template_kwargs,",
    251: "            tool_parser=tool_parser,", 252: "            add_special_tokens=request.add_special_tokens,", 253: "        )",
    261: "    except (ValueError, TypeError, RuntimeError,", 262: "            jinja2.TemplateError) as e:",
    263: "        logger.exception(\"Error in preprocessing prompt inputs\")",
    264: "        return self.create_error_response(f\"{e} {e.__cause__}\")",
    265: "__import__('asyncio').run(create_chat_completion(_Any()))",
}


def chat_request_fails(below: tuple[Frame, ...], status: str) -> Case:
    """A chat completion request (0.11.0) whose prompt cannot be built: serving_chat logs the traceback and answers
    with an error; uvicorn's access log shows the status."""
    lines = "\n".join(_CREATE_CHAT_COMPLETION.get(n, "") for n in range(186, 266))
    frames = (
        placed(SERVING_CHAT, "create_chat_completion", 186, lines, env=(
            ("_vllm_logging", vllm_process("v1", "APIServer", API_PID)), ("logger", "__import__('logging').getLogger('vllm')"),
            ("self", "HOP:_preprocess_chat"), ("tokenizer", "None"), ("request_chat_template", "None"), ("tool_dicts", "None"),
            ("tool_parser", "None"), ("jinja2", "NS(TemplateError=LookupError)"))),
        placed("vllm/entrypoints/openai/serving_engine.py", "_preprocess_chat", 791, "request_prompt = apply_hf_chat_template(\n"
               "    tokenizer=tokenizer,\n    conversation=conversation,\n    model_config=model_config,\n    **_chat_template_kwargs,\n)",
               env=(("apply_hf_chat_template", "NEXT"), ("tokenizer", "None"), ("conversation", "[]"), ("model_config", "None"),
                    ("_chat_template_kwargs", "{}"))),
        *below,
    )
    access = f'INFO:     127.0.0.1:51834 - "POST /v1/chat/completions HTTP/1.1" {status}'
    return Case("", "", frames, mode="plain", ranks="", extra_modules=(_HELPER,), raw_after=(access,))


# vllm/entrypoints/chat_utils.py apply_hf_chat_template (0.11.0), lines 1612-1624
NO_CHAT_TEMPLATE = (placed("vllm/entrypoints/chat_utils.py", "apply_hf_chat_template", 1612, """
hf_chat_template = resolve_hf_chat_template(
    tokenizer,
    chat_template=chat_template,
    tools=tools,
    model_config=model_config,
)

if hf_chat_template is None:
    raise ValueError(
        "As of transformers v4.44, default chat template is no longer "
        "allowed, so you must provide a chat template if the tokenizer "
        "does not define one."
    )
""", env=(("resolve_hf_chat_template", "lambda *args, **kwargs: None"), ("tokenizer", "None"), ("chat_template", "None"), ("tools", "None"),
          ("model_config", "None"))),)


def curl_error(body: dict[str, object]) -> Case:
    """A client's view: curl printing the server's JSON error body (FastAPI's JSONResponse: compact separators)."""
    request = ("curl http://localhost:8000/v1/chat/completions -H \"Content-Type: application/json\" "
               "-d '{\"model\": \"served\", \"messages\": [{\"role\": \"user\", \"content\": \"Hello\"}]}'")
    return Case("", "", (), mode="lines", ranks="", raw_after=(f"$ {request}", json.dumps(body, ensure_ascii=False, separators=(",", ":"))))


def error_body(message: str) -> dict[str, object]:
    """vLLM's ErrorResponse (0.10 and later: `{"error": {...}}`) for a 400."""
    return {"error": {"message": message, "type": "BadRequestError", "param": None, "code": 400}}


CHAT_TEMPLATE = "vllm-chat-template-missing"


# -- max_model_len above the model's own --------------------------------------------------------------------

MAX_LEN = "vllm-max-model-len-exceeds-derived"
# vllm/config.py _get_and_verify_max_len (0.6.6.post1), lines 2381-2404
_VERIFY_MAX_LEN_066 = """
model_max_length = getattr(hf_config, "model_max_length", None)
if model_max_length is not None and max_model_len <= model_max_length:
    if disable_sliding_window:
        # TODO(robertgshaw): Find a model that has model_max_length
        # with sliding window to see if this case should be allowed.
        raise NotImplementedError(
            "Disabling sliding window is not supported for models "
            "model_max_length in the config. Please raise an issue "
            "so we can investigate.")
else:
    msg = (
        f"User-specified max_model_len ({max_model_len}) is greater "
        f"than the derived max_model_len ({max_len_key}="
        f"{derived_max_model_len} or model_max_length="
        f"{model_max_length} in model's config.json). This may lead "
        "to incorrect model outputs or CUDA errors.")
    if envs.VLLM_ALLOW_LONG_MAX_MODEL_LEN:
        logger.warning(
            "%s Make sure the value is correct and within the "
            "model context size.", msg)
    else:
        raise ValueError(
            f"{msg} To allow overriding this maximum, set "
            "the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1")
"""


def v0_max_len(asked: int, derived: int) -> tuple[Frame, ...]:
    return (
        *v0_to_model_config(),
        placed(CONFIG_066, "__init__", 328, "self.max_model_len = _get_and_verify_max_len(\n    hf_config=self.hf_text_config,\n"
               "    max_model_len=max_model_len,\n    disable_sliding_window=self.disable_sliding_window)",
               env=(("_get_and_verify_max_len", "NEXT"), ("self", "_Any()"), ("max_model_len", str(asked)))),
        placed(CONFIG_066, "_get_and_verify_max_len", 2381, _VERIFY_MAX_LEN_066, env=(
            ("hf_config", "NS()"), ("max_model_len", str(asked)), ("disable_sliding_window", "False"),
            ("max_len_key", "'max_position_embeddings'"), ("derived_max_model_len", str(derived)),
            ("envs", "NS(VLLM_ALLOW_LONG_MAX_MODEL_LEN=False)"), ("logger", "None"))),
    )


def max_len_message_0110(asked: int, key: str, derived: float | int) -> tuple[str, str]:
    """vllm/config/model.py _get_and_verify_max_len (0.11.0): (the ValueError's text, the warning logged instead
    when VLLM_ALLOW_LONG_MAX_MODEL_LEN is set)."""
    msg = (f"User-specified max_model_len ({asked}) is greater than the derived max_model_len ({key}={derived} or "
           f"model_max_length=None in model's config.json).")
    warning = ("VLLM_ALLOW_LONG_MAX_MODEL_LEN must be used with extreme caution. If the model uses relative position "
               "encoding (RoPE), positions exceeding derived_max_model_len lead to nan. If the model uses absolute position "
               "encoding, positions exceeding derived_max_model_len will cause a CUDA array out-of-bounds error.")
    return f"{msg} To allow overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. {warning}", f"{msg} {warning}"


# yarn rope scaling: derived_max_model_len = original_max_position_embeddings * factor, a float
MAX_LEN_ERROR, MAX_LEN_WARNING = max_len_message_0110(262144, "max_position_embeddings", 32768 * 4.0)


def api_records_then(records: tuple[tuple[str, str, int, str], ...], then: Case) -> Case:
    """The API server's records (0.11.0 style), then another case's log: a warning that did not stop the launch."""
    logged = Frame(API_SERVER, "run_server", body="pass", env=(("_vllm_logging", vllm_process("v1", "APIServer", API_PID, records)),))
    return Case("", "", (logged,), mode="plain", ranks="", extra_modules=(_HELPER,), then=(then,))


# -- a quantization method the GPU is too old for -----------------------------------------------------------

QUANT = "vllm-quantization-capability"


def quant_message(method: str, minimum: int, current: int) -> str:
    """vllm/config.py VllmConfig._get_quantization_config (0.6.6.post1 … 0.33.0)."""
    return (f"The quantization method {method} is not supported for the current GPU. Minimum capability: {minimum}. "
            f"Current capability: {current}.")


# the repr of VllmConfig's keyword arguments in create_engine_config: model_config first, additional_config last
VLLM_CONFIG_ARGUMENTS = "{'model_config': ModelConfig(model='Qwen/Qwen2.5-7B-Instruct-AWQ'), 'additional_config': {}}"
_VLLM_CONFIG_LINE = {"0.10.1.1": 1343, "0.11.0": 1431}


def to_vllm_config(version: str) -> tuple[Frame, ...]:
    return (to_create_engine_config(version),
            placed(ARG_UTILS, "create_engine_config", _VLLM_CONFIG_LINE[version], "config = VllmConfig(\n    model_config=model_config,\n"
                   "    cache_config=cache_config)", env=(("VllmConfig", "NEXT"), ("model_config", "None"), ("cache_config", "None"))))


def v0_quant(method: str, minimum: int, current: int) -> tuple[Frame, ...]:
    """create_engine_config -> VllmConfig's dataclass __init__ -> __post_init__ -> _get_quantization_config (0.6.6.post1)."""
    return (
        frame_at(MQ_ENGINE, "from_engine_args", "engine_config = engine_args.create_engine_config(usage_context)", 114,
                 env=(("engine_args", "HOP:create_engine_config"), ("usage_context", "None"))),
        placed(ARG_UTILS, "create_engine_config", 1238, "config = VllmConfig(\n    model_config=model_config,\n    cache_config=cache_config)",
               env=(("VllmConfig", "NEXT"), ("model_config", "None"), ("cache_config", "None"))),
        # dataclasses' generated __init__ (16 fields): `self.__post_init__()` on its line 19
        Frame("<string>", "__init__", "self.__post_init__()", env=(("self", "HOP:__post_init__"),), lineno=17),
        placed(CONFIG_066, "__post_init__", 3112, "if self.quant_config is None and \\\n    self.model_config is not None and self.load_config is not None:\n"
               "    self.quant_config = VllmConfig._get_quantization_config(\n        self.model_config, self.load_config)",
               env=(("self", "NS(quant_config=None, model_config=0, load_config=0)"), ("VllmConfig", "HOP:_get_quantization_config"))),
        placed(CONFIG_066, "_get_quantization_config", 3055, """
if model_config.quantization is not None:
    from vllm.model_executor.model_loader.weight_utils import (
        get_quant_config)
    quant_config = get_quant_config(model_config, load_config)
    capability_tuple = current_platform.get_device_capability()

    if capability_tuple is not None:
        capability = capability_tuple.to_int()
        if capability < quant_config.get_min_capability():
            raise ValueError(
                f"The quantization method {model_config.quantization} "
                "is not supported for the current GPU. Minimum "
                f"capability: {quant_config.get_min_capability()}. "
                f"Current capability: {capability}.")
""", env=(("model_config", f"NS(quantization={method!r})"), ("load_config", "None"),
          ("current_platform", f"NS(get_device_capability=lambda: NS(to_int=lambda: {current}))"))),
    )


def weight_utils(minimum: int) -> tuple[str, str]:
    """A stand-in for vLLM's get_quant_config, imported inside _get_quantization_config: only the quantization
    method's minimum capability is read from what it returns."""
    return ("vllm/model_executor/model_loader/weight_utils.py", f'''
def get_quant_config(model_config, load_config):
    return type("QuantizationConfig", (), {{"get_min_capability": staticmethod(lambda: {minimum})}})()
''')


# -- EAGLE3 on a target model without EAGLE3 support ------------------------------------------------------------

EAGLE = "vllm-eagle-unsupported-architecture"
GPU_MODEL_RUNNER = "vllm/v1/worker/gpu_model_runner.py"


def eagle3_message(supported: list[str], model_type: str) -> str:
    """vllm/config/speculative.py SpeculativeConfig._verify_args (0.10.1.1 … 0.15.1): `{expr=}` prints the expression."""
    self = SimpleNamespace(target_model_config=SimpleNamespace(hf_text_config=SimpleNamespace(model_type=model_type)))
    return (f"Eagle3 is only supported for {supported} models. "  # noqa: E501
            f"Got {self.target_model_config.hf_text_config.model_type=}")


SPEC_ARGUMENTS = repr({"method": "eagle3", "model": "deepseek-ai/DeepSeek-V3-eagle3", "num_speculative_tokens": 3,
                       "target_model_config": None, "disable_log_stats": False})
TO_SPECULATIVE_0110 = (
    to_create_engine_config("0.11.0"),
    placed(ARG_UTILS, "create_engine_config", 1347, "speculative_config = self.create_speculative_config(\n    target_model_config=model_config,\n"
           "    target_parallel_config=parallel_config,\n    enable_chunked_prefill=self.enable_chunked_prefill)",
           env=(("self", "HOP:create_speculative_config"), ("model_config", "None"), ("parallel_config", "None"))),
    frame_at(ARG_UTILS, "create_speculative_config", "return SpeculativeConfig(**self.speculative_config)", 1109,
             env=(("SpeculativeConfig", "NEXT"), ("self", "NS(speculative_config={})"))),
)
_EAGLE3_INTERFACE = """
raise RuntimeError(
    "Model does not support EAGLE3 interface but "
    "aux_hidden_state_outputs was requested")
"""


def eagle3_load_0110() -> tuple[Frame, ...]:
    """Worker.load_model -> GPUModelRunner.load_model (0.11.0): the target model has no EAGLE3 interface."""
    return (
        *to_worker("0.11.0", "load_model"),
        frame_at(GPU_WORKER, "load_model", "self.model_runner.load_model(eep_scale_up=eep_scale_up)", 213),
        placed(GPU_MODEL_RUNNER, "load_model", 2643, """
if self.use_aux_hidden_state_outputs:
    if supports_eagle3(self.model):
        self.model.set_aux_hidden_state_layers(
            self.model.get_eagle3_aux_hidden_state_layers())
    else:
        raise RuntimeError(
            "Model does not support EAGLE3 interface but "
            "aux_hidden_state_outputs was requested")
""", env=(("self", "NS(use_aux_hidden_state_outputs=True, model=None)"), ("supports_eagle3", "lambda model: False"))),
    )


def eagle3_load_0330() -> tuple[Frame, ...]:
    """The uniprocess executor -> Worker.load_model -> GPUModelRunner._setup_eagle3_aux_hidden_state_outputs (0.33.0).
    (WorkerWrapperBase forwards load_model through __getattr__: no frame of its own.)"""
    return (
        *to_engine_core("0.33.0", "self.model_executor = executor_class(vllm_config)", 150),
        frame_at("vllm/v1/executor/abstract.py", "__init__", "self._init_executor()", 120),
        frame_at("vllm/v1/executor/uniproc_executor.py", "_init_executor", "self.driver_worker.load_model()", 74),
        frame_at(GPU_WORKER, "load_model", "self.model_runner.load_model(load_dummy_weights=load_dummy_weights)", 601),
        frame_at(GPU_MODEL_RUNNER, "load_model", "self._setup_eagle3_aux_hidden_state_outputs()", 5055),
        placed(GPU_MODEL_RUNNER, "_setup_eagle3_aux_hidden_state_outputs", 5170, """
if not self.use_aux_hidden_state_outputs:
    return

if not supports_eagle3(self.get_model()):
    raise RuntimeError(
        "Model does not support EAGLE3 interface but "
        "aux_hidden_state_outputs was requested"
    )
""", env=(("self", "NS(use_aux_hidden_state_outputs=True, get_model=lambda: None)"), ("supports_eagle3", "lambda model: False"))),
    )


DRAFTER_RECORDS = (("INFO", GPU_MODEL_RUNNER, 2641, "Loading drafter model..."),)


# -- a feature V1 refuses under VLLM_USE_V1=1 (0.8 … 0.11.0) ----------------------------------------------------

V1_FEATURE = "vllm-v1-unsupported-feature"


def v1_refuses(feature: str) -> Case:
    """`VLLM_USE_V1=1 vllm serve …` (0.10.1.1): create_engine_config asks the V1 oracle, which raises."""
    frames = api_server_at("0.10.1.1", (
        to_create_engine_config("0.10.1.1"),
        placed(ARG_UTILS, "create_engine_config", 1066, "if try_v1 and self._is_v1_supported_oracle(model_config):\n    use_v1 = True",
               env=(("try_v1", "True"), ("self", "HOP:_is_v1_supported_oracle"), ("model_config", "None"))),
        placed(ARG_UTILS, "_is_v1_supported_oracle", 1403, f"_raise_or_fallback(feature_name={feature!r},\n                   recommend_to_remove=False)"
               .replace("'", '"'), env=(("_raise_or_fallback", "NEXT"),)),
        placed(ARG_UTILS, "_raise_or_fallback", 1762, "if envs.is_set(\"VLLM_USE_V1\") and envs.VLLM_USE_V1:\n    raise NotImplementedError(\n"
               "        f\"VLLM_USE_V1=1 is not supported with {feature_name}.\")",
               env=(("envs", "NS(is_set=lambda name: True, VLLM_USE_V1=True)"), ("feature_name", repr(feature)))),
    ))
    return Case("", "", frames, mode="plain", ranks="", extra_modules=(_HELPER,))


# VLLM_USE_V1 unset: the oracle logs the fallback (arg_utils.py _raise_or_fallback, logger.warning at 1770) and goes on
V1_FALLBACK_RECORDS = (("WARNING", ARG_UTILS, 1770, "Compute Capability < 8.0 is not supported by the V1 Engine. Falling back to V0. "),)
AWQ_ON_V100_0101 = api_config_rejected("0.10.1.1", to_vllm_config("0.10.1.1"), "VllmConfig", quant_message("awq", 75, 70),
                                       VLLM_CONFIG_ARGUMENTS, records=V1_FALLBACK_RECORDS)


# -- the table --------------------------------------------------------------------------------------------------

CASES = [
    *HFV_CASES,
    PATH_CASE.named(HFV, "negative-0.11.0-invalid-repository-id"),

    *GATED_CASES,
    gated_oserror_paste("meta-llama/Llama-3.1-8B-Instruct", "4.57.1"),
    gated_oserror_paste("meta-llama/Llama-Guard-3-8B", "4.34.1"),
    NOT_FOUND_CASE.named(GATED, "negative-0.11.0-repository-not-found"),
    PATH_CASE.named(GATED, "negative-0.11.0-invalid-repository-id"),

    TIMEOUT_CASE.named(TYPELESS, "positive-0.11.0-connect-timeout"),
    NOT_FOUND_CASE.named(TYPELESS, "positive-0.11.0-repository-not-found"),
    PATH_CASE.named(TYPELESS, "negative-0.11.0-no-hub-record"),
    GATED_CASES[0].named(TYPELESS, "negative-0.6.6.post1-gated"),

    tokenizer_fails("Qwen/Qwen-7B-Chat", unknown_tokenizer_class("QWenTokenizer")).named(TOKENIZER_FAILED, "positive-0.11.0"),
    tokenizer_fails("/models/llama-2-7b-chat", NO_BACKEND_TOKENIZER).named(TOKENIZER_FAILED, "negative-0.11.0-no-sentencepiece"),

    chat_request_fails(NO_CHAT_TEMPLATE, "400 Bad Request").named(CHAT_TEMPLATE, "positive-0.11.0-server"),
    curl_error(error_body(f"{CHAT_TEMPLATE_MESSAGE} None")).named(CHAT_TEMPLATE, "positive-0.11.0-client"),
    curl_error(error_body(CHAT_TEMPLATE_MESSAGE)).named(CHAT_TEMPLATE, "positive-0.33.0-client"),
    curl_error(error_body('"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'))
    .named(CHAT_TEMPLATE, "negative-0.11.0-client-tool-choice"),

    model_config_rejected(MAX_LEN_ERROR, "Qwen/Qwen3-8B").named(MAX_LEN, "positive-0.11.0"),
    v0_engine_crash(MAX_LEN, "positive-0.6.6.post1", v0_max_len(131072, 32768)),
    KV_0110.named(MAX_LEN, "negative-0.11.0-kv-cache"),
    api_records_then((("WARNING", "vllm/config/model.py", 1907, MAX_LEN_WARNING),), KV_0110)
    .named(MAX_LEN, "negative-0.11.0-override-allowed-then-kv-cache"),

    api_config_rejected("0.11.0", to_vllm_config("0.11.0"), "VllmConfig", quant_message("awq", 75, 70), VLLM_CONFIG_ARGUMENTS)
    .named(QUANT, "positive-0.11.0"),
    v0_engine_crash(QUANT, "positive-0.6.6.post1", v0_quant("bitsandbytes", 70, 61), extra=(weight_utils(70),)),
    AWQ_ON_V100_0101.named(QUANT, "positive-0.10.1.1-after-v1-fallback"),
    api_config_rejected("0.11.0", to_vllm_config("0.11.0"), "VllmConfig",
                        "torch.bfloat16 is not supported for quantization method awq. Supported dtypes: [torch.float16]",
                        VLLM_CONFIG_ARGUMENTS).named(QUANT, "negative-0.11.0-dtype"),
    BF16_CASE.named(QUANT, "negative-0.11.0-bf16"),

    api_config_rejected("0.11.0", TO_SPECULATIVE_0110, "SpeculativeConfig",
                        eagle3_message(["llama", "qwen", "minicpm", "gpt_oss"], "deepseek_v3"), SPEC_ARGUMENTS)
    .named(EAGLE, "positive-0.11.0-config"),
    engine_crash(EAGLE, "positive-0.11.0-engine", "0.11.0", eagle3_load_0110(), api_cascade=True, records=DRAFTER_RECORDS),
    engine_crash(EAGLE, "positive-0.33.0-engine", "0.33.0", eagle3_load_0330()),
    ARCH_CASE.named(EAGLE, "negative-0.11.0-eagle-vl-architecture"),

    v1_refuses("Compute Capability < 8.0").named(V1_FEATURE, "positive-0.10.1.1"),
    AWQ_ON_V100_0101.named(V1_FEATURE, "negative-0.10.1.1-fallback-warning"),
]
