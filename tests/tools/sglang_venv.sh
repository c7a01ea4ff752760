#!/usr/bin/env bash
# Prepare what tests/tools/sglang_agreement.py runs SGLang with: the 0.5.11 and 0.5.23 wheels unpacked, and a
# Python (3.11, like the wheels) with torch and the light packages SGLang's argument processing imports.
# GPU-only packages (sgl_kernel, flashinfer, tvm_ffi) are not installed: the script stubs them.
# Usage: tests/tools/sglang_venv.sh [DIR]   (default /tmp/sglang-agreement; about 6 GB, mostly torch)
set -euo pipefail
DIR=${1:-/tmp/sglang-agreement}
PY=${PYTHON:-python3.11}
mkdir -p "$DIR/wheels"
for version in 0.5.11 0.5.23; do
    pip download --quiet --no-deps "sglang==$version" -d "$DIR/wheels"
    short=${version//./}
    rm -rf "$DIR/u${short:1}"
    unzip -q -o "$DIR"/wheels/sglang-"$version"-*.whl -d "$DIR/u${short:1}"
done
[ -x "$DIR/venv/bin/python" ] || "$PY" -m venv "$DIR/venv"
# 0.5.11 pins transformers 5.6.0. torch and torchvision pinned as a pair that import together (a CUDA build;
# pip on Python 3.11 finds both on some machines' local index, elsewhere about 3 GB to download).
"$DIR/venv/bin/pip" install --quiet torch==2.14.1 torchvision==0.29.1 triton numpy msgspec pydantic psutil requests packaging \
    pillow tqdm einops orjson pyzmq sentencepiece pybase64 starlette IPython aiohttp openai partial_json_parser \
    dill compressed-tensors gguf pynvml "transformers==5.6.0"
# 0.5.23 pins transformers 5.19.0 (and its tokenizers): kept apart, put first on its sys.path (--extra-path).
"$DIR/venv/bin/pip" install --quiet --no-deps --target "$DIR/tf519" "transformers==5.19.0" \
    "tokenizers>=0.23.1,<0.24" huggingface_hub
echo "prepared $DIR: GDN_SGLANG_DIR=$DIR .venv/bin/pytest tests/sglang/test_agreement_tool.py"
