"""Every tileops op with a compile boundary as a torch custom op.

Importing this module defines, in the torch library namespace ``tileops``, one operator per
boundary operator of every op (``torch.ops.tileops.norm_rms_norm_fwd``, ...): its arguments are
the op's manifest inputs (``Tensor?`` for optional ones, ``Tensor(a!)`` for the inputs that
branch writes), ``Tensor(a!) out`` when the branch passes ``out``, and ``str instance_key``, the
key of the tileops op instance (``op.instance_key``) whose parameters the call uses; it
returns the outputs the branch makes (not the null ones, nor those that are an input it wrote
or ``out``). The real kernels (CPU and CUDA) allocate those outputs with torch's allocator
(shapes from the meta call) and have tileops write them, so that torch's caching allocator,
its memory statistics and CUDA graphs see every output. The fake (``register_fake`` on torch
2.4 and later, a Meta kernel before) computes the outputs' shapes and dtypes from the manifest
through tileops's own meta call; with symbolic shapes each output extent is expressed in the
input's symbols by probing, and specialised where it is not one of them (or a multiple or
quotient of one).

The CPU and CUDA kernels are C++ (tileops._stablekernel) where torch is 2.10 or later and
exports its stable C shim: registered with torch's dispatcher through that shim, they call
tileops with the tensors lent, outputs from torch's allocator, on torch's current stream, and
take no Python on a call whose output plan is cached. ``KERNELS`` says which kernels are active:
"stable-abi" or "python" (``STABLE_KERNELS_UNAVAILABLE`` then says why); environment variable
``TILEOPS_TORCH_STABLE_KERNELS=0`` keeps the Python kernels. With the C++ kernels a tileops error
of a call through ``torch.ops`` reaches the caller as torch's RuntimeError whose message starts
with the tileops class name ("ValueError: ..."); calls through ``op(...)`` raise the tileops
classes as always.

Under ``torch.compile`` an op instance's ``op(*inputs)`` enters by its boundary operator, so
that ``torch.compile(fn, fullgraph=True)`` captures it as one node. Ops without a boundary
operator (composites, ops without a call-time tensor input) are called through tileops
directly and are not captured.
"""

import ctypes
import os
import threading

import torch

from . import _capi, _op, errors, ops
from .errors import error

_NAMESPACE = "tileops"
_TORCH_VERSION = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2] if p.isdigit())
HAS_REGISTER_FAKE = hasattr(torch.library, "register_fake") and _TORCH_VERSION >= (2, 4)

# The torch library the operators live in; they are unregistered if it is collected.
LIBRARY = torch.library.Library(_NAMESPACE, "DEF")

# Boundary operator name ("tileops::norm_rms_norm_fwd") -> its torch OpOverload.
operators = {}


class _Branch:
    """One boundary operator of one op class: what its schema passes and returns."""

    def __init__(self, spec, boundary):
        self.name = boundary["name"]
        self.short_name = self.name.split("::", 1)[1]
        self.n_inputs = len(spec["inputs"])
        self.spec_inputs = spec["inputs"]
        self.out = boundary["out"]
        written = set(boundary["written"])
        null = set(boundary["null_outputs"])
        input_index = {i["name"]: k for k, i in enumerate(spec["inputs"])}
        # Per output: ("null",), ("input", i), ("out",) or ("returned", position).
        self.outputs = []
        returned = 0
        for o in spec["outputs"]:
            if o["name"] in null:
                self.outputs.append(("null",))
            elif o.get("alias") in written:
                self.outputs.append(("input", input_index[o["alias"]]))
            elif o.get("buffer") == "out" and self.out:
                self.outputs.append(("out",))
            else:
                self.outputs.append(("returned", returned))
                returned += 1
        self.n_returned = returned
        letters = iter("abcdefghijklmnopqrstuvwxyz")
        args = []
        for i in spec["inputs"]:
            kind = "Tensor(%s!)" % next(letters) if i["name"] in written else "Tensor"
            args.append("%s%s %s" % (kind, "?" if "optional" in i else "", i["name"]))
        if self.out:
            args.append("Tensor(%s!) out" % next(letters))
        args.append("str instance_key")
        result = "()" if returned == 0 else "Tensor" if returned == 1 else "(%s)" % ", ".join(["Tensor"] * returned)
        self.schema = "%s(%s) -> %s" % (self.short_name, ", ".join(args), result)

    def split(self, args):
        """(inputs, out, instance key) of an operator call's arguments."""
        inputs = args[: self.n_inputs]
        return inputs, (args[self.n_inputs] if self.out else None), args[-1]

    def returned_indices(self):
        return [o for o, kind in enumerate(self.outputs) if kind[0] == "returned"]

    def result(self, tensors):
        """What the operator returns of the outputs it made, in `tensors` (by returned position)."""
        if self.n_returned == 0:
            return None
        return tensors[0] if self.n_returned == 1 else tuple(tensors)

    def assemble(self, inputs, out, result):
        """The op's outputs (as an eager call returns them) from an operator call's result."""
        returned = () if self.n_returned == 0 else (result,) if self.n_returned == 1 else tuple(result)
        outputs = []
        for kind in self.outputs:
            if kind[0] == "null":
                outputs.append(None)
            elif kind[0] == "input":
                outputs.append(inputs[kind[1]])
            elif kind[0] == "out":
                outputs.append(out)
            else:
                outputs.append(returned[kind[1]])
        return outputs[0] if len(outputs) == 1 else tuple(outputs)


