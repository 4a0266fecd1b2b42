#!/usr/bin/env bash
# The rocm build's wavefront size check (plugins/rocm/wave_size_check.sh) on a small kernel:
# it passes code objects of the width their target runs (gfx90a wave64, gfx1030 wave32) and
# fails, naming the object and the target, a gfx1030 code object compiled for wave64.
# Usage: wave_size_check_test.sh HIPCC CLANG_OFFLOAD_BUNDLER LLVM_READELF WAVE_SIZE_CHECK
set -euo pipefail

hipcc=$1
bundler=$2
readelf=$3
check=$4

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# No HIP headers: they refuse wave64 on gfx10, which the second object needs. The kernel's
# host stub needs only the declaration of hipLaunchKernel.
cat > "$work/kernel.hip" <<'KERNEL'
struct dim3 {
  unsigned x, y, z;
};
using hipStream_t = struct ihipStream_t*;
extern "C" int hipLaunchKernel(const void*, dim3, dim3, void**, unsigned long, hipStream_t);
extern "C" __attribute__((global)) void lanes(int* out) { *out = __AMDGCN_WAVEFRONT_SIZE; }
KERNEL

compile() {
  local object=$1
  shift
  "$hipcc" -x hip -nogpuinc "$@" -c "$work/kernel.hip" -o "$work/$object" 2> "$work/hipcc.log" ||
    { cat "$work/hipcc.log"; echo "FAIL: hipcc $* did not compile the test kernel"; exit 1; }
}

compile native.o --offload-arch=gfx90a --offload-arch=gfx1030
bash "$check" "$bundler" "$readelf" "$work/native.o" gfx90a gfx1030 ||
  { echo "FAIL: the check refused code objects of their targets' own widths"; exit 1; }

compile wave64.o --offload-arch=gfx1030 -mwavefrontsize64
if bash "$check" "$bundler" "$readelf" "$work/wave64.o" gfx1030 2> "$work/check.log"; then
  echo "FAIL: the check passed a wave64 code object for gfx1030"
  exit 1
fi
grep -q "wave64.o: the code object for gfx1030 has wavefront size 64, expected 32" "$work/check.log" ||
  { cat "$work/check.log"; echo "FAIL: the check's message does not name the object, the target and both sizes"; exit 1; }

if bash "$check" "$bundler" "$readelf" "$work/native.o" gfx908 2> "$work/check.log"; then
  echo "FAIL: the check passed an object without a code object for gfx908"
  exit 1
fi
grep -q "native.o has no code object for gfx908" "$work/check.log" ||
  { cat "$work/check.log"; echo "FAIL: the check's message does not name the missing target"; exit 1; }
echo "wave_size_check: passes gfx90a (64) and gfx1030 (32), refuses a wave64 gfx1030 object and a missing target"
