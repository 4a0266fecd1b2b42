#!/usr/bin/env python3
"""The mixture-of-experts, pooling and RoPE ops against PyTorch on one GPU, in one process, on
the same tensors, and prints Markdown tables.

FusedMoEFwdOp:
Shapes: Mixtral-8x7B (8 experts, top 2, hidden 4096, intermediate 14336, renormalised softmax)
and DeepSeek-V2-Lite (64 experts, top 6, hidden 2048, intermediate 1408, softmax), bfloat16, at
1, 32 and 2048 tokens. PyTorch runs the same computation two ways: the per-expert loop of
Hugging Face's MoE blocks (the router with torch.topk, then for each expert its tokens,
torch.matmul through gate/up, silu, down, and index_add_ of the weighted rows), and, where this
PyTorch has it, torch._grouped_mm over the routes sorted by expert. The weights are read only for
the experts the tokens pick: "of copy" is those bytes (plus the activations) over the time, as a
share of this run's device-to-device copy bandwidth.

MaxPool2dFwdOp and AvgPool2dFwdOp at ResNet-50's pools (the stem's 3x3 stride-2 max pool on
[32, 64, 112, 112] and the final 7x7 average on [32, 2048, 7, 7]) against
torch.nn.functional; RopeFwdOp (Llama-3.1-8B queries, 2048 tokens) and LongRoPEFwdOp (Phi-3-mini
queries, 8192 tokens, the long factors) against the rotation written in PyTorch with the cos and
sin tables computed once outside the timed call. These are memory-bound: "of copy" is the bytes
read and written over the time of the calls replayed from a CUDA graph, as a share of the copy
bandwidth; the eager times, host-bound at these sizes, are listed beside.

The "experts kernel" column names the kernel type that ran the experts: cuda_moe_experts_sm90
(wgmma GEMMs) on compute capability 9.0 where the build embeds sm_90a code, else
cuda_moe_experts; TILEOPS_DISABLE_KERNELS=cuda_moe_experts_sm90 times the mma.sync GEMMs there.

Usage: families_vs_torch.py [--markdown OUT.md] [--part moe|memory]   (tileops from PYTHONPATH,
TILEOPS_LIBRARY set; --part runs one of the two tables)
"""
import argparse
import datetime
import math
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from compare_torch import time_calls  # noqa: E402

import tileops  # noqa: E402
import tileops.torch  # noqa: E402

MODELS = [
    # name, experts, top_k, hidden, intermediate, renormalize
    ("mixtral-8x7b", 8, 2, 4096, 14336, True),
    ("deepseek-v2-lite", 64, 6, 2048, 1408, False),
]
TOKENS = [1, 32, 2048]


def route(logits, top_k, renormalize):
    weights, ids = torch.topk(torch.softmax(logits.float(), -1), top_k, dim=-1)
    if renormalize:
        weights = weights / weights.sum(-1, keepdim=True)
    return weights, ids


def experts_kernel(record):
    """The kernel key of a call record (or of its stages' calls, depth first) that ran the
    experts."""
    for key in record.get("kernels", []):
        if "moe_experts" in key:
            return key
    for stage in record.get("stages", []):
        for call in stage.get("calls", []):
            key = experts_kernel(call)
            if key != "-":
                return key
    return "-"


def torch_loop(x, logits, w_gate_up, w_down, top_k, renormalize):
    weights, ids = route(logits, top_k, renormalize)
    inter = w_down.shape[2]
    y = torch.zeros_like(x)
    for e in range(w_gate_up.shape[0]):
        rows, slots = torch.where(ids == e)
        if rows.numel() == 0:
            continue
        h = torch.matmul(x[rows], w_gate_up[e].t())
        out = torch.matmul(F.silu(h[:, :inter]) * h[:, inter:], w_down[e].t())
        y.index_add_(0, rows, (out * weights[rows, slots, None]).to(x.dtype))
    return y


def torch_grouped(x, logits, w_gate_up_t, w_down_t, top_k, renormalize):
    """w_gate_up_t [E, H, 2I] and w_down_t [E, I, H]: the layout torch._grouped_mm multiplies by."""
    weights, ids = route(logits, top_k, renormalize)
    experts = w_gate_up_t.shape[0]
    inter = w_down_t.shape[1]
    flat = ids.flatten()
    order = torch.argsort(flat, stable=True)
    offs = torch.cumsum(torch.bincount(flat, minlength=experts), 0).to(torch.int32)
    rows = order // top_k
    h = torch._grouped_mm(x[rows], w_gate_up_t, offs=offs)
    out = torch._grouped_mm(F.silu(h[:, :inter]) * h[:, inter:], w_down_t, offs=offs)
    y = torch.zeros(x.shape, device=x.device, dtype=torch.float32)
    y.index_add_(0, rows, out.float() * weights.flatten()[order, None])
    return y.to(x.dtype)


