#!/usr/bin/env bash
# Build the cached "oracle" virtualenvs that run the REAL SGLang argument validation on a CPU-only machine.
#
# Layout under ${LOGSLEUTH_ORACLE_HOME:-$HOME/.cache/logsleuth/oracle}:
#   base/                 torch 2.13.0 CPU + torchvision (shimmed) + triton, shared by all versions
#   sglang-<version>/     sglang --no-deps + only what its argument-handling import path needs;
#                         a .pth adds base/'s site-packages, another .pth loads the stop hook
#   models/tiny-llama/    config.json only (LlamaForCausalLM)
#   models/tiny-eagle3/   config.json only (LlamaForCausalLMEagle3 draft)
#   models/tiny-lora/     adapter_config.json only (a LoRA adapter for tiny-llama)
# Each step writes a stamp file when it finished, so a re-run on a set-up home takes seconds.
# See /work/shared/reference/SGLANG-ORACLE.md for why each package and shim is here.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ORACLE_HOME="${LOGSLEUTH_ORACLE_HOME:-$HOME/.cache/logsleuth/oracle}"
PYTHON="${LOGSLEUTH_ORACLE_PYTHON:-python3.11}"
VERSIONS=("${@:-0.4.10.post2 0.5.9 0.5.23}")
# shellcheck disable=SC2206
VERSIONS=(${VERSIONS[*]})
STAMP_REV=1  # bump to force a rebuild when this script's recipe changes

mkdir -p "$ORACLE_HOME"
CONSTRAINTS="$ORACLE_HOME/constraints.txt"
# Pinning torch keeps pip from replacing the local CPU wheel by a multi-GB CUDA build (it tries through
# torchvision and anything depending on vllm); the others are the versions known to import here.
cat >"$CONSTRAINTS" <<'EOF'
torch==2.13.0
torchvision==0.28.0
triton==3.8.0
EOF

log() { printf '[oracle-setup %s] %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

site_packages() {  # $1 = venv dir
    "$1/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'
}

pip_in() {  # $1 = venv dir, rest = pip args
    local venv="$1"; shift
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -c "$CONSTRAINTS" "$@"
}

# ---------------------------------------------------------------- base venv with torch
BASE="$ORACLE_HOME/base"
if [[ "$(cat "$BASE/.ready" 2>/dev/null)" != "$STAMP_REV" ]]; then
    log "creating torch base venv in $BASE"
    rm -rf "$BASE"
    "$PYTHON" -m venv "$BASE"
    pip_in "$BASE" torch==2.13.0
    # --no-deps: torchvision and triton would otherwise ask for a (CUDA) torch of their own.
    pip_in "$BASE" --no-deps torchvision==0.28.0 triton==3.8.0
    pip_in "$BASE" numpy pillow  # torchvision imports both
    BASE_SP="$(site_packages "$BASE")"
    # PyPI's torchvision is a CUDA build that fails to import beside CPU torch
    # ("operator torchvision::nms does not exist"); SGLang only needs a constant from it.
    rm -f "$BASE_SP"/torchvision/_C*.so
    "$BASE/bin/python" "$HERE/shim_torchvision.py" "$BASE_SP/torchvision/_meta_registrations.py"
    "$BASE/bin/python" -c 'import torch, torchvision; print("torch", torch.__version__, "torchvision ok")'
    echo "$STAMP_REV" >"$BASE/.ready"
else
    log "base venv ready"
fi
BASE_SP="$(site_packages "$BASE")"

# ---------------------------------------------------------------- per-version venvs
COMMON_DEPS=(ipython pydantic aiohttp safetensors orjson pyzmq packaging pillow psutil pybase64 starlette dill
    sentencepiece compressed-tensors huggingface-hub)
deps_for() {  # extra packages per SGLang version (SGLANG-ORACLE.md "Packages")
    case "$1" in
        0.4.10.post2) echo "transformers==4.54.1 fastapi setproctitle" ;;
        0.5.9) echo "transformers==4.57.1 openai partial-json-parser gguf" ;;
        0.5.23) echo "transformers==5.19.0 openai msgspec apache-tvm-ffi gguf" ;;
        *) echo "transformers" ;;
    esac
}

for V in "${VERSIONS[@]}"; do
    VENV="$ORACLE_HOME/sglang-$V"
    if [[ "$(cat "$VENV/.ready" 2>/dev/null)" == "$STAMP_REV" ]]; then
        log "sglang $V venv ready"
        continue
    fi
    log "creating sglang $V venv in $VENV"
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV"
    SP="$(site_packages "$VENV")"
    # Share torch instead of installing 1.9 GB per version; pip sees it as installed through this path.
    echo "$BASE_SP" >"$SP/zz_logsleuth_oracle_base.pth"
    pip_in "$VENV" --no-deps "sglang==$V"
    # lock-<version>.txt pins every dependency to what produced the committed fixtures, so a rebuild
    # months later imports the same code paths; LOGSLEUTH_ORACLE_UNLOCKED=1 resolves afresh instead.
    LOCK=()
    if [[ -f "$HERE/lock-$V.txt" && -z "${LOGSLEUTH_ORACLE_UNLOCKED:-}" ]]; then LOCK=(-c "$HERE/lock-$V.txt"); fi
    # shellcheck disable=SC2046
    pip_in "$VENV" "${LOCK[@]}" "${COMMON_DEPS[@]}" $(deps_for "$V")
    # The stop-after-validation hook: inert unless LOGSLEUTH_ORACLE_STOP is set.
    cp "$HERE/oracle_hook.py" "$SP/logsleuth_oracle_hook.py"
    echo 'import os, sys; os.environ.get("LOGSLEUTH_ORACLE_STOP") and __import__("logsleuth_oracle_hook").install()' \
        >"$SP/logsleuth_oracle_hook.pth"
    LOGSLEUTH_ORACLE_STOP=1 "$VENV/bin/python" -c \
        'import sglang.srt.server_args as s; print("sglang", s.__file__)'
    echo "$STAMP_REV" >"$VENV/.ready"
done

# Keep the hook current even in ready venvs (cheap, and edits to oracle_hook.py take effect at once).
for V in "${VERSIONS[@]}"; do
    SP="$(site_packages "$ORACLE_HOME/sglang-$V")"
    cmp -s "$HERE/oracle_hook.py" "$SP/logsleuth_oracle_hook.py" || cp "$HERE/oracle_hook.py" "$SP/logsleuth_oracle_hook.py"
done

# ---------------------------------------------------------------- tiny model dirs (config.json only)
"$PYTHON" "$HERE/make_models.py" "$ORACLE_HOME/models"
log "done: $ORACLE_HOME"
