#!/usr/bin/env python3
"""Host time per call from Python of a tiny op, RMSNorm [4, 4096] bfloat16, through
tileops.ops and through torch.ops.tileops, against PyTorch eager on the same tensors; the torch
operator path taken apart (the dispatcher's round trip into the Python kernel, the kernel's
plan lookup, output allocation and call into tileops); and, on a
CUDA device with torch.compile, the Llama-3.1-8B block (RMSNorm, gate/up GEMM, SiLU-and-mul,
down GEMM, residual add) built from tileops ops under torch.compile(fullgraph=True) against
torch.compile of PyTorch's own block.

Host time: the wall time of a batch of calls issued back to back (no synchronisation inside
the batch) over the batch size, the median of repeated batches after a warm-up, the three paths
taking turns batch by batch; the device may still be working when the batch is issued, which is
what a caller's Python thread sees. Block
time: CUDA events around batches of blocks, median per block.

tileops.torch registers C++ kernels through torch's stable C shim on torch 2.10 and later
(tileops.torch.KERNELS == "stable-abi"); then "the operator, through torch" is that C++ path and
the rows below it show what the Python kernel would cost. Run once more with
TILEOPS_TORCH_STABLE_KERNELS=0 for the Python kernels' own numbers.

Usage: call_overhead.py [--device cuda:0] [--calls 2000] [--repeats 9] [--json OUT] [--markdown OUT]
Needs tileops on PYTHONPATH (build/python, or an install's dist-packages) and torch.
"""
import argparse
import json
import statistics
import time

import torch
import torch.nn.functional as F

import tileops
import tileops.torch  # noqa: F401  (registers torch.ops.tileops)

HIDDEN, INTERMEDIATE, EPS = 4096, 14336, 1e-5


def host_us_per_call(calls_by_path, calls, repeats, device):
    """{path: host us per call}: each path's median over `repeats` rounds, the paths taking
    turns within each round so that the machine's drift falls on all of them alike."""
    for call in calls_by_path.values():
        for _ in range(max(200, calls // 10)):
            call()
    batches = {path: [] for path in calls_by_path}
    for _ in range(repeats):
        for path, call in calls_by_path.items():
            if device.type == "cuda":
                torch.cuda.synchronize()
            start = time.perf_counter()
            for _ in range(calls):
                call()
            batches[path].append((time.perf_counter() - start) / calls * 1e6)
    if device.type == "cuda":
        torch.cuda.synchronize()
    return {path: statistics.median(times) for path, times in batches.items()}


def torch_rms_norm(x, w):
    if hasattr(F, "rms_norm"):
        return F.rms_norm(x, (HIDDEN,), w, EPS)
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS)).to(x.dtype) * w


def tiny_rms_norm(device):
    """(x, w, op): the call every table here times, RMSNorm [4, 4096] bfloat16."""
    x = torch.randn(4, HIDDEN, device=device, dtype=torch.bfloat16)
    w = torch.rand(HIDDEN, device=device, dtype=torch.bfloat16)
    return x, w, tileops.ops.RMSNormFwdOp([HIDDEN], EPS)


def overhead_rows(device, calls, repeats):
    x, w, norm = tiny_rms_norm(device)
    key = norm.instance_key
    boundary = torch.ops.tileops.norm_rms_norm_fwd
    eager = "PyTorch eager (%s)" % ("F.rms_norm" if hasattr(F, "rms_norm") else "rsqrt/mean/mul")
    paths = {
        "tileops.ops.RMSNormFwdOp": lambda: norm(x, w),
        "torch.ops.tileops.norm_rms_norm_fwd": lambda: boundary(x, w, key),
        "torch.ops.tileops.norm_rms_norm_fwd.default": lambda: boundary.default(x, w, key),
    }
    if hasattr(F, "rms_norm"):
        # PyTorch's own operator called the way torch.ops.tileops is: the floor of that path.
        aten = torch.ops.aten.rms_norm.default
        paths["torch.ops.aten.rms_norm (PyTorch's operator, same path)"] = lambda: aten(x, [HIDDEN], w, EPS)
    paths[eager] = lambda: torch_rms_norm(x, w)
    us = host_us_per_call(paths, calls, repeats, device)
    rows = list(us.items())
    return rows, norm.last_call["kernels"]


