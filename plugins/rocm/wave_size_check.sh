#!/usr/bin/env bash
# Checks that every code object a HIP object file carries runs its kernels in the wavefront
# size the device of its target reports (hipDeviceProp_t::warpSize), which the host's launch
# geometry takes: 64 on the processors of three digits (GCN, CDNA: gfx906 to gfx942), 32 on
# those of four (RDNA: gfx1030 on, compiled for wave32 unless -mwavefrontsize64). Reads the
# AMDGPU metadata's .wavefront_size of each kernel in the code object the offload bundle holds
# for each target.
# Usage: wave_size_check.sh CLANG_OFFLOAD_BUNDLER LLVM_READELF OBJECT TARGET...
set -euo pipefail

bundler=$1
readelf=$2
object=$3
shift 3
[ $# -gt 0 ] || { echo "wave_size_check: no offload targets given" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
objcopy -O binary --only-section=.hip_fatbin "$object" "$work/bundle"
[ -s "$work/bundle" ] || { echo "FAIL: $object has no .hip_fatbin section" >&2; exit 1; }
bundled=$("$bundler" --list --type=o --input="$work/bundle")

failures=0
for target in "$@"; do
  processor=${target%%:*}
  if [[ ! $processor =~ ^gfx[0-9a-f]{3,4}$ ]]; then
    echo "FAIL: '$target' is not an AMD GPU target such as gfx90a" >&2
    failures=$((failures + 1))
    continue
  fi
  expected=64
  [ ${#processor} -eq 7 ] && expected=32
  id=$(grep -xF -e "hipv4-amdgcn-amd-amdhsa--$target" -e "hip-amdgcn-amd-amdhsa--$target" <<< "$bundled" || true)
  if [ -z "$id" ]; then
    echo "FAIL: $object has no code object for $target" >&2
    failures=$((failures + 1))
    continue
  fi
  "$bundler" --unbundle --type=o --input="$work/bundle" --targets="$id" --output="$work/code.o"
  sizes=$("$readelf" --notes "$work/code.o" | awk '$1 == ".wavefront_size:" {print $2}' | sort -u | tr '\n' ' ')
  sizes=${sizes% }
  if [ -z "$sizes" ]; then
    echo "FAIL: $object: the code object for $target names no kernel's wavefront size" >&2
    failures=$((failures + 1))
  elif [ "$sizes" != "$expected" ]; then
    echo "FAIL: $object: the code object for $target has wavefront size $sizes, expected $expected" >&2
    failures=$((failures + 1))
  fi
done
[ "$failures" -eq 0 ]