def _facts(t):
    """(shape, dtype name, strides or None when contiguous) of a torch tensor, for meta calls."""
    if t is None:
        return None
    dtype = str(t.dtype)[len("torch.") :]
    return (tuple(t.shape), dtype, None if t.is_contiguous() else tuple(t.stride()))


class _Plans:
    """Output shapes and torch dtypes per op instance and tensor facts, from meta calls: what a real
    kernel allocates before tileops writes. Bounded: cleared when it holds too many."""

    LIMIT = 1024

    def __init__(self):
        self._lock = threading.Lock()
        self._plans = {}

    def get(self, op, inputs, out):
        key = (op.instance_key, *(None if t is None else (t.shape, t.dtype, t.stride()) for t in inputs),
               None if out is None else (out.shape, out.dtype, out.stride()))
        plan = self._plans.get(key)
        if plan is None:
            meta = op.meta([None if t is None else _meta_spec(_facts(t)) for t in inputs],
                           None if out is None else _meta_spec(_facts(out)))
            plan = [None if p is None else (p[0], getattr(torch, p[1])) for p in meta]
            with self._lock:
                if len(self._plans) >= self.LIMIT:
                    self._plans.clear()
                self._plans[key] = plan
        return plan


def _meta_spec(facts):
    shape, dtype, strides = facts
    return (shape, dtype) if strides is None else (shape, dtype, strides)


_plans = _Plans()


def _make_kernel(branch):
    """The CPU and CUDA kernel: outputs from torch's allocator, written by tileops."""
    returned = branch.returned_indices()

    def kernel(*args):
        inputs, out, key = branch.split(args)
        op = _op.find_instance(key)
        plan = _plans.get(op, inputs, out)
        like = next(t for t in inputs if t is not None)
        buffers = [None] * len(plan)
        for o in returned:
            shape, dtype = plan[o]
            buffers[o] = like.new_empty(shape, dtype=dtype)
        op._run(inputs, out, buffers, grad_checked=True)
        return branch.result([buffers[o] for o in returned])

    return kernel


def _contiguous_strides(shape):
    strides, step = [], 1
    for extent in reversed(shape):
        strides.append(step)
        step *= max(extent, 1)
    return tuple(reversed(strides))


# Branch index of tileops._stablekernel -> _Branch, for the plan callback.
_stable_branches = {}


def _stable_plan(index, key, facts):
    """The stable-ABI kernels' plan callback (called with the GIL on a plan-cache miss):
    (shape, dtype name) of each output branch `index` returns for op `key` called on tensors of
    `facts` (per input, then `out`: None or (shape, dtype name, strides)). Raises as the meta
    call does; the kernel then raises torch's RuntimeError "<tileops class>: <message>"."""
    branch = _stable_branches[index]
    op = _op.find_instance(key)
    specs = [None if f is None else (f[0], f[1]) if tuple(f[2]) == _contiguous_strides(f[0]) else f for f in facts]
    inputs, out = specs[: branch.n_inputs], (specs[branch.n_inputs] if branch.out else None)
    plan = op.meta(inputs, out)
    return [plan[o] for o in branch.returned_indices()]


def _torch_library(name):
    """The path of torch's shared library `name` (libtorch_cpu.so), or "" when torch has none."""
    path = os.path.join(os.path.dirname(torch.__file__), "lib", name)
    return path if os.path.exists(path) else ""