def operator_path_parts(device, calls, repeats):
    """[(part, host us per call)]: the torch operator path of the same call taken apart. The
    operator through torch (with the stable-ABI kernels: the whole C++ path); the Python kernel
    called directly (with the Python kernels, the difference is the dispatcher's round trip into
    it); then that kernel's own steps alone: the plan lookup, the output from torch's allocator,
    and the call into tileops with that output."""
    x, w, norm = tiny_rms_norm(device)
    key = norm.instance_key
    boundary, branch = tileops.torch.operators["tileops::norm_rms_norm_fwd"]
    kernel = tileops.torch._make_kernel(branch)
    plan = tileops.torch._plans.get(norm, (x, w), None)
    shape, dtype = plan[0]
    buffers = [x.new_empty(shape, dtype=dtype)]
    return list(host_us_per_call({
        "the operator, through torch (%s kernels)" % tileops.torch.KERNELS: lambda: boundary(x, w, key),
        "the Python kernel function, called directly": lambda: kernel(x, w, key),
        "the kernel's plan lookup": lambda: tileops.torch._plans.get(norm, (x, w), None),
        "the kernel's output from torch's allocator": lambda: x.new_empty(shape, dtype=dtype),
        "the kernel's call into tileops, output given": lambda: norm._run((x, w), None, buffers, grad_checked=True),
    }, calls, repeats, device).items())


def block_ms(block, inputs, repeats):
    for _ in range(3):
        block(*inputs)
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(5):
            block(*inputs)
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / 5)
    return statistics.median(times)


def block_rows(device, repeats):
    norm = tileops.ops.RMSNormFwdOp([HIDDEN], EPS)
    gemm = tileops.ops.GemmFwdOp()
    act = tileops.ops.SiluAndMulFwdOp()
    add = tileops.ops.AddFwdOp()

    def tileops_block(x, w_norm, w_gate_up, w_down):
        return add(gemm(act(gemm(norm(x, w_norm), w_gate_up)), w_down), x)

    def torch_block(x, w_norm, w_gate_up, w_down):
        h = F.linear(torch_rms_norm(x, w_norm), w_gate_up)
        return F.linear(F.silu(h[:, :INTERMEDIATE]) * h[:, INTERMEDIATE:], w_down) + x

    dtype = torch.bfloat16
    w_norm = torch.rand(HIDDEN, device=device, dtype=dtype)
    w_gate_up = torch.randn(2 * INTERMEDIATE, HIDDEN, device=device, dtype=dtype) * 0.02
    w_down = torch.randn(HIDDEN, INTERMEDIATE, device=device, dtype=dtype) * 0.02
    rows = []
    for tokens in (4, 2048):
        x = torch.randn(tokens, HIDDEN, device=device, dtype=dtype)
        inputs = (x, w_norm, w_gate_up, w_down)
        ours = torch.compile(tileops_block, fullgraph=True)
        theirs = torch.compile(torch_block, fullgraph=True)
        rows.append((tokens, block_ms(ours, inputs, repeats), block_ms(theirs, inputs, repeats)))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--device", default="cuda:0" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--json")
    parser.add_argument("--markdown")
    args = parser.parse_args()
    device = torch.device(args.device)

    overhead, kernels = overhead_rows(device, args.calls, args.repeats)
    eager = overhead[-1][1]
    lines = [
        "# Python call overhead: RMSNorm [4, 4096] bfloat16 on %s" % device,
        "",
        "tileops %s, torch %s; tileops kernels: %s; tileops.torch kernels: %s" % (
            tileops.__version__, torch.__version__, ", ".join(kernels), tileops.torch.KERNELS),
        "",
        "| Path | Host time per call (us) | vs PyTorch eager |",
        "| --- | ---: | ---: |",
    ]
    lines += ["| %s | %.2f | %.2fx |" % (name, us, us / eager) for name, us in overhead]
    parts = operator_path_parts(device, args.calls, args.repeats)
    lines += ["", "## The torch operator path taken apart (same call, same tensors)", "",
              "| Part | Host time per call (us) |", "| --- | ---: |"]
    lines += ["| %s | %.2f |" % (name, us) for name, us in parts]
    report = {"device": str(device), "torch": torch.__version__, "tileops": tileops.__version__,
              "kernels": kernels, "torch_kernels": tileops.torch.KERNELS, "host_us_per_call": dict(overhead), "operator_path_us": dict(parts)}
    compilable = hasattr(torch, "compile") and hasattr(torch.library, "register_fake")
    if device.type == "cuda" and compilable:
        blocks = block_rows(device, args.repeats)
        lines += ["", "## Llama-3.1-8B block under torch.compile(fullgraph=True), bfloat16", "",
                  "| Tokens | tileops ops (ms) | PyTorch (ms) | tileops / PyTorch |", "| ---: | ---: | ---: | ---: |"]
        lines += ["| %d | %.3f | %.3f | %.2fx |" % (t, ours, theirs, ours / theirs) for t, ours, theirs in blocks]
        report["block_ms"] = [{"tokens": t, "tileops": ours, "torch": theirs} for t, ours, theirs in blocks]
    else:
        lines += ["", "(The Llama block needs a CUDA device and torch.compile with register_fake: skipped.)"]
    text = "\n".join(lines)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text + "\n")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
