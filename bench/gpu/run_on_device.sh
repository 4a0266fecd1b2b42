#!/usr/bin/env bash
# Runs on the GPU machine (through the device tool), from the repository root, over a build
# packed into .dev by ../shared/tools/pack-for-device.sh: the GPU test cases, the main job on
# the GPU, then the benchmarks beside PyTorch. Logs and tables go to $OUT:
#   gpu.txt          the GPU and its clocks before the runs
#   gpu_tests.log    the doctest output of every "GPU: ..." case
#   embed.log        embed_llama_block --device cuda:0 (the Llama-3.1-8B block, checked)
#   layer.log        embed_llama_layer --device cuda:0 (the whole decoder layer: prefill, decode
#                    steps, decode steps replayed from a device graph, checked)
#   attention.md     the attention kernels against PyTorch's SDPA (attention_vs_torch.py);
#                    attention.json its figures
#   layer_bench.md   the decoder layer (2048-token prefill, decode steps of 1 and of 32
#                    sequences) against the same layer in PyTorch, eager and as a CUDA graph
#                    (layer_vs_torch.py)
#   gpu_bench.md     the memory-bound op table; gpu_bench.json its figures
#   block_bench.md   the GEMM and Llama block table; block_bench.json its figures
#   python_gpu.log   the Python package's GPU tests (tests/python/test_gpu.py: torch.compile of
#                    every boundary operator, reduce-overhead, dynamic shapes, streams, opcheck)
#   python_bench.md  host time per call from Python and the Llama block under torch.compile;
#                    python_bench.json its figures
#   families.md      FusedMoEFwdOp against PyTorch's per-expert loop and torch._grouped_mm, pooling
#                    and RoPE against torch (families_vs_torch.py)
#   row_ops.md       the memory-bound kernels alone against a same-size copy, at the block shapes
#                    their launchers choose among (row_ops_harness)
#   row_ops_profile.txt  with --row-ops where ncu is present: the row kernels' profile (throughput,
#                    occupancy, warp stalls, instruction mix) at [16384, 4096]
#   tensor_parallel.md  the tensor-parallel MLP (bench/gpu/tensor_parallel.sh) with one rank
#   collective_bandwidth.md  the collectives against torch.distributed with one rank, to 256 MiB
# --collectives runs tileops info, the GPU tests, the tensor-parallel MLP and the collectives'
# bandwidth with one rank;
# --tests-only stops after the tests, the main jobs and the Python GPU tests; --attention runs
# only the attention tests, the decoder layer and the attention table; --new-ops runs the GPU
# tests, the Python GPU tests, the memory-bound op table and the families table; --row-ops runs the
# GPU tests, row_ops_harness and the memory-bound op table; --python runs the Python GPU tests
# and the Python call-overhead bench. About five minutes
# on an H200, and a few more for the Python GPU tests (each boundary operator compiled cold).
set -uo pipefail
cd "$(dirname "$0")/../.."
dev=${TILEOPS_DEV_DIR:-.dev}
out=${OUT:?OUT must name the folder for the results}
export LD_LIBRARY_PATH=$PWD/$dev/sys:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
# Libraries packed compressed (xz) to keep the carried tree under its size limit.
for packed in "$dev"/sys/*.xz; do
  if [ -f "$packed" ]; then xz -d -f "$packed"; fi
done
export PYTHONUNBUFFERED=1
# NCCL for the nccl plugin: the one PyTorch's virtual environment brings, where present.
nccl=$(python3 -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null || true)
if [ -n "$nccl" ] && [ -f "$nccl" ]; then export TILEOPS_NCCL_LIBRARY=$nccl; fi
status=0
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv >"$out/gpu.txt" 2>&1
if [ "${1:-}" = "--collectives" ]; then
  "$dev/bin/tileops" info >"$out/info.txt" 2>&1 || status=1
  grep -A2 '^collectives' "$out/info.txt"
  "$dev/bin/tileops_tests" --test-case='GPU*' --duration=true >"$out/gpu_tests.log" 2>&1 || status=1
  grep -E 'SKIPPED|ERROR|test cases' "$out/gpu_tests.log" | tail -n 12
  bench/gpu/tensor_parallel.sh "$dev/bin" 1 50 >"$out/tensor_parallel.md" 2>"$out/tensor_parallel.log" || status=1
  cat "$out/tensor_parallel.md"
  bench/gpu/collective_bandwidth.sh "$dev/bin" 1 256 >"$out/collective_bandwidth.md" 2>"$out/collective_bandwidth.log" ||
    status=1
  cat "$out/collective_bandwidth.md"
  exit $status
fi
if [ "${1:-}" = "--attention" ]; then
  "$dev/bin/tileops_tests" --test-case='GPU*attention*,GPU*decode*,GPU*append*,GPU: every op*' --duration=true \
    >"$out/gpu_tests.log" 2>&1 || status=1
  tail -n 25 "$out/gpu_tests.log"
  "$dev/bin/embed_llama_layer" --device cuda:0 >"$out/layer.log" 2>&1 || status=1
  tail -n 30 "$out/layer.log"
  python3 bench/gpu/attention_vs_torch.py "$dev/bin/gpu_attention_bench" --json "$out/attention.json" \
    --markdown "$out/attention.md" || status=1
  python3 bench/gpu/layer_vs_torch.py "$dev/bin/embed_llama_layer" --markdown "$out/layer_bench.md" \
    2>"$out/layer_bench.log" || status=1
  exit $status
fi
export TILEOPS_LIBRARY=$PWD/$dev/lib/libtileops.so.0
# The Python package as the build made it (with its C half) when packed into $dev/python, else
# the source tree's (ctypes alone).
pypath=$PWD/python
if [ -d "$dev/python/tileops" ]; then pypath=$PWD/$dev/python; fi
if [ "${1:-}" = "--row-ops" ]; then
  "$dev/bin/tileops_tests" --test-case='GPU*' --duration=true >"$out/gpu_tests.log" 2>&1 || status=1
  tail -n 4 "$out/gpu_tests.log"
  "$dev/bin/row_ops_harness" >"$out/row_ops.md" 2>&1 || status=1
  cat "$out/row_ops.md"
  if command -v ncu >/dev/null; then
    ncu --clock-control none -k regex:'row_norm|softmax_rows' --section SpeedOfLight --section Occupancy \
      --section LaunchStats --section WarpStateStats --section InstructionStats --section MemoryWorkloadAnalysis \
      "$dev/bin/row_ops_harness" profile >"$out/row_ops_profile.txt" 2>&1 || status=1
  fi
  python3 bench/gpu/compare_torch.py "$dev/bin/gpu_op_bench" --json "$out/gpu_bench.json" \
    --markdown "$out/gpu_bench.md" >/dev/null || status=1
  exit $status
fi
if [ "${1:-}" = "--python" ]; then
  (cd tests/python && PYTHONPATH=$pypath python3 run.py test_gpu) >"$out/python_gpu.log" 2>&1 || status=1
  tail -n 4 "$out/python_gpu.log"
  PYTHONPATH=$pypath python3 bench/python/call_overhead.py --json "$out/python_bench.json" \
    --markdown "$out/python_bench.md" || status=1
  exit $status
fi
if [ "${1:-}" = "--new-ops" ]; then
  "$dev/bin/tileops_tests" --test-case='GPU*' --duration=true >"$out/gpu_tests.log" 2>&1 || status=1
  tail -n 25 "$out/gpu_tests.log"
  (cd tests/python && PYTHONPATH=$pypath python3 run.py test_gpu) >"$out/python_gpu.log" 2>&1 || status=1
  tail -n 4 "$out/python_gpu.log"
  python3 bench/gpu/compare_torch.py "$dev/bin/gpu_op_bench" --json "$out/gpu_bench.json" \
    --markdown "$out/gpu_bench.md" >/dev/null || status=1
  PYTHONPATH=$pypath python3 bench/gpu/families_vs_torch.py --markdown "$out/families.md" || status=1
  exit $status
fi
"$dev/bin/tileops_tests" --test-case='GPU*' --duration=true >"$out/gpu_tests.log" 2>&1 || status=1
tail -n 25 "$out/gpu_tests.log"
"$dev/bin/embed_llama_block" --device cuda:0 >"$out/embed.log" 2>&1 || status=1
tail -n 8 "$out/embed.log"
"$dev/bin/embed_llama_layer" --device cuda:0 >"$out/layer.log" 2>&1 || status=1
tail -n 8 "$out/layer.log"
# The Python package from the source tree over the packed library.
(cd tests/python && PYTHONPATH=$pypath python3 run.py test_gpu) >"$out/python_gpu.log" 2>&1 || status=1
tail -n 4 "$out/python_gpu.log"
if [ "${1:-}" != "--tests-only" ]; then
  python3 bench/gpu/compare_torch.py "$dev/bin/gpu_op_bench" --json "$out/gpu_bench.json" \
    --markdown "$out/gpu_bench.md" >/dev/null || status=1
  python3 bench/gpu/compare_torch.py "$dev/bin/gpu_block_bench" --suite block --json "$out/block_bench.json" \
    --markdown "$out/block_bench.md" || status=1
  PYTHONPATH=$pypath python3 bench/gpu/families_vs_torch.py --markdown "$out/families.md" || status=1
  python3 bench/gpu/attention_vs_torch.py "$dev/bin/gpu_attention_bench" --json "$out/attention.json" \
    --markdown "$out/attention.md" || status=1
  python3 bench/gpu/layer_vs_torch.py "$dev/bin/embed_llama_layer" --markdown "$out/layer_bench.md" \
    2>"$out/layer_bench.log" || status=1
  PYTHONPATH=$pypath python3 bench/python/call_overhead.py --json "$out/python_bench.json" \
    --markdown "$out/python_bench.md" || status=1
fi
exit $status
