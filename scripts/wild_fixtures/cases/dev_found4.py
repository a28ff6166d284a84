"""Stop 38's dev split for the last shapes a fresh blind split missed (branch h-found4): an engine's message a client
printed after the HTTP error status, with no exception type (the engine's text is read against the raise site index).

Facts were mined from even-numbered threads; what a thread did not show is ours, and each `facts` says which."""

from __future__ import annotations

from ..corpus import Expect, Text
from .dev_found3 import fenced

# vLLM's refusal of a request longer than the served context (serving_engine.py's length check, a ValueError turned into
# the 400 answer); ogx-ai/ogx#4534 shows it reaching the client after a 400 (there in the openai client's wording).
REFUSAL = ("This model's maximum context length is 6048 tokens. However, you requested 6616 tokens (568 in the messages, "
           "6048 in the completion). Please reduce the length of the messages or completion.")
STATUS_4534 = Text(
    "$ vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 6048\n"
    "...\n"
    "$ python agent.py\n"
    f"Request failed (HTTP 400): {REFUSAL}\n",
    primary=True)


CASES = (
    fenced(thread="https://github.com/ogx-ai/ogx/issues/4534", kind="dev-client-status-engine-message", style="status-then-text",
           parts=(STATUS_4534,), engine="vllm", engine_version="0.7.1",
           expect=Expect("context-length"),  # printed without its type (README: no exception fields)
           facts="a remote vLLM served with a 6048-token context refusing a request of 6616 tokens (568 in the messages, 6048 in "
                 "the completion), the refusal seen by the client after a 400; the client's own print (`Request failed (HTTP 400): "
                 "<text>`), the serve command, the script's name and the release (0.7.1, of the thread's date) ours (paste style ours)",
           resolution="The request asks for more tokens than the served context: lower the completion's max_tokens (the thread's "
                      "answer, at the client) or serve a longer --max-model-len the model supports."),
)
