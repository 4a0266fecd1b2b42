#!/usr/bin/env python3
"""Runs gpu_attention_bench and times PyTorch's scaled_dot_product_attention on the same shapes
in the same process run, then prints a markdown table.

Prefill: SDPA on [B, H, S, D] tensors, with the backend PyTorch picks and with the flash backend
forced (key/value heads expanded to the query heads beforehand, outside the timing, where the
flash backend refuses grouped heads); a causal chunk with fewer queries than keys uses the
lower-right causal bias, the mask tileops applies. Ratios are tileops TFLOP/s over PyTorch's. A
shape the bench timed on two kernel types (on Hopper, the warp-specialised kernel and the
cp.async one) has a row for each, against one timing of PyTorch's.
Decode: SDPA with enable_gqa over a [B, Hkv, context, D] cache, one query per sequence, every
position valid (PyTorch has no paged cache: the paged rows compare with the same contiguous
SDPA); also each side's cache bytes per second as a fraction of the run's copy bandwidth.

Usage: attention_vs_torch.py GPU_ATTENTION_BENCH [--markdown OUT.md] [--json OUT.json]
"""
import argparse
import json
import subprocess
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.attention.bias import causal_lower_right

from compare_torch import time_calls  # the same method as the op table's

DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16}


def rand(*shape, dtype):
    return torch.empty(*shape, device="cuda", dtype=dtype).uniform_(-1, 1)


def torch_prefill(r):
    dt = DTYPES[r["dtype"]]
    b, sq, skv, h, hkv, d = r["batch"], r["q_len"], r["kv_len"], r["heads"], r["kv_heads"], r["head_dim"]
    q, k, v = rand(b, h, sq, d, dtype=dt), rand(b, hkv, skv, d, dtype=dt), rand(b, hkv, skv, d, dtype=dt)
    mask = causal_lower_right(sq, skv) if r["causal"] and sq != skv else None
    causal = r["causal"] and sq == skv

    def sdpa(q, k, v, gqa):
        if mask is not None:
            return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=gqa)
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)

    best = time_calls(lambda _: sdpa(q, k, v, h != hkv), 1)
    ke, ve = k.repeat_interleave(h // hkv, dim=1), v.repeat_interleave(h // hkv, dim=1)
    try:
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            flash = time_calls(lambda _: sdpa(q, ke, ve, False), 1)
    except RuntimeError as e:
        print("flash backend refused %s: %s" % (r["label"], str(e).splitlines()[0]), file=sys.stderr)
        flash = float("nan")
    return best, flash


def torch_decode(r):
    dt = DTYPES[r["dtype"]]
    b, ctx, h, hkv, d = r["batch"], r["context"], r["heads"], r["kv_heads"], r["head_dim"]
    copies = max(1, min(8, int(200e6 / r["bytes"])))
    qs = [rand(b, h, 1, d, dtype=dt) for _ in range(copies)]
    ks = [rand(b, hkv, ctx, d, dtype=dt) for _ in range(copies)]
    vs = [rand(b, hkv, ctx, d, dtype=dt) for _ in range(copies)]
    ms = time_calls(lambda c: F.scaled_dot_product_attention(qs[c], ks[c], vs[c], enable_gqa=True), copies)
    del qs, ks, vs
    torch.cuda.empty_cache()
    return ms


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bench")
    ap.add_argument("--markdown")
    ap.add_argument("--json")
    args = ap.parse_args()
    proc = subprocess.run([args.bench], capture_output=True, text=True)
    sys.stderr.write(proc.stderr)
    rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    copy = next(r["copy_gbps"] for r in rows if "copy_gbps" in r)
    lines = ["# Attention on %s against PyTorch %s SDPA (one run)" % (torch.cuda.get_device_name(), torch.__version__),
             "", "Copy bandwidth this run: %.0f GB/s." % copy, "",
             "## Prefill (TFLOP/s; ratio = tileops / PyTorch)", "",
             "| workload | dtype | causal | kernel type | tileops ms | tileops TFLOP/s | SDPA best TFLOP/s | ratio | "
             "SDPA flash TFLOP/s | ratio |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    torch_times = {}
    for r in rows:
        if r.get("kind") != "prefill":
            continue
        shape = (r["label"], r["dtype"])
        if shape not in torch_times:
            torch_times[shape] = torch_prefill(r)
        best, flash = torch_times[shape]
        tf = r["flops"] / (r["ms"] * 1e-3) / 1e12
        tb, tfl = r["flops"] / (best * 1e-3) / 1e12, r["flops"] / (flash * 1e-3) / 1e12
        r.update(torch_best_ms=best, torch_flash_ms=flash)
        lines.append("| %s | %s | %s | %s | %.3f | %.0f | %.0f | %.2f | %.0f | %.2f |" % (
            r["label"], r["dtype"], "yes" if r["causal"] else "no", r.get("kernel", ""), r["ms"], tf, tb, tf / tb,
            tfl, tf / tfl))
    lines += ["", "## Decode, Llama-3.1-8B heads (32/8 of 128), bfloat16, every sequence full", "",
              "| kind | batch | context | tileops ms | % of copy | SDPA ms | % of copy | speed-up |",
              "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r.get("kind") not in ("decode", "paged_decode"):
            continue
        ms = torch_decode(r)
        r.update(torch_ms=ms)
        frac = lambda t: 100.0 * r["bytes"] / (t * 1e-3) / 1e9 / copy
        lines.append("| %s | %d | %d | %.4f | %.0f %% | %.4f | %.0f %% | %.2fx |" % (
            r["kind"] + (" (pages of %d)" % r["block_size"] if r["kind"] == "paged_decode" else ""), r["batch"],
            r["context"], r["ms"], frac(r["ms"]), ms, frac(ms), ms / r["ms"]))
    text = "\n".join(lines) + "\n"
    print(text)
    if args.markdown:
        open(args.markdown, "w").write(text)
    if args.json:
        json.dump(rows, open(args.json, "w"), indent=1)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
