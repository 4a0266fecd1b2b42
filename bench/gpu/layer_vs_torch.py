#!/usr/bin/env python3
"""The Llama-3.1-8B decoder layer of examples/embed/embed_llama_layer.cpp against the same layer
in PyTorch on the same GPU, in one run: a prefill of PROMPT tokens of one sequence, and a decode
step after PROMPT tokens for each batch size of BATCHES (that many sequences decoding together),
bfloat16.

tileops: embed_llama_layer --device cuda:0 --prompt PROMPT --steps STEPS --batch B --no-check,
whose whole-step times (one wait per step) and decode-step device-graph replay it prints.
PyTorch: the layer written with torch ops (F.rms_norm, linear layers, rotate-half RoPE, the KV
cache written in place, SDPA with enable_gqa), timed eagerly and as a torch.cuda.CUDAGraph of
the step (recorded once, replayed), with CUDA events over repeated steps.

Usage: layer_vs_torch.py EMBED_LLAMA_LAYER [--prompt 2048] [--steps 32] [--batches 1,32]
                         [--markdown OUT.md]
"""
import argparse
import re
import statistics
import subprocess
import sys

import torch
import torch.nn.functional as F

HIDDEN, HEADS, KV_HEADS, HEAD_DIM, INTER, THETA, EPS = 4096, 32, 8, 128, 14336, 500000.0, 1e-5


def ms_per_call(call, reps=20):
    for _ in range(3):
        call()
    torch.cuda.synchronize()
    times = []
    for _ in range(5):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(reps):
            call()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / reps)
    return statistics.median(times)


class TorchLayer:
    def __init__(self, batch, capacity):
        dt, dev = torch.bfloat16, "cuda"
        r = lambda *s, scale=0.02: torch.empty(*s, device=dev, dtype=dt).uniform_(-scale, scale)
        self.attn_norm, self.mlp_norm = r(HIDDEN, scale=1.0), r(HIDDEN, scale=1.0)
        self.qkv = r((HEADS + 2 * KV_HEADS) * HEAD_DIM, HIDDEN)
        self.o, self.gate_up, self.down = r(HIDDEN, HEADS * HEAD_DIM), r(2 * INTER, HIDDEN), r(HIDDEN, INTER)
        self.k_cache = torch.zeros(batch, KV_HEADS, capacity, HEAD_DIM, device=dev, dtype=dt)
        self.v_cache = torch.zeros_like(self.k_cache)
        self.inv_freq = THETA ** (-torch.arange(0, HEAD_DIM, 2, device=dev, dtype=torch.float32) / HEAD_DIM)

    def rope(self, x, pos):  # x [B, heads, T, D], pos [T]
        angles = pos[:, None].float() * self.inv_freq[None, :]
        cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
        x1, x2 = x[..., : HEAD_DIM // 2], x[..., HEAD_DIM // 2 :]
        return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)

    def step(self, x, pos, seen):  # x [B, T, hidden]; pos [T] on the GPU; seen: keys attended (int)
        b, t = x.shape[0], x.shape[1]
        h = F.rms_norm(x, (HIDDEN,), self.attn_norm, EPS)
        q, k, v = F.linear(h, self.qkv).split([HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM], dim=-1)
        q = self.rope(q.view(b, t, HEADS, HEAD_DIM).transpose(1, 2), pos)
        k = self.rope(k.view(b, t, KV_HEADS, HEAD_DIM).transpose(1, 2), pos)
        self.k_cache.index_copy_(2, pos, k)
        self.v_cache.index_copy_(2, pos, v.view(b, t, KV_HEADS, HEAD_DIM).transpose(1, 2))
        keys, values = self.k_cache[:, :, :seen], self.v_cache[:, :, :seen]
        o = F.scaled_dot_product_attention(q, keys, values, is_causal=t > 1, enable_gqa=True)
        x1 = x + F.linear(o.transpose(1, 2).reshape(b, t, HEADS * HEAD_DIM), self.o)
        gate, up = F.linear(F.rms_norm(x1, (HIDDEN,), self.mlp_norm, EPS), self.gate_up).chunk(2, dim=-1)
        return x1 + F.linear(F.silu(gate) * up, self.down)


