#!/usr/bin/env bash
# The install tree: what `cmake --install` puts where, and that both packages it ships (CMake's
# tileopsConfig.cmake and pkg-config's tileops.pc) build a consumer that runs.
# Usage: install_tree_test.sh <tileops build dir> <source dir>
set -euo pipefail
build_dir=$1
source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "install tree: $*" >&2; exit 1; }

prefix="$work/prefix"
cmake --install "$build_dir" --prefix "$prefix" > "$work/install.log"
libdir=$(sed -n "s/^CMAKE_INSTALL_LIBDIR:PATH=//p" "$build_dir/CMakeCache.txt")

# Headers: include/tileops/ only, and no empty folders anywhere.
[ "$(ls "$prefix/include")" = "tileops" ] || fail "include/ holds $(ls "$prefix/include" | tr '\n' ' '), expected tileops only"
empty=$(find "$prefix" -type d -empty)
[ -z "$empty" ] || fail "empty folders installed: $empty"
# The application API in include/tileops/, the extension API (plugins, kernels, device runtimes)
# in include/tileops/extend/. Each header compiles on its own from the install tree, so that none
# includes an internal one, and none includes spdlog or names its types.
[ -f "$prefix/include/tileops/extend/plugin.hpp" ] || fail "include/tileops/extend/plugin.hpp is not installed"
spdlog_headers=$(grep -rlE 'spdlog/|spdlog::' "$prefix/include" || true)
[ -z "$spdlog_headers" ] || fail "installed headers name spdlog: $spdlog_headers"
find "$prefix/include" -name '*.hpp' -printf '%P\n' | sort |
  xargs -P "$(nproc)" -I{} sh -c 'echo "#include \"$1\"" | c++ -std=c++20 -fsyntax-only -I"$2" -x c++ - ||
    { echo "include/$1 does not compile on its own" >&2; exit 1; }' _ {} "$prefix/include" ||
  fail "installed headers that do not compile on their own (above)"
# The C API's header compiles as C on its own.
echo '#include "tileops/c_api.h"' | cc -std=c11 -Wall -Wextra -Werror -fsyntax-only -I"$prefix/include" -x c - ||
  fail "include/tileops/c_api.h does not compile as C"
# Programs: tileops and the op generator tileops_add_ops() runs (the demos embed_llama_layer and
# embed_llama_block are not installed).
[ "$(ls "$prefix/bin" | tr '\n' ' ')" = "tileops tileops-opgen " ] ||
  fail "bin/ holds $(ls "$prefix/bin" | tr '\n' ' '), expected tileops tileops-opgen"

# The exported target: its include directory once, and no spdlog or fmt in its interface.
targets="$prefix/$libdir/cmake/tileops/tileopsTargets.cmake"
includes=$(grep 'INTERFACE_INCLUDE_DIRECTORIES' "$targets")
[ "$(grep -o 'include' <<< "$includes" | wc -l)" -eq 1 ] || fail "the include directory is listed more than once: $includes"
if grep -q 'spdlog\|fmt::' "$targets"; then fail "the exported target names spdlog or fmt"; fi

# The CMake package: 0.1 is accepted, 0.0.1 and 1.0 are not (SameMinorVersion), and a consumer
# builds and runs with the tree moved and spdlog unfindable.
mv "$prefix" "$work/moved"
prefix="$work/moved"
cmake -S "$source_dir/tests/install/consumer" -B "$work/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_DISABLE_FIND_PACKAGE_spdlog=ON > "$work/consumer.log" || { cat "$work/consumer.log" >&2; fail "the consumer did not configure"; }
cmake --build "$work/consumer" >> "$work/consumer.log" || { cat "$work/consumer.log" >&2; fail "the consumer did not build"; }
"$work/consumer/consumer" > /dev/null || fail "the CMake consumer ran wrong"
for refused in 0.0.1 1.0; do
  if cmake -S "$source_dir/tests/install/consumer" -B "$work/refused-$refused" -DCMAKE_PREFIX_PATH="$prefix" \
       -DTILEOPS_REQUESTED_VERSION=$refused > "$work/refused.log" 2>&1; then
    fail "find_package(tileops $refused) accepted version 0.1"
  fi
  grep -q 'version: 0.1' "$work/refused.log" || fail "find_package(tileops $refused) failed for another reason: $(cat "$work/refused.log")"
done

# The Python package finds the moved library relative to itself.
python_dir="$prefix/lib/python3/dist-packages"
[ -f "$python_dir/tileops/_location.py" ] || fail "the Python package is not in lib/python3/dist-packages"
version=$(env -u TILEOPS_LIBRARY PYTHONPATH="$python_dir" python3 -c 'import tileops; print(tileops.__version__)') ||
  fail "the installed Python package does not import from the moved tree"
[ "$version" = "$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build_dir/CMakeCache.txt")" ] ||
  fail "the installed Python package reports version $version"
# Its C half, where the build made one, is installed beside it and loads.
if [ -f "$build_dir/python/tileops/_fastcall.abi3.so" ]; then
  env -u TILEOPS_LIBRARY PYTHONPATH="$python_dir" python3 -c 'import tileops._fastcall' ||
    fail "the installed Python package's C half (tileops._fastcall) does not load"
fi

# pkg-config: the same consumer, compiled with the flags tileops.pc gives.
export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"
[ "$(pkg-config --modversion tileops)" = "$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build_dir/CMakeCache.txt")" ] ||
  fail "tileops.pc has version $(pkg-config --modversion tileops)"
# The flags alone suffice: C++20 and the run-time path of the library come with them.
# shellcheck disable=SC2046
c++ "$source_dir/tests/install/consumer/consumer.cpp" -o "$work/pc_consumer" $(pkg-config --cflags --libs tileops)
"$work/pc_consumer" > /dev/null || fail "the pkg-config consumer ran wrong"
echo "install tree: all checks passed"
