#!/usr/bin/env bash
# Installs, with apt-get, exactly the Debian 12 packages the build and the tests need; with
# the argument `main`, only those the main job's build needs (no HIP, no clang: the GPU plugins
# and the fuzzers are built by the test command).
# Idempotent: packages already present are left alone and nothing is fetched when all are.
set -euo pipefail

profile=${1:-all}
case "$profile" in
  all | main) ;;
  *) echo "install-deps: unknown profile '$profile' (expected main, or nothing for everything)" >&2; exit 2 ;;
esac

packages=(
  build-essential cmake ninja-build pkg-config
  libboost-dev libboost-program-options-dev
  libspdlog-dev libfmt-dev doctest-dev libyaml-cpp-dev libdlpack-dev
  nlohmann-json3-dev libopenblas-dev libbenchmark-dev
  # libcsv: the CSV writer of `tileops bench --csv`
  libcsv-dev
)
test_packages=(
  # The Python package: its C half's headers; its tests: PyTorch 1.13 (CPU) and NumPy
  python3-dev python3-torch python3-numpy
  # libtorch 1.13 (C++, CPU): the torch interop example's test and the anchor benchmarks
  # (bench/torch_overhead_bench, bench/attention_cpu_bench)
  libtorch-dev
  # The rocm plugin: HIP 5.2's kernel compiler (clang 15 with the AMD GPU device libraries)
  # and its runtime's headers and library; about 340 MiB installed, 26 packages.
  hipcc libamdhip64-dev
  # clang 16 and its libFuzzer runtime, for scripts/fuzz.sh
  clang-16 libclang-rt-16-dev
)

if [ "$profile" = all ]; then packages+=("${test_packages[@]}"); fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
echo "install-deps: installing ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
