#!/usr/bin/env bash
# Installs what is needed, builds and runs every test suite with CTest. Arguments go to CMake's
# configure step (scripts/build.sh), e.g. -DTILEOPS_CUDA_ARCHS=90a.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh "$@"
build_dir=${TILEOPS_BUILD_DIR:-build}
ctest --test-dir "$build_dir" --output-on-failure --parallel "$(nproc)"