def _load_stable_kernels():
    """tileops._stablekernel set up for this torch, or (None, why not)."""
    if os.environ.get("TILEOPS_TORCH_STABLE_KERNELS", "1") == "0":
        return None, "TILEOPS_TORCH_STABLE_KERNELS=0"
    if _TORCH_VERSION < (2, 10):
        return None, "torch %s is older than 2.10 (no stable C shim to register kernels with)" % torch.__version__
    try:
        from . import _stablekernel
    except ImportError as e:
        return None, "tileops._stablekernel is not built (%s)" % e
    cpu = _torch_library("libtorch_cpu.so")
    if not cpu:
        return None, "torch's lib directory has no libtorch_cpu.so"
    hip = getattr(torch.version, "hip", None)
    cuda = _torch_library("libtorch_hip.so" if hip else "libtorch_cuda.so")
    address = lambda f: ctypes.cast(f, ctypes.c_void_p).value
    why = _stablekernel.setup(cpu, cuda, address(_capi.op_call_at), address(_capi.status_kind),
                              address(_capi.status_message), address(_capi.status_free),
                              address(_capi.error_kind_name), address(_capi.tensor_free), 10 if hip else 2,
                              _stable_plan)
    if why:
        return None, why
    return _stablekernel, None


_stable, STABLE_KERNELS_UNAVAILABLE = _load_stable_kernels()
# "stable-abi" when the C++ kernels serve the operators, else "python".
KERNELS = "python"


def _hint(size):
    """The example value of a (possibly symbolic) extent, without adding a guard."""
    if isinstance(size, int):
        return size
    node = size.node
    hint = getattr(node, "hint", None)
    if hint is None:
        hint = node.shape_env.size_hint(node.expr)
    return int(hint)