def graph_ms(call, calls=20):
    """Milliseconds per call of `call` replayed from a CUDA graph of `calls` calls: the device's
    time for the kernels, without the Python call path that bounds these small rows when called
    eagerly (both libraries take tens of microseconds of host time per call from Python)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            call()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(calls):
            call()
    return time_calls(lambda i: graph.replay(), 1) / calls


def memory_bound_rows(copy):
    g = torch.Generator(device="cuda").manual_seed(11)
    rows = []

    def row(name, shape, dtype, op, inputs, theirs, bytes_):
        """`inputs`: one per manifest input of `op` (None for an optional one left out)."""
        def mine():
            return op(*[t for t in inputs if t is not None])

        want = theirs()
        got = mine()
        diff = (got.float() - want.float()).abs().max().item()
        ms = time_calls(lambda i: mine(), 1)
        torch_ms = time_calls(lambda i: theirs(), 1)
        # Through the op's torch operator, whose outputs come from torch's allocator: graph-safe.
        graph = graph_ms(lambda: tileops.torch.boundary_call(op, inputs, None))
        torch_graph = graph_ms(theirs)
        gbps = bytes_ / (graph * 1e-3) / 1e9
        rows.append(f"| {name} | {shape} | {str(dtype)[6:]} | {ms:.4f} | {torch_ms:.4f} | {torch_ms / ms:.2f} | "
                    f"{graph:.4f} | {100 * gbps / copy:.0f}% | {torch_graph:.4f} | {torch_graph / graph:.2f} | "
                    f"{diff:.2e} |")
        print(rows[-1], flush=True)

    for dtype in (torch.bfloat16, torch.float32):
        x = torch.randn(32, 64, 112, 112, device="cuda", generator=g).to(dtype)
        max_pool = tileops.ops.MaxPool2dFwdOp(kernel_size=3, stride=2, padding=1)
        out = 32 * 64 * 56 * 56
        row("max_pool2d 3x3 s2 p1", "[32, 64, 112, 112]", dtype, max_pool, [x],
            lambda: F.max_pool2d(x, 3, 2, 1), (x.numel() + out) * x.element_size())
        x = torch.randn(32, 2048, 7, 7, device="cuda", generator=g).to(dtype)
        avg_pool = tileops.ops.AvgPool2dFwdOp(kernel_size=7)
        row("avg_pool2d 7x7", "[32, 2048, 7, 7]", dtype, avg_pool, [x], lambda: F.avg_pool2d(x, 7),
            (x.numel() + 32 * 2048) * x.element_size())

    def rotate_half(x, cos, sin):
        half = x.shape[-1] // 2
        rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
        return (x * cos + rotated * sin).to(x.dtype)

    def tables(seq, dim, theta, factors=None, scale=1.0):
        inv_freq = theta ** (-torch.arange(0, dim, 2, device="cuda", dtype=torch.float32) / dim)
        if factors is not None:
            inv_freq = inv_freq / factors.cuda()
        angle = torch.arange(seq, device="cuda", dtype=torch.float32)[:, None] * inv_freq[None, :]
        angle = torch.cat((angle, angle), dim=-1)[None, :, None, :]
        return torch.cos(angle) * scale, torch.sin(angle) * scale

    x = torch.randn(1, 2048, 32, 128, device="cuda", generator=g).bfloat16()
    cos, sin = tables(2048, 128, 500000.0)
    rope = tileops.ops.RopeFwdOp(theta=500000.0)
    row("rope llama3-8b q", "[1, 2048, 32, 128]", x.dtype, rope, [x, None], lambda: rotate_half(x, cos, sin),
        2 * x.numel() * x.element_size())
    long_factor = torch.linspace(1.0, 8.0, 48)
    short_factor = torch.ones(48)
    x = torch.randn(1, 8192, 32, 96, device="cuda", generator=g).bfloat16()
    scale = math.sqrt(1 + math.log(131072 / 4096) / math.log(4096))
    cos, sin = tables(8192, 96, 10000.0, long_factor, scale)
    long_rope = tileops.ops.LongRoPEFwdOp(theta=10000.0, input_layout="BSHD", max_position_embeddings=131072,
                                          original_max_position_embeddings=4096, short_factor=short_factor,
                                          long_factor=long_factor)
    row("long_rope phi3-mini q", "[1, 8192, 32, 96]", x.dtype, long_rope, [x, None],
        lambda: rotate_half(x, cos, sin), 2 * x.numel() * x.element_size())
    return rows


def copy_gbps():
    a = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    ms = time_calls(lambda i: b.copy_(a), 1)
    return 2 * a.numel() / (ms * 1e-3) / 1e9


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--markdown")
    parser.add_argument("--part", choices=["moe", "memory"])
    args = parser.parse_args()
    copy = copy_gbps()
    has_grouped = hasattr(torch, "_grouped_mm")
    lines = [
        f"FusedMoEFwdOp benchmark, {datetime.date.today().isoformat()}, {torch.cuda.get_device_name()}, "
        f"PyTorch {torch.__version__}; device-to-device copy: {copy:.0f} GB/s (bytes read + written)",
        "",
        "| model | tokens | experts hit | tileops ms | of copy | TFLOP/s | torch loop ms | loop / tileops | "
        "torch._grouped_mm ms | grouped / tileops | max abs diff | experts kernel |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    g = torch.Generator(device="cuda").manual_seed(7)
    for name, experts, top_k, hidden, inter, renormalize in MODELS if args.part != "memory" else []:
        w_gate_up = (torch.randn(experts, 2 * inter, hidden, device="cuda", generator=g) * 0.02).bfloat16()
        w_down = (torch.randn(experts, hidden, inter, device="cuda", generator=g) * 0.02).bfloat16()
        w_gate_up_t = w_gate_up.transpose(1, 2).contiguous() if has_grouped else None
        w_down_t = w_down.transpose(1, 2).contiguous() if has_grouped else None
        op = tileops.ops.FusedMoEFwdOp(top_k=top_k, renormalize=renormalize)
        for tokens in TOKENS:
            x = torch.randn(tokens, hidden, device="cuda", generator=g).bfloat16()
            logits = torch.randn(tokens, experts, device="cuda", generator=g)
            mine = op(x, logits, w_gate_up, w_down)
            served = experts_kernel(op.last_call)
            ref = torch_loop(x, logits, w_gate_up, w_down, top_k, renormalize)
            diff = (mine.float() - ref.float()).abs().max().item()
            hit = torch.unique(route(logits, top_k, renormalize)[1]).numel()
            ms = time_calls(lambda i: op(x, logits, w_gate_up, w_down), 1)
            loop_ms = time_calls(lambda i: torch_loop(x, logits, w_gate_up, w_down, top_k, renormalize), 1)
            grouped = "-"
            grouped_ratio = "-"
            if has_grouped:
                try:
                    grouped_ms = time_calls(
                        lambda i: torch_grouped(x, logits, w_gate_up_t, w_down_t, top_k, renormalize), 1)
                    grouped, grouped_ratio = f"{grouped_ms:.3f}", f"{grouped_ms / ms:.2f}"
                except RuntimeError as e:
                    grouped = "refused: " + str(e).splitlines()[0][:60]
            bytes_ = hit * 3 * inter * hidden * 2 + 2 * tokens * hidden * 2
            flops = tokens * top_k * 6 * inter * hidden
            lines.append(
                f"| {name} | {tokens} | {hit} | {ms:.3f} | {100 * bytes_ / (ms * 1e-3) / 1e9 / copy:.0f}% | "
                f"{flops / (ms * 1e-3) / 1e12:.1f} | {loop_ms:.3f} | {loop_ms / ms:.2f} | {grouped} | {grouped_ratio} | "
                f"{diff:.2e} | {served} |"
            )
            print(lines[-1], flush=True)
        del w_gate_up, w_down, w_gate_up_t, w_down_t
        torch.cuda.empty_cache()
    lines += [
        "",
        "Pooling and RoPE (memory-bound) against PyTorch:",
        "",
        "Eager: each library called from Python, one call after another (host-bound at these sizes). "
        "Graph: the same calls replayed from a CUDA graph, the device's time per call; of copy from it.",
        "",
        "| op | shape | dtype | tileops eager ms | torch eager ms | torch / tileops | tileops graph ms | of copy | "
        "torch graph ms | torch / tileops | max abs diff |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    if args.part != "moe":
        lines += memory_bound_rows(copy)
    text = "\n".join(lines) + "\n"
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(text)
    print(text)


if __name__ == "__main__":
    main()
