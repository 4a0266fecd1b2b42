#!/usr/bin/env python3
"""Runs gpu_op_bench and PyTorch's own kernels on the same shapes, in one process run on one
GPU, and prints a Markdown table: tileops time, achieved GB/s (the manifest roofline's bytes
over the time), the share of this run's device-to-device copy bandwidth, PyTorch's time and
the ratio of the two; then the host time of one cached tiny call on each side.

PyTorch is timed as gpu_op_bench times tileops: CUDA events around batches of calls after a
warm-up, the median of 15 batches, inputs rotated among the same number of copies.

Usage: compare_torch.py BENCH_BINARY [--json OUT.json] [--markdown OUT.md]
"""
import argparse
import datetime
import json
import statistics
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


def time_calls(call, copies):
    for i in range(10):
        call(i % copies)
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    call(0)
    stop.record()
    stop.synchronize()
    batch = max(1, min(200, int(2.0 / max(start.elapsed_time(stop), 1e-3))))
    per_call = []
    for rep in range(15):
        start.record()
        for i in range(batch):
            call((rep * batch + i) % copies)
        stop.record()
        stop.synchronize()
        per_call.append(start.elapsed_time(stop) / batch)
    return statistics.median(per_call)


def torch_case(op, rows, dtype, seed):
    g = torch.Generator(device="cuda").manual_seed(seed)
    dt = DTYPES[dtype]

    def rand(*shape, dt=dt):
        return torch.rand(*shape, generator=g, device="cuda", dtype=torch.float32).mul_(2).sub_(1).to(dt)

    x = rand(rows, 4096)
    if op == "rms_norm":
        w = rand(4096)
        return lambda: F.rms_norm(x, (4096,), w, 1e-5)
    if op == "layer_norm":
        w, b = rand(4096), rand(4096)
        return lambda: F.layer_norm(x, (4096,), w, b, 1e-5)
    if op == "softmax":
        return lambda: torch.softmax(x, -1)
    if op == "silu_and_mul":
        return lambda: F.silu(x[:, :2048]) * x[:, 2048:]
    if op == "add":
        y = rand(rows, 4096)
        return lambda: torch.add(x, y)
    if op == "add_row":
        r = rand(4096)
        return lambda: torch.add(x, r)
    if op == "relu":
        return lambda: torch.relu(x)
    if op == "sum":
        return lambda: torch.sum(x, -1)
    if op == "prod":
        return lambda: torch.prod(x, -1)
    if op.startswith("batch_norm"):
        training = op.endswith("train")
        rm, rv = rand(4096, dt=torch.float32), torch.ones(4096, device="cuda")
        # Parameters and statistics in float32 for every input dtype, as the manifest declares.
        w, b = rand(4096, dt=torch.float32), rand(4096, dt=torch.float32)
        return lambda: F.batch_norm(x, rm, rv, w, b, training=training, momentum=0.1, eps=1e-5)
    raise ValueError(op)


def torch_tiny_call_us():
    x = torch.rand(4, 4096, device="cuda", dtype=torch.bfloat16)
    w = torch.rand(4096, device="cuda", dtype=torch.bfloat16)
    for _ in range(100):
        F.rms_norm(x, (4096,), w, 1e-5)
    torch.cuda.synchronize()
    per_call = []
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(2000):
            F.rms_norm(x, (4096,), w, 1e-5)
        per_call.append((time.perf_counter() - start) / 2000 * 1e6)
        torch.cuda.synchronize()
    return statistics.median(per_call)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bench")
    ap.add_argument("--json")
    ap.add_argument("--markdown")
    args = ap.parse_args()
    out = subprocess.run([args.bench], check=True, capture_output=True, text=True).stdout
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    copy = next(r for r in rows if r["kind"] == "copy")
    host = next(r for r in rows if r["kind"] == "host_call")
    lines = [
        f"GPU op benchmark, {datetime.date.today().isoformat()}, {copy['device']}, PyTorch {torch.__version__}; "
        f"device-to-device copy: {copy['gbps']:.0f} GB/s (bytes read + written)",
        "",
        "| op | shape | dtype | tileops ms | GB/s | of copy | torch ms | torch / tileops |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        if r["kind"] != "op":
            continue
        fn = [torch_case(r["op"], r["shape"][0], r["dtype"], seed) for seed in range(r["copies"])]
        t_ms = time_calls(lambda i: fn[i](), r["copies"])
        r["torch_ms"] = t_ms
        gbps = r["bytes"] / (r["ms"] * 1e-3) / 1e9
        r["gbps"] = gbps
        lines.append(
            f"| {r['op']} | {r['shape'][0]}x{r['shape'][1]} | {r['dtype']} | {r['ms']:.4f} | {gbps:.0f} | "
            f"{100 * gbps / copy['gbps']:.0f}% | {t_ms:.4f} | {t_ms / r['ms']:.2f} |"
        )
        del fn
        torch.cuda.empty_cache()
    host["torch_us"] = torch_tiny_call_us()
    lines += [
        "",
        "Host time of one cached call, RMSNorm [4, 4096] bfloat16 (launch included, GPU not awaited): "
        f"tileops {host['us']:.2f} us, PyTorch eager {host['torch_us']:.2f} us. Parts, each alone: "
        f"AddFwdOp [4, 4096] into an out buffer {host['add_out_us']:.2f} us, a pool allocation and free "
        f"{host['pool_alloc_free_us']:.2f} us, cudaGetDevice {host['get_device_us']:.3f} us, "
        f"an empty kernel's launch {host['empty_launch_us']:.2f} us",
    ]
    table = "\n".join(lines)
    print(table)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