def _symbolic_extent(base, probe, symbol, hint):
    """`base`, an output extent that became `probe` when `symbol` (of value `hint`) doubled, as
    an expression of `symbol`, or None when it is none of symbol, symbol * k, symbol // k."""
    if base == hint and probe == 2 * hint:
        return symbol
    if base > 0 and hint % base == 0 and probe * (hint // base) == 2 * hint:
        return symbol // (hint // base)
    if hint > 0 and base % hint == 0 and probe == 2 * base:
        return symbol * (base // hint)
    return None


def _fake_plan(op, inputs, out):
    """Output (shape, dtype) per output for fake tensors: concrete extents as the meta call
    gives them; each extent that follows a symbolic input extent is that symbol (or a multiple
    or quotient of it), found by a meta call with the symbol doubled; a symbol no output
    follows that way is specialised (guarded to its value)."""
    tensors = list(inputs) + [out]
    symbols = {}
    for t in tensors:
        if t is None:
            continue
        for size in t.shape:
            if not isinstance(size, int):
                symbols.setdefault(size.node.expr, size)

    def specs(doubled=None):
        result = []
        for t in tensors:
            if t is None:
                result.append(None)
                continue
            shape = tuple(
                2 * _hint(s) if doubled is not None and not isinstance(s, int) and s.node.expr == doubled else _hint(s)
                for s in t.shape
            )
            dtype = str(t.dtype)[len("torch.") :]
            result.append((shape, dtype) if t.is_contiguous() else (shape, dtype, tuple(_hint(s) for s in t.stride())))
        return result[:-1], result[-1]

    base = op.meta(*specs())
    if not symbols:
        return base
    shapes = [None if p is None else list(p[0]) for p in base]
    for expr, symbol in symbols.items():
        hint = _hint(symbol)
        try:
            probe = op.meta(*specs(expr))
        except errors.Error:
            probe = None
        for o, plan in enumerate(base):
            if plan is None:
                continue
            for axis, extent in enumerate(plan[0]):
                probed = None if probe is None or probe[o] is None or len(probe[o][0]) != len(plan[0]) else probe[o][0][axis]
                if probed is None or probed == extent:
                    continue
                symbolic = _symbolic_extent(extent, probed, symbol, hint)
                if symbolic is None or not isinstance(shapes[o][axis], int):
                    int(symbol)  # specialise: this symbol's value is part of the graph's guards
                    continue
                shapes[o][axis] = symbolic
        if probe is None:
            int(symbol)
    return [None if p is None else (tuple(shapes[o]), p[1]) for o, p in enumerate(base)]


def _make_fake(branch):
    """The fake: outputs of the manifest's shapes and dtypes, nothing run."""
    returned = branch.returned_indices()

    def fake(*args):
        inputs, out, key = branch.split(args)
        op = _op.find_instance(key)
        plan = _fake_plan(op, inputs, out)
        like = next(t for t in inputs if t is not None)
        return branch.result([like.new_empty(plan[o][0], dtype=getattr(torch, plan[o][1])) for o in returned])

    return fake


def _register_stable(branch, key):
    """Registers the C++ kernel of `branch` for dispatch key `key`; False when the Python kernel
    must serve it (no stable kernels, or no slot left: STABLE_KERNELS_UNAVAILABLE says why)."""
    global KERNELS, STABLE_KERNELS_UNAVAILABLE
    if _stable is None:
        return False
    optional = ["optional" in i for i in branch.spec_inputs]
    index, why = _stable.register(branch.short_name, optional, branch.out, len(branch.outputs),
                                  branch.returned_indices(), key)
    if index < 0:
        STABLE_KERNELS_UNAVAILABLE = "%s: %s" % (branch.name, why)
        return False
    _stable_branches[index] = branch
    _stable_registered.append((branch, key))
    KERNELS = "stable-abi"
    return True


# (branch, dispatch key) of every C++ kernel registered, and each branch's Python kernel.
_stable_registered = []
_python_kernels = {}


def _probe_stable_kernels():
    """One call through a C++ kernel (RMSNorm on the CPU); when it fails (a torch whose shim
    converts arguments differently than expected), every C++ kernel is unregistered and the
    Python kernels take their place. Returns why it failed, or None."""
    global KERNELS
    try:
        norm = ops.RMSNormFwdOp([4])
        x = torch.ones(2, 4)
        y = getattr(torch.ops, _NAMESPACE).norm_rms_norm_fwd(x, None, norm.instance_key)
        if tuple(y.shape) != (2, 4) or not torch.allclose(y, x, atol=1e-3):
            raise AssertionError("wrong result %r" % (y,))
        return None
    except Exception as e:  # noqa: BLE001 - any failure means: not these kernels
        _stable.unregister_all()
        _op._kernel_registry = None
        for branch, key in _stable_registered:
            LIBRARY.impl(branch.short_name, _python_kernels[branch.name], key)
        _stable_registered.clear()
        _stable_branches.clear()
        KERNELS = "python"
        return "a probe call through the stable-ABI kernels failed (%s: %s)" % (type(e).__name__, e)


def _register(cls):
    for boundary in cls._spec["boundary_operators"]:
        branch = _Branch(cls._spec, boundary)
        LIBRARY.define(branch.schema)
        kernel = _make_kernel(branch)
        _python_kernels[branch.name] = kernel
        for key in ("CPU", "CUDA"):
            if not _register_stable(branch, key):
                LIBRARY.impl(branch.short_name, kernel, key)
        fake = _make_fake(branch)
        if HAS_REGISTER_FAKE:
            torch.library.register_fake(branch.name, fake, lib=LIBRARY)
        else:
            LIBRARY.impl(branch.short_name, fake, "Meta")
            # Debian's torch 1.13 has no autograd fallthrough for meta tensors.
            LIBRARY.impl(branch.short_name, fake, "AutogradMeta")
        operators[branch.name] = (getattr(getattr(torch.ops, _NAMESPACE), branch.short_name).default, branch)


for _name in ops.__all__:
    _register(getattr(ops, _name))
if KERNELS == "stable-abi":
    _op.use_kernel_registry(_stable)
    _probe_failure = _probe_stable_kernels()
    if _probe_failure is not None:
        STABLE_KERNELS_UNAVAILABLE = _probe_failure


def boundary_call(op, inputs, out):
    """Calls op instance `op` on `inputs` (one per manifest input) and `out` through the torch
    operator of the boundary operator such a call enters by; returns the outputs as op(...)
    does. Raises tileops.OpNotAvailableError for an op without a compile boundary; inputs that
    no branch admits are called through tileops directly, which raises the error."""
    if not op._boundaries:
        raise error(
            "OpNotAvailableError",
            "%s has no compile boundary (a composite, or no call-time tensor input); call it outside "
            "torch.compile" % op._name,
        )
    name = op._boundary_names.get((tuple(t is not None for t in inputs), out is not None))
    if name is None:
        return op._run(inputs, out, None)
    operator, branch = operators[name]
    args = list(inputs) + ([out] if branch.out else []) + [op.instance_key]
    return branch.assemble(inputs, out, operator(*args))


def _compiling():
    return torch.compiler.is_compiling()


if hasattr(torch, "compiler") and hasattr(torch.compiler, "is_compiling"):
    _op.enter_by_boundary(_compiling, boundary_call)
