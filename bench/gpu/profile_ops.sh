#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, over a build packed into .dev (as
# run_on_device.sh): Nsight Compute's speed-of-light, occupancy, warp-state and memory sections of
# one launch of each named kernel, as gpu_op_bench calls it. Writes $OUT/ncu_<op>.txt per pair.
#   bench/gpu/profile_ops.sh OP:KERNEL_REGEX [OP:KERNEL_REGEX ...]
# OP is a gpu_op_bench case name (rms_norm, gelu_tanh, ...); KERNEL_REGEX matches the demangled
# kernel name, e.g. 'row_norm_in_registers<tileops::gpu::f16' for the float16 launch.
set -uo pipefail
cd "$(dirname "$0")/../.."
dev=${TILEOPS_DEV_DIR:-.dev}
out=${OUT:?OUT must name the folder for the results}
export LD_LIBRARY_PATH=$PWD/$dev/sys:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export TILEOPS_LIBRARY=$PWD/$dev/lib/libtileops.so.0
status=0
for pair in "$@"; do
  op=${pair%%:*}
  kernel=${pair#*:}
  ncu --clock-control none --kernel-name-base demangled --kernel-name "regex:$kernel" --launch-skip 5 \
    --launch-count 1 --section SpeedOfLight --section Occupancy --section WarpStateStats \
    --section LaunchStats --section MemoryWorkloadAnalysis "$dev/bin/gpu_op_bench" "$op" \
    >"$out/ncu_$op.txt" 2>&1 || status=1
  grep -E "Duration|Memory Throughput|DRAM Throughput|Compute \(SM\)|Achieved Occupancy|Registers Per|Warp Cycles Per Issued|Block Size|Grid Size" \
    "$out/ncu_$op.txt" | sed "s/^/$op: /"
done
exit $status
