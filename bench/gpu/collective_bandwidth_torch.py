"""torch.distributed's all_reduce, all_gather_into_tensor and reduce_scatter_tensor (NCCL backend)
over the message sizes and with the measure of examples/tensor_parallel/collective_bandwidth: one
process per GPU, algbw = bytes / time, busbw = algbw * 2(n-1)/n (all reduce) or (n-1)/n. Rank 0
prints the same CSV.

    python3 collective_bandwidth_torch.py --world N [--min-mib 1] [--max-mib 1024] [--iters 20]
"""
import argparse
import os
import tempfile

import torch
import torch.distributed as dist
import torch.multiprocessing as mp


def seconds_per_call(call, iters):
    call()
    call()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        call()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / 1e3 / iters


def rank_main(rank, args, init_file):
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method="file://" + init_file, world_size=args.world, rank=rank)
    n = args.world
    element = 2  # bfloat16
    if rank == 0:
        print("collective,bytes,us,algbw_gbs,busbw_gbs", flush=True)
    mib = args.min_mib
    while mib <= args.max_mib:
        rows = (mib << 20) // element // 1024 // n * n
        message = rows * 1024 * element
        full = torch.zeros(rows, 1024, dtype=torch.bfloat16, device="cuda")
        part = torch.zeros(rows // n, 1024, dtype=torch.bfloat16, device="cuda")
        measured = [
            ("all_reduce", seconds_per_call(lambda: dist.all_reduce(full), args.iters), 2 * (n - 1) / n),
            ("all_gather", seconds_per_call(lambda: dist.all_gather_into_tensor(full, part), args.iters), (n - 1) / n),
            ("reduce_scatter", seconds_per_call(lambda: dist.reduce_scatter_tensor(part, full), args.iters), (n - 1) / n),
        ]
        if rank == 0:
            for name, seconds, factor in measured:
                algbw = message / seconds / 1e9
                print("%s,%d,%.2f,%.2f,%.2f" % (name, message, seconds * 1e6, algbw, algbw * factor), flush=True)
        mib *= 2
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--world", type=int, required=True)
    parser.add_argument("--min-mib", type=int, default=1)
    parser.add_argument("--max-mib", type=int, default=1024)
    parser.add_argument("--iters", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        mp.spawn(rank_main, args=(args, os.path.join(work, "init")), nprocs=args.world, join=True)


if __name__ == "__main__":
    main()
