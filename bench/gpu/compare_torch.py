#!/usr/bin/env python3
"""Runs a tileops GPU benchmark and PyTorch on the same shapes, in one process run on one GPU,
and prints a Markdown table.

--suite ops (gpu_op_bench): per memory-bound op, tileops time, achieved GB/s (the manifest
roofline's bytes over the time), the share of this run's device-to-device copy bandwidth (2 GiB
moved) and of a copy moving the op's bytes timed the same way (which sizes the L2 cache holds
favour as they favour the op), PyTorch's time and the ratio of the two; then the host time of one cached tiny call on each
side.

--suite block (gpu_block_bench): GEMM at decode and prefill shapes against torch.matmul on the
same tensors, then the Llama-3.1-8B block at 4 and 2048 tokens: tileops eager and replayed as a
CUDA graph, PyTorch eager and under torch.cuda.graphs, with the same weights and dtype.

PyTorch is timed as the binaries time tileops: CUDA events around batches of calls after a
warm-up, the median of 15 batches, inputs rotated among the same number of copies.

Usage: compare_torch.py BENCH_BINARY [--suite ops|block] [--json OUT.json] [--markdown OUT.md]
"""
import argparse
import datetime
import json
import math
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
    if op.startswith("gelu"):
        approximate = "tanh" if op.endswith("tanh") else "none"
        return lambda: F.gelu(x, approximate=approximate)
    if op == "fused_add_rms_norm":
        residual, w = rand(rows, 4096), rand(4096)

        def fused_add_rms_norm():
            residual.add_(x)
            return F.rms_norm(residual, (4096,), w, 1e-5)

        return fused_add_rms_norm
    if op == "gelu_and_mul":
        return lambda: F.gelu(x[:, :2048], approximate="tanh") * x[:, 2048:]
    if op == "embedding":
        ids = (torch.arange(rows, device="cuda", dtype=torch.int64) * 7919 + seed) % 32000
        table = rand(32000, 4096)
        return lambda: F.embedding(ids, table)
    if op == "mean":
        return lambda: torch.mean(x, -1)
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


def fill(shape, dtype, mult, scale):
    """The values gpu_block_bench gives a tensor: element i is scale * ((i * mult) % 2001 / 1000 - 1)."""
    i = torch.arange(math.prod(shape), device="cuda", dtype=torch.int64)
    v = ((i * mult) % 2001).to(torch.float32) / 1000.0 - 1.0
    return (v * scale).to(DTYPES[dtype]).reshape(shape)


def torch_block(dtype):
    w_norm = fill((4096,), dtype, 31, 1.0)
    w_gate_up = fill((2 * 14336, 4096), dtype, 104729, 0.02)
    w_down = fill((4096, 14336), dtype, 15485863, 0.02)

    def block(x):
        h = F.rms_norm(x, (4096,), w_norm, 1e-5)
        gate_up = torch.matmul(h, w_gate_up.t())
        return x + torch.matmul(F.silu(gate_up[:, :14336]) * gate_up[:, 14336:], w_down.t())

    return block


def torch_graph_ms(block, x):
    static_x = x.clone()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            block(static_x)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        static_y = block(static_x)
    ms = time_calls(lambda i: graph.replay(), 1)
    torch.cuda.synchronize()
    return ms, static_y.double().sum().item()


