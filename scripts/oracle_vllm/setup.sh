#!/usr/bin/env bash
# Build the cached "oracle" virtualenvs that run the REAL vLLM argument parsing and engine-config validation
# on a CPU-only machine.
#
# Layout under ${LOGSLEUTH_ORACLE_HOME:-$HOME/.cache/logsleuth/oracle} (shared with scripts/oracle/):
#   base/               torch 2.13.0 CPU, built by scripts/oracle/setup.sh (this script builds it through
#                       that one when it is missing, never a second torch)
#   vllm-<version>/     vllm --no-deps + only what `vllm serve`'s import path up to create_engine_config
#                       needs; a .pth adds base/'s site-packages, another .pth loads the stop hook
#   models/tiny-llama/  config.json only (shared with the SGLang oracle)
# Each venv writes a stamp file when finished, so a re-run on a set-up home takes seconds.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ORACLE_HOME="${LOGSLEUTH_ORACLE_HOME:-$HOME/.cache/logsleuth/oracle}"
PYTHON="${LOGSLEUTH_ORACLE_PYTHON:-python3.11}"
VERSIONS=("${@:-0.11.2 0.33.0}")
# shellcheck disable=SC2206
VERSIONS=(${VERSIONS[*]})
STAMP_REV=1  # bump to force a rebuild when this script's recipe changes

log() { printf '[oracle-setup-vllm %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

BASE="$ORACLE_HOME/base"
if [[ ! -f "$BASE/.ready" || ! -d "$ORACLE_HOME/models/tiny-llama" ]]; then
    log "torch base venv or models missing: building them with scripts/oracle/setup.sh"
    "$HERE/../oracle/setup.sh" "${LOGSLEUTH_SGLANG_VERSIONS_FOR_BASE:-0.5.9}"
fi
CONSTRAINTS="$ORACLE_HOME/constraints.txt"  # written by scripts/oracle/setup.sh: torch==2.13.0 etc.

site_packages() {  # $1 = venv dir
    "$1/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'
}
pip_in() {  # $1 = venv dir, rest = pip args; the torch pin keeps pip from pulling a multi-GB CUDA torch
    local venv="$1"; shift
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -c "$CONSTRAINTS" "$@"
}
BASE_SP="$(site_packages "$BASE")"

# What `vllm serve` imports before create_engine_config returns (found by running it until it imported;
# vLLM's full requirement list has CUDA kernels, ray, flashinfer, ... that validation never touches).
COMMON_DEPS=(pydantic fastapi uvicorn uvloop openai openai-harmony pyzmq msgspec cachetools psutil regex pyyaml
    blake3 cbor2 cloudpickle py-cpuinfo sentencepiece safetensors huggingface_hub urllib3 aiohttp requests
    pybase64 prometheus_client partial-json-parser xgrammar llguidance watchfiles orjson einops)
deps_for() {
    case "$1" in
        0.11.2) echo "transformers<5,>=4.56.0 lm-format-enforcer==0.11.3 model-hosting-container-standards diskcache gguf
                     prometheus-fastapi-instrumentator python-multipart" ;;
        0.33.0) echo "transformers<5.21.0,>=5.16.1" ;;
        *) echo "transformers" ;;
    esac
}

for V in "${VERSIONS[@]}"; do
    VENV="$ORACLE_HOME/vllm-$V"
    if [[ "$(cat "$VENV/.ready" 2>/dev/null)" == "$STAMP_REV" ]]; then
        log "vllm $V venv ready"
        continue
    fi
    log "creating vllm $V venv in $VENV"
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV"
    SP="$(site_packages "$VENV")"
    echo "$BASE_SP" >"$SP/zz_logsleuth_oracle_base.pth"  # share torch instead of 1.9 GB per version
    pip_in "$VENV" --no-deps "vllm==$V"
    # The wheel's CUDA kernels (~650 MB) cannot load beside CPU torch and validation never calls them.
    find "$SP/vllm" -name '*.so' -size +1M -delete
    LOCK=()
    if [[ -f "$HERE/lock-$V.txt" && -z "${LOGSLEUTH_ORACLE_UNLOCKED:-}" ]]; then LOCK=(-c "$HERE/lock-$V.txt"); fi
    # shellcheck disable=SC2046
    pip_in "$VENV" "${LOCK[@]}" "${COMMON_DEPS[@]}" $(deps_for "$V")
    cp "$HERE/oracle_hook.py" "$SP/logsleuth_oracle_vllm_hook.py"
    echo 'import os; os.environ.get("LOGSLEUTH_ORACLE_STOP") and __import__("logsleuth_oracle_vllm_hook").install()' \
        >"$SP/logsleuth_oracle_vllm_hook.pth"
    LOGSLEUTH_ORACLE_STOP=1 "$VENV/bin/python" -c 'import vllm.engine.arg_utils as a; print("vllm", a.__file__)'
    echo "$STAMP_REV" >"$VENV/.ready"
done

# Keep the hook current even in ready venvs (edits to oracle_hook.py take effect at once).
for V in "${VERSIONS[@]}"; do
    SP="$(site_packages "$ORACLE_HOME/vllm-$V")"
    cmp -s "$HERE/oracle_hook.py" "$SP/logsleuth_oracle_vllm_hook.py" || cp "$HERE/oracle_hook.py" "$SP/logsleuth_oracle_vllm_hook.py"
done
log "done: $ORACLE_HOME"
