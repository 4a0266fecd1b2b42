#!/usr/bin/env bash
# Configures and builds tileops into ./build (Release with debug info, Ninja). Extra arguments
# go to CMake's configure step, e.g. -DTILEOPS_SANITIZE=address.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${TILEOPS_BUILD_DIR:-build}
cmake -S . -B "$build_dir" -G Ninja "$@"
cmake --build "$build_dir" --parallel "$(nproc)"
