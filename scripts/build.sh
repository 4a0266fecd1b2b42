#!/usr/bin/env bash
# Configures and builds tileops into ./build (Release with debug info, Ninja). With the first
# argument `main`, builds only what the main job runs (the core, the cpu plugin and the
# example); everything else is built by the test command. Other arguments go to CMake's
# configure step, e.g. -DTILEOPS_SANITIZE=address.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${TILEOPS_BUILD_DIR:-build}
targets=()
if [ "${1:-}" = main ]; then
  shift
  targets=(--target embed_llama_layer tileops_cpu)
fi
cmake -S . -B "$build_dir" -G Ninja "$@"
cmake --build "$build_dir" --parallel "$(nproc)" "${targets[@]}"
