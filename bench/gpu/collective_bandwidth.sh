#!/usr/bin/env bash
# AllReduce, AllGather and ReduceScatter on N GPUs of this machine: tileops (one
# collective_bandwidth process per GPU, through the nccl plugin) against torch.distributed's
# NCCL backend in the same run, bfloat16, messages of 1 MiB to 1 GiB, as nccl-tests measures bus
# bandwidth. Prints one markdown table; exits 1 when a side fails.
#   bench/gpu/collective_bandwidth.sh BIN_DIR N [MAX_MIB] [ITERS]
set -euo pipefail
bin=${1:?usage: collective_bandwidth.sh BIN_DIR N [MAX_MIB] [ITERS]}/collective_bandwidth
world=${2:?usage: collective_bandwidth.sh BIN_DIR N [MAX_MIB] [ITERS]}
max_mib=${3:-1024}
iters=${4:-20}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pids=()
for ((rank = 0; rank < world; rank++)); do
  "$bin" --device "cuda:$rank" --world "$world" --rank "$rank" --id-file "$work/id" --max-mib "$max_mib" \
    --iters "$iters" >"$work/tileops$rank.csv" 2>"$work/tileops$rank.err" &
  pids+=($!)
done
status=0
for pid in "${pids[@]}"; do wait "$pid" || status=1; done
if [ $status -ne 0 ]; then cat "$work"/tileops*.err >&2; exit 1; fi
python3 "$here/collective_bandwidth_torch.py" --world "$world" --max-mib "$max_mib" --iters "$iters" >"$work/torch.csv"
python3 - "$work/tileops0.csv" "$work/torch.csv" "$world" <<'PY'
import csv, sys
def rows(path):
    return {(r["collective"], int(r["bytes"])): r for r in csv.DictReader(open(path))}
ours, theirs, world = rows(sys.argv[1]), rows(sys.argv[2]), int(sys.argv[3])
print("| collective | MiB | tileops us | tileops busbw GB/s | torch us | torch busbw GB/s | tileops / torch |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
for key in sorted(ours, key=lambda k: (k[0], k[1])):
    a, b = ours[key], theirs.get(key)
    if b is None:
        continue
    ratio = float(b["us"]) / float(a["us"])  # the same bytes, so the time ratio is the bandwidth ratio
    print("| %s | %d | %s | %s | %s | %s | %.2f |" % (key[0], key[1] >> 20, a["us"], a["busbw_gbs"], b["us"],
                                                   b["busbw_gbs"], ratio))
if world == 1:
    print("\nWith one rank the bus bandwidth is 0 by definition; the times compare the two paths' cost.")
PY
