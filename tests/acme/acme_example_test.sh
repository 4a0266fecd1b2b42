#!/usr/bin/env bash
# The out-of-tree plugin example, end to end: install the core into a temporary prefix, move
# the installed tree (nothing may point back at where it was built or installed), build
# examples/acme_plugin against it with find_package(tileops), drop the plugin into a fresh
# plugin directory, and run the example application's checks: detection, OpNotAvailableError
# for an op acme does not build, default_target from a config file, and builtin. Last, a plugin
# using a function nothing defines (tests/acme/unresolved_plugin) must fail to link: plugins are
# linked with --no-undefined, so that the failure is the build's and not the load's.
# Usage: acme_example_test.sh <tileops build dir> <source dir>
set -euo pipefail
build_dir=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake --install "$build_dir" --prefix "$work/installed" > "$work/install.log"
mv "$work/installed" "$work/moved"
cmake -S "$source_dir/examples/acme_plugin" -B "$work/acme" -G Ninja -DCMAKE_PREFIX_PATH="$work/moved" \
  -DCMAKE_BUILD_TYPE=Release > "$work/configure.log"
cmake --build "$work/acme" > "$work/build.log"
mkdir -p "$work/plugins"
cp "$work/acme/libtileops_acme.so" "$work/plugins/"

export TILEOPS_PLUGIN_PATH="$work/plugins"
unset TILEOPS_DEFAULT_TARGET TILEOPS_CONFIG
"$work/acme/acme_demo"

printf 'default_target = acme\n' > "$work/tileops.conf"
TILEOPS_CONFIG="$work/tileops.conf" "$work/acme/acme_demo" --default-acme

# The relocated tileops program sees the plugin too, and checks an op on acme tensors against
# the reference kernels run on host copies.
# Outputs are read whole before grep -q: it stops at the first match, and under pipefail the
# writer's SIGPIPE would fail the script.
grep -q "acme" <<< "$("$work/moved/bin/tileops" targets)"
cmake -S "$source_dir/tests/acme/unresolved_plugin" -B "$work/unresolved" -G Ninja \
  -DCMAKE_PREFIX_PATH="$work/moved" > "$work/unresolved.log"
if cmake --build "$work/unresolved" >> "$work/unresolved.log" 2>&1; then
  echo "a plugin using an undefined function linked: tileops_add_plugin must pass --no-undefined" >&2
  exit 1
fi
grep -q "undefined reference to .defined_nowhere" "$work/unresolved.log"
checked=$("$work/moved/bin/tileops" run RMSNormFwdOp -p normalized_shape=[64] -i x=[4,64]:float32 \
  -i weight=[64]:float32 --device acme:0 --check -r 1)
grep -q "check:    y max abs .*PASS" <<< "$checked"
# bench prints each row as it completes: grep reads them all (grep -q would close the pipe early).
"$work/moved/bin/tileops" bench RMSNormFwdOp --device acme:0 --cap 16 -r 1 --peak-gflops 10 | grep "RMSNormFwdOp .* target" > /dev/null
echo "acme example: all checks passed"
