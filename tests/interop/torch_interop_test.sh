#!/usr/bin/env bash
# examples/torch_interop built against the installed core and run, when Debian's libtorch-dev
# is installed; otherwise the test is reported as skipped (exit 77).
# Usage: torch_interop_test.sh <tileops build dir> <source dir>
set -euo pipefail
build_dir=$1
source_dir=$2
if ! dpkg-query -W -f='${Status}' libtorch-dev 2>/dev/null | grep -q "install ok installed"; then
  echo "SKIPPED: libtorch-dev is not installed; the torch interop example needs it"
  exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build_dir" --prefix "$work/prefix" > "$work/install.log"
cmake -S "$source_dir/examples/torch_interop" -B "$work/example" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_BUILD_TYPE=Release > "$work/configure.log"
cmake --build "$work/example" > "$work/build.log"
"$work/example/torch_interop"