def torch_times(prompt, batch, prefill):
    """The eager and CUDA-graph times of a decode step of `batch` sequences after `prompt` tokens,
    and of a prefill of `prompt` tokens of one sequence when `prefill`."""
    out = {}
    cases = [("decode", TorchLayer(batch, prompt + 1), torch.randn(batch, 1, HIDDEN, device="cuda",
                                                                    dtype=torch.bfloat16),
              torch.tensor([prompt], device="cuda"), prompt + 1)]
    if prefill:
        cases.insert(0, ("prefill", TorchLayer(1, prompt), torch.randn(1, prompt, HIDDEN, device="cuda",
                                                                        dtype=torch.bfloat16),
                         torch.arange(prompt, device="cuda"), prompt))
    with torch.inference_mode():
        for name, layer, x, pos, seen in cases:
            out[name + "_eager"] = ms_per_call(lambda: layer.step(x, pos, seen))
            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):
                for _ in range(3):
                    layer.step(x, pos, seen)
            torch.cuda.current_stream().wait_stream(stream)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                layer.step(x, pos, seen)
            out[name + "_graph"] = ms_per_call(graph.replay)
    return out


def tileops_times(binary, prompt, steps, batch):
    proc = subprocess.run([binary, "--device", "cuda:0", "--prompt", str(prompt), "--steps", str(steps),
                           "--batch", str(batch), "--no-check"], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit("embed_llama_layer failed:\n" + proc.stdout + proc.stderr)
    steps_line = re.search(r"prefill of \d+ tokens: ([\d.]+) ms; \d+ decode steps: ([\d.]+) ms", proc.stdout)
    graph_line = re.search(r"replayed from one device graph: ([\d.]+) ms", proc.stdout)
    return {"prefill_eager": float(steps_line.group(1)), "decode_eager": float(steps_line.group(2)),
            "decode_graph": float(graph_line.group(1))}, proc.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--prompt", type=int, default=2048)
    ap.add_argument("--steps", type=int, default=32)
    ap.add_argument("--batches", default="1,32", help="comma-separated decode batch sizes; the first also prefills")
    ap.add_argument("--markdown")
    args = ap.parse_args()
    batches = [int(b) for b in args.batches.split(",")]
    rows, logs = [], []
    for i, batch in enumerate(batches):
        ours, log = tileops_times(args.binary, args.prompt, args.steps, batch)
        logs.append(log)
        theirs = torch_times(args.prompt, batch, prefill=i == 0 and batch == 1)
        if "prefill_eager" in theirs:
            rows.append(("prefill of %d tokens, eager" % args.prompt, ours["prefill_eager"], theirs["prefill_eager"],
                         theirs["prefill_graph"]))
        at = "decode step, batch %d at %d tokens" % (batch, args.prompt)
        rows.append((at + ", eager", ours["decode_eager"], theirs["decode_eager"], theirs["decode_graph"]))
        rows.append((at + ", device graph", ours["decode_graph"], theirs["decode_eager"], theirs["decode_graph"]))
    lines = ["# Llama-3.1-8B decoder layer on %s, bfloat16: tileops against PyTorch %s (one run)"
             % (torch.cuda.get_device_name(), torch.__version__), "",
             "tileops prefill: one timed step of one sequence (after warm-up); tileops decode: the mean of %d steps "
             "of every sequence of the batch. PyTorch: CUDA events over repeated steps. Ratio: PyTorch time / "
             "tileops time (above 1: tileops faster)." % args.steps,
             "", "| what | tileops ms | PyTorch eager ms | ratio | PyTorch CUDA graph ms | ratio |",
             "|---|---|---|---|---|---|"]
    for what, mine, eager, graph in rows:
        lines.append("| %s | %.3f | %.3f | %.2f | %.3f | %.2f |" % (what, mine, eager, eager / mine, graph, graph / mine))
    text = "\n".join(lines) + "\n"
    print(text)
    print("\n".join(logs), file=sys.stderr)
    if args.markdown:
        open(args.markdown, "w").write(text)


if __name__ == "__main__":
    main()
