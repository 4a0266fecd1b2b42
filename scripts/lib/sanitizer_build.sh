# Sourced by scripts/sanitize.sh and scripts/fuzz.sh: configures one instrumented build tree.
# configure_sanitizer_build <kind> <build-dir> configures <build-dir> for TILEOPS_SANITIZE=<kind>.
# The address,undefined tree is compiled by clang 16 with the libFuzzer targets in it, so the
# sanitizer suite and the fuzz campaigns share one instrumented build of the core (and clang
# compiles the whole tree, GCC the main and thread trees). Every tree is -O1 with line tables:
# instrumented code fast enough to test, compiled quickly, readable traces. GPU device code cannot
# be instrumented and the GPU tests skip on CI machines: no GPU plugins, no benchmarks.
configure_sanitizer_build() {
  local kind=$1 build_dir=$2
  local args=(-G Ninja -DTILEOPS_SANITIZE="$kind" -DTILEOPS_BUILD_BENCH=OFF -DTILEOPS_WITH_CUDA=OFF
    -DTILEOPS_WITH_ROCM=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1"
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1")
  if [ "$kind" = address,undefined ]; then
    args+=(-DCMAKE_C_COMPILER=clang-16 -DCMAKE_CXX_COMPILER=clang++-16 -DTILEOPS_BUILD_FUZZERS=ON)
  fi
  if command -v ccache >/dev/null; then
    args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  fi
  cmake -S . -B "$build_dir" "${args[@]}"
}
