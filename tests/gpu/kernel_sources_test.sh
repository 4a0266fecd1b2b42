#!/usr/bin/env bash
# Checks that a GPU plugin holds the kernels of the shared sources (plugins/gpu_common):
# every __global__ function of every source has a host-side symbol (the launch stub) in the
# plugin, and the plugin carries device code: for cuda an .nv_fatbin section, for hip an
# .hip_fatbin section with one offload bundle per source for each offload target.
# Usage: kernel_sources_test.sh cuda PLUGIN.so SOURCE...
#        kernel_sources_test.sh hip PLUGIN.so ARCH[,ARCH...] SOURCE...
set -euo pipefail

vendor=$1
plugin=$2
shift 2
archs=""
if [ "$vendor" = hip ]; then
  archs=$1
  shift
fi
[ $# -gt 0 ] || { echo "FAIL: no kernel sources given"; exit 1; }
[ -f "$plugin" ] || { echo "FAIL: $plugin does not exist"; exit 1; }

failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

symbols=$(nm -C --defined-only "$plugin")
kernels=0
for source in "$@"; do
  names=$(tr '\n' ' ' < "$source" | grep -oE '__global__ void +(__launch_bounds__\([A-Za-z0-9_,<> ]+\) +)?[A-Za-z_][A-Za-z0-9_]*' |
    awk '{print $NF}' | sort -u || true)
  [ -n "$names" ] || fail "$source declares no __global__ function"
  for name in $names; do
    kernels=$((kernels + 1))
    grep -qE "::(__device_stub__)?${name}[<(]" <<< "$symbols" || fail "$(basename "$plugin") has no symbol of kernel $name ($source)"
  done
done

case "$vendor" in
  cuda)
    # The section list is read whole first: grep -q would stop reading at the first match, and
    # under pipefail readelf's SIGPIPE would fail the check.
    sections=$(readelf -S -W "$plugin")
    grep -q ' \.nv_fatbin ' <<< "$sections" || fail "$(basename "$plugin") has no .nv_fatbin section"
    ;;
  hip)
    bundles=$(mktemp)
    trap 'rm -f "$bundles"' EXIT
    objcopy -O binary --only-section=.hip_fatbin "$plugin" "$bundles"
    [ -s "$bundles" ] || fail "$(basename "$plugin") has no .hip_fatbin section"
    IFS=, read -r -a arch_list <<< "$archs"
    for arch in "${arch_list[@]}"; do
      count=$(grep -aoE "hip(v4)?-amdgcn-amd-amdhsa--${arch}(:[a-z+-]+)*" "$bundles" | wc -l || true)
      [ "$count" -eq $# ] || fail "$(basename "$plugin") has $count code objects for $arch, expected one per source ($#)"
    done
    ;;
  *)
    fail "unknown vendor '$vendor' (expected cuda or hip)"
    ;;
esac

if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "$(basename "$plugin"): $kernels kernels of $# shared sources present${archs:+, device code for $archs}"
