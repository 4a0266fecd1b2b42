#!/usr/bin/env bash
# The tensor-parallel Llama-3.1-8B MLP on N GPUs of this machine against one, at decode batch 32
# and a 2048-token prefill: one tensor_parallel_mlp process per rank on cuda:0 .. cuda:N-1, the
# group's id passed through a file, each rank checked against the unsplit MLP and timed.
#   bench/gpu/tensor_parallel.sh BIN_DIR N [ITERS]
# Prints one markdown table: per token count, the unsplit MLP on one GPU, the split MLP with its
# AllReduce (rank 0's median), and the speed-up. Exits 1 when a rank fails its check.
set -euo pipefail
bin=${1:?usage: tensor_parallel.sh BIN_DIR N [ITERS]}/tensor_parallel_mlp
world=${2:?usage: tensor_parallel.sh BIN_DIR N [ITERS]}
iters=${3:-50}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
echo "| tokens | GPUs | unsplit ms (1 GPU) | tensor-parallel ms | speed-up |"
echo "| ---: | ---: | ---: | ---: | ---: |"
for tokens in 32 2048; do
  rm -f "$work/id"
  pids=()
  for ((rank = 0; rank < world; rank++)); do
    "$bin" --device "cuda:$rank" --world "$world" --rank "$rank" --id-file "$work/id" --tokens "$tokens" \
      --iters "$iters" >"$work/rank$rank.log" 2>&1 &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
  line=$(grep 'timing' "$work/rank0.log" || true)
  if [ -z "$line" ]; then
    cat "$work"/rank*.log >&2
    status=1
    continue
  fi
  split=$(sed -E 's/.*tensor-parallel ([0-9.]+) ms.*/\1/' <<<"$line")
  unsplit=$(sed -E 's/.*unsplit ([0-9.]+) ms.*/\1/' <<<"$line")
  speedup=$(awk -v a="$unsplit" -v b="$split" 'BEGIN { printf "%.2fx", a / b }')
  echo "| $tokens | $world | $unsplit | $split | $speedup |"
  grep -h 'MISMATCH' "$work"/rank*.log >&2 && status=1
done
exit $status