def block_suite(rows, copy):
    lines = [
        f"GEMM and Llama-3.1-8B block benchmark, {datetime.date.today().isoformat()}, {copy['device']}, "
        f"PyTorch {torch.__version__}; device-to-device copy: {copy['gbps']:.0f} GB/s (bytes read + written)",
        "",
        "GEMM d = a · bᵀ (a [m, k], b [n, k]), against torch.matmul(a, b.t()) on the same tensors:",
        "",
        "| case | m x n x k | dtype | tileops ms | TFLOP/s | GB/s | of copy | torch ms | torch / tileops | kernel |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for r in (r for r in rows if r["kind"] == "gemm"):
        a = fill((r["m"], r["k"]), r["dtype"], 7919, 1.0)
        b = fill((r["n"], r["k"]), r["dtype"], 104729, 0.02)
        r["torch_ms"] = time_calls(lambda i: torch.matmul(a, b.t()), 1)
        gbps = r["bytes"] / (r["ms"] * 1e-3) / 1e9
        lines.append(
            f"| {r['case']} | {r['m']}x{r['n']}x{r['k']} | {r['dtype']} | {r['ms']:.4f} | "
            f"{r['flops'] / (r['ms'] * 1e-3) / 1e12:.1f} | {gbps:.0f} | {100 * gbps / copy['gbps']:.0f}% | "
            f"{r['torch_ms']:.4f} | {r['torch_ms'] / r['ms']:.2f} | {r['kernel']} |"
        )
        del a, b
        torch.cuda.empty_cache()
    decode = [r for r in rows if r["kind"] == "decode_kernel"]
    keys = sorted({r["key"] for r in decode})
    if decode:
        lines += [
            "",
            "Decode GEMM kernel types alone (built and called directly), GB/s and share of copy; "
            "torch.matmul(a, b.t()) on the same tensors:",
            "",
            "| m x n x k | dtype | " + " | ".join(keys) + " | torch | best tileops / torch |",
            "| --- | --- | " + " | ".join("---:" for _ in keys) + " | ---: | ---: |",
        ]
        shapes = sorted({(r["m"], r["n"], r["k"], r["dtype"]) for r in decode}, key=lambda s: (s[3], s[1], s[0]))
        for m, n, k, dtype in shapes:
            mine = {r["key"]: r for r in decode if (r["m"], r["n"], r["k"], r["dtype"]) == (m, n, k, dtype)}
            a = fill((m, k), dtype, 7919, 1.0)
            b = fill((n, k), dtype, 104729, 0.02)
            torch_ms = time_calls(lambda i: torch.matmul(a, b.t()), 1)
            bytes_ = next(iter(mine.values()))["bytes"]
            for r in mine.values():
                r["torch_ms"] = torch_ms
            cells = []
            for key in keys:
                if key in mine:
                    gbps = mine[key]["bytes"] / (mine[key]["ms"] * 1e-3) / 1e9
                    cells.append(f"{gbps:.0f} ({100 * gbps / copy['gbps']:.0f}%)")
                else:
                    cells.append("-")
            torch_gbps = bytes_ / (torch_ms * 1e-3) / 1e9
            best = min(r["ms"] for r in mine.values())
            lines.append(
                f"| {m}x{n}x{k} | {dtype} | " + " | ".join(cells) +
                f" | {torch_gbps:.0f} ({100 * torch_gbps / copy['gbps']:.0f}%) | {torch_ms / best:.2f} |"
            )
            del a, b
            torch.cuda.empty_cache()
    prefill = [r for r in rows if r["kind"] == "prefill_kernel"]
    prefill_keys = sorted({r["key"] for r in prefill})
    if prefill:
        lines += [
            "",
            "Prefill GEMM kernel types alone (built and called directly), TFLOP/s; the shared tiled GEMM is the "
            "hip plugin's (its FMA path: a lower bound for AMD GPUs); torch.matmul(a, b.t()) on the same tensors:",
            "",
            "| m x n x k | dtype | " + " | ".join(prefill_keys) + " | torch | tiled / torch |",
            "| --- | --- | " + " | ".join("---:" for _ in prefill_keys) + " | ---: | ---: |",
        ]
        shapes = sorted({(r["m"], r["n"], r["k"], r["dtype"]) for r in prefill}, key=lambda s: (s[3], s[1]))
        for m, n, k, dtype in shapes:
            mine = {r["key"]: r for r in prefill if (r["m"], r["n"], r["k"], r["dtype"]) == (m, n, k, dtype)}
            a = fill((m, k), dtype, 7919, 1.0)
            b = fill((n, k), dtype, 104729, 0.02)
            torch_ms = time_calls(lambda i: torch.matmul(a, b.t()), 1)
            flops = next(iter(mine.values()))["flops"]
            cells = [f"{flops / (mine[key]['ms'] * 1e-3) / 1e12:.1f}" if key in mine else "-" for key in prefill_keys]
            tiled = mine.get("cuda_tiled_gemm")
            ratio = f"{torch_ms / tiled['ms']:.2f}" if tiled else "-"
            lines.append(
                f"| {m}x{n}x{k} | {dtype} | " + " | ".join(cells) + f" | {flops / (torch_ms * 1e-3) / 1e12:.1f} | {ratio} |"
            )
            del a, b
            torch.cuda.empty_cache()
    lines += [
        "",
        "Llama-3.1-8B block (RMSNorm → SwiGLU MLP → residual add, hidden 4096, intermediate 14336), ms per block; "
        "GB/s counts the manifest rooflines' bytes:",
        "",
        "| tokens | dtype | tileops eager | tileops CUDA graph | torch eager | torch CUDA graph | "
        "eager GB/s | graph GB/s | torch eager / tileops eager | torch graph / tileops graph | output sums (tileops, torch) |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    blocks = [r for r in rows if r["kind"] == "block"]
    block = torch_block(blocks[0]["dtype"]) if blocks else None
    for r in blocks:
        x = fill((r["tokens"], 4096), r["dtype"], 7919, 1.0)
        r["torch_eager_ms"] = time_calls(lambda i: block(x), 1)
        r["torch_graph_ms"], r["torch_sum"] = torch_graph_ms(block, x)
        lines.append(
            f"| {r['tokens']} | {r['dtype']} | {r['eager_ms']:.4f} | {r['graph_ms']:.4f} | "
            f"{r['torch_eager_ms']:.4f} | {r['torch_graph_ms']:.4f} | {r['bytes'] / (r['eager_ms'] * 1e-3) / 1e9:.0f} | "
            f"{r['bytes'] / (r['graph_ms'] * 1e-3) / 1e9:.0f} | {r['torch_eager_ms'] / r['eager_ms']:.2f} | "
            f"{r['torch_graph_ms'] / r['graph_ms']:.2f} | {r['sum']:.4g}, {r['torch_sum']:.4g} |"
        )
        del x
        torch.cuda.empty_cache()
    kernels = sorted({r["kernels"] for r in blocks})
    if kernels:
        lines += ["", "tileops kernels of the block: " + "; ".join(kernels)]
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bench")
    ap.add_argument("--suite", choices=["ops", "block"], default="ops")
    ap.add_argument("--json")
    ap.add_argument("--markdown")
    args = ap.parse_args()
    proc = subprocess.run([args.bench], capture_output=True, text=True)
    if proc.returncode != 0:
        print(f"{args.bench} exited with status {proc.returncode}:\n{proc.stderr}", file=sys.stderr)
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    if args.suite == "block":
        copy = next(r for r in rows if r["kind"] == "copy")
        return write(block_suite(rows, copy), rows, args) or (1 if proc.returncode else 0)
    if proc.returncode != 0:
        return 1
    copy = next(r for r in rows if r["kind"] == "copy")
    host = next(r for r in rows if r["kind"] == "host_call")
    lines = [
        f"GPU op benchmark, {datetime.date.today().isoformat()}, {copy['device']}, PyTorch {torch.__version__}; "
        f"device-to-device copy: {copy['gbps']:.0f} GB/s (bytes read + written)",
        "",
        "| op | shape | dtype | tileops ms | GB/s | of copy | of same-size copy | torch ms | torch / tileops |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
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
            f"{100 * gbps / copy['gbps']:.0f}% | {100 * gbps / r['same_size_copy_gbps']:.0f}% | {t_ms:.4f} | "
            f"{t_ms / r['ms']:.2f} |"
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
    return write(lines, rows, args)


def write(lines, rows, args):
    table = "\n".join(lines)
    print(table)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
