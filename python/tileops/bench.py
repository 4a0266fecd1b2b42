"""Timing ops from Python and drawing the results as a roofline picture, as ``tileops bench``
and ``tileops bench --svg`` do from the shell.

    norm = tileops.ops.RMSNormFwdOp(normalized_shape=[4096])
    row = tileops.bench.measure(norm, x, w, case="decode")
    result = {"peak_gbps": 4200, "peak_gflops": 990000, "rows": [row]}
    tileops.bench.roofline_svg(result, device="cuda:0", path="roof.svg")

A row has the fields of ``tileops bench --json``'s rows, and ``roofline_svg`` also draws that
command's whole output, so rows measured here and rows measured there go in one picture.
"""

import json
import math
import statistics
import time

from . import _capi
from .errors import ValueError as _ValueError

# The call's device before the first call has told it.
_UNKNOWN = object()


def synchronize(device):
    """Waits until `device` ("cuda:0"; "cpu" returns at once) has finished all work queued on
    it, on every stream."""
    _capi.check(_capi.synchronize(str(device).encode()))


def measure(op, *args, case="", warmup=3, repeat=20, peak_gbps=None, peak_gflops=None, **kwargs):
    """Calls ``op(*args, **kwargs)`` `warmup` times, then `repeat` times waiting for the device
    after each, and returns the row ``tileops bench --json`` would print for it: {op, case, ms
    (the median), gbps, gflops, roofline_fraction, kernels}. The bytes and FLOPs are the
    manifest's roofline of the call; `roofline_fraction` (the time the peaks allow over the
    time measured) is None unless `peak_gbps` is given (`peak_gflops` None: bytes only)."""
    if not isinstance(warmup, int) or isinstance(warmup, bool) or warmup < 0:
        raise _ValueError(f"warmup must be an int >= 0, got {warmup!r}")
    if not isinstance(repeat, int) or isinstance(repeat, bool) or repeat < 1:
        raise _ValueError(f"repeat must be an int >= 1, got {repeat!r}")
    peaks = {"peak_gbps": peak_gbps, "peak_gflops": peak_gflops}
    for name, value in peaks.items():
        if value is not None and not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
            raise _ValueError(f"{name} must be a positive finite number or None, got {value!r}")
    if peak_gbps is None and peak_gflops is not None:
        raise _ValueError("peak_gflops needs peak_gbps: the roofline's bandwidth ceiling")

    for _ in range(warmup):
        op(*args, **kwargs)
    device = op.last_call["device"] if warmup else _UNKNOWN
    seconds = []
    for _ in range(repeat):
        start = time.perf_counter()
        op(*args, **kwargs)
        if device is _UNKNOWN:
            device = op.last_call["device"]
        if device is not None:
            synchronize(device)
        seconds.append(time.perf_counter() - start)
    record = op.last_call
    s = statistics.median(seconds)
    flops, nbytes = record["roofline"]["flops"], record["roofline"]["bytes"]
    fraction = None
    if peak_gbps is not None:
        roof = nbytes / (peak_gbps * 1e9)
        if peak_gflops is not None:
            roof = max(roof, flops / (peak_gflops * 1e9))
        fraction = roof / s
    description = op.description()
    return {
        "op": description["name"],
        "case": str(case),
        "ms": s * 1e3,
        "gbps": nbytes / s / 1e9,
        "gflops": flops / s / 1e9,
        "roofline_fraction": fraction,
        "kernels": description["kernels"],
    }


def roofline_svg(result, device="", path=None):
    """The roofline picture (SVG text) of `result`: a dict (or its JSON text) shaped as
    ``tileops bench --json`` prints it, {"peak_gbps", "peak_gflops" (None: bytes only), "rows"}.
    Each row is a point at its FLOP per byte and achieved GFLOP/s under the ceilings, labelled
    "<op> <case> (<kernel keys>)"; rows with an "error" or without bytes or FLOPs are left out.
    With `path`, the text is also written there. Raises tileops.ValueError naming the field that
    does not fit."""
    if isinstance(result, str):
        text = result
    else:
        try:
            text = json.dumps(result, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise _ValueError(f"roofline: the bench results must be JSON data without NaN or infinity: {e}") from None
    svg = _capi.take_string(_capi.roofline_svg, text.encode(), str(device).encode())
    if path is not None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(svg)
    return svg
