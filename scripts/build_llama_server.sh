#!/usr/bin/env bash
# Build llama.cpp's C++ `llama-server` from the source vendored in the PyPI sdist of
# llama-cpp-python (nothing else is downloaded: no model, no UI, no OpenSSL), and cache the
# binary outside the repository, keyed by version and build flavour, so only the first set-up compiles.
#
#   scripts/build_llama_server.sh            # CPU build; prints the binary's path
#   LLAMA_CUDA=1 scripts/build_llama_server.sh --src DIR   # CUDA build (H200) from an unpacked tree
set -euo pipefail
VERSION="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
FLAVOUR="cpu"; [ "${LLAMA_CUDA:-0}" = "1" ] && FLAVOUR="cuda"
CACHE="${BENCHBOOK_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/benchbook}"
OUT="$CACHE/llama-server/$VERSION-$FLAVOUR"
BIN="$OUT/bin/llama-server"
SRC=""
while [ $# -gt 0 ]; do
  case "$1" in
    --src) SRC="$2"; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
if [ -x "$BIN" ] && "$BIN" --version >/dev/null 2>&1; then echo "$BIN"; exit 0; fi
mkdir -p "$CACHE"
PY="${PYTHON:-python3}"
if [ -z "$SRC" ]; then
  work="$CACHE/src/$VERSION"
  if [ ! -f "$work/CMakeLists.txt" ]; then
    dl=$(mktemp -d)
    echo "fetching the llama-cpp-python==$VERSION sdist" >&2
    "$PY" -m pip download --quiet --no-deps --no-binary :all: --no-build-isolation "llama-cpp-python==$VERSION" -d "$dl" >&2 \
      || "$PY" -m pip download --quiet --no-deps --no-binary :all: "llama-cpp-python==$VERSION" -d "$dl" >&2
    rm -rf "$work.tmp"; mkdir -p "$work.tmp"
    tar -xzf "$dl"/llama_cpp_python-"$VERSION".tar.gz -C "$work.tmp" --strip-components=3 \
      "llama_cpp_python-$VERSION/vendor/llama.cpp"
    rm -rf "$work"; mv "$work.tmp" "$work"; rm -rf "$dl"
  fi
  SRC="$work"
fi
jobs="$(nproc 2>/dev/null || echo 2)"
extra=()
if [ "$FLAVOUR" = "cuda" ]; then extra+=(-DGGML_CUDA=ON "-DCMAKE_CUDA_ARCHITECTURES=${CUDA_ARCH:-90}"); fi
build="$CACHE/build/$VERSION-$FLAVOUR"
echo "building llama-server ($FLAVOUR) in $build with $jobs jobs" >&2
cmake -S "$SRC" -B "$build" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF \
  -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_OPENSSL=OFF \
  -DLLAMA_CURL=OFF -DBUILD_SHARED_LIBS=OFF "${extra[@]}" >&2
cmake --build "$build" --target llama-server -j "$jobs" >&2
mkdir -p "$OUT/bin"
cp "$build/bin/llama-server" "$BIN.tmp" && mv "$BIN.tmp" "$BIN"
"$BIN" --version >&2 || true
echo "$BIN"
