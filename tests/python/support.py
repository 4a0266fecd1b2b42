"""What the Python tests share: torch when this interpreter has it, tolerances per dtype, and
random inputs of a workload case."""

import unittest

try:
    import torch
except ImportError:
    torch = None

requires_torch = unittest.skipIf(torch is None, "this python3 has no torch (Debian: python3-torch)")

# Absolute and relative tolerance of a comparison against a reference, per dtype name.
TOLERANCES = {
    "float16": (2e-2, 2e-2),
    "bfloat16": (5e-2, 5e-2),
    "float32": (1e-4, 1e-4),
    "float64": (1e-9, 1e-9),
}


def torch_dtype(name):
    return getattr(torch, name)


def assert_close(test, actual, expected, dtype, what):
    """Fails `test` naming `what` unless `actual` matches `expected` within dtype's tolerance
    (exactly for integers and bool)."""
    test.assertEqual(tuple(actual.shape), tuple(expected.shape), what)
    test.assertEqual(actual.dtype, expected.dtype, what)
    if dtype in TOLERANCES:
        atol, rtol = TOLERANCES[dtype]
        a, e = actual.double(), expected.double()
        bad = ~torch.isclose(a, e, rtol=rtol, atol=atol, equal_nan=True)
        if bad.any():
            worst = (a - e).abs().max().item()
            test.fail("%s: %d of %d elements differ (max |diff| %g)" % (what, int(bad.sum()), a.numel(), worst))
    else:
        test.assertTrue(torch.equal(actual, expected), what)


def random_tensor(shape, dtype, generator, device="cpu"):
    """Values a reference comparison is well-conditioned on: normal floats, small integers."""
    if dtype in TOLERANCES:
        return torch.randn(shape, generator=generator, dtype=torch.float64).to(torch_dtype(dtype)).to(device)
    if dtype == "bool":
        return (torch.rand(shape, generator=generator) > 0.5).to(device)
    return torch.randint(-3, 4, shape, generator=generator).to(torch_dtype(dtype)).to(device)


def case_inputs(case, generator, device="cpu"):
    """One tensor per manifest input of a workload case (None where the case passes none); an
    input with a range (the values an index input holds) draws from it, inclusive; an int64 input
    of positions holds positions below its length."""
    tensors = []
    for spec in case["inputs"]:
        if spec is None:
            tensors.append(None)
        elif "range" in spec:
            low, high = spec["range"]
            dtype = getattr(torch, spec["dtype"])
            tensors.append(torch.randint(low, high + 1, spec["shape"], generator=generator).to(dtype).to(device))
        elif spec["dtype"] == "int64" and len(spec["shape"]) == 1:
            tensors.append(torch.randint(0, max(spec["shape"][0], 1), spec["shape"], generator=generator).to(device))
        elif spec.get("name") == "running_var":
            # A variance is never negative: a negative one gives NaN, which no comparison equals.
            tensors.append(random_tensor(spec["shape"], spec["dtype"], generator, device).abs())
        else:
            tensors.append(random_tensor(spec["shape"], spec["dtype"], generator, device))
    return tensors


def case_params(case):
    """A workload case's parameters as the op classes take them: a tensor parameter becomes a
    random tensor of its shape and dtype."""
    generator = torch.Generator().manual_seed(7) if torch is not None else None
    params = {}
    for name, value in case["params"].items():
        if isinstance(value, dict):
            value = random_tensor(value["shape"], value["dtype"], generator)
        params[name] = value
    return params


def assert_raises_through_torch_ops(test, cls, regex):
    """A context manager asserting that a call through torch.ops raises tileops class `cls`
    with a message matching `regex`: that class under tileops.torch's Python kernels; torch's
    RuntimeError whose message is "<class name>: <message>" under its stable-ABI kernels, which
    raise C++ exceptions that torch turns into RuntimeError."""
    import builtins

    import tileops.torch as tileops_torch

    if tileops_torch.KERNELS == "stable-abi":
        return test.assertRaisesRegex(builtins.RuntimeError, "%s: .*%s" % (cls.__name__, regex))
    return test.assertRaisesRegex(cls, regex)
