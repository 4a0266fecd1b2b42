"""Op, the base of every class in tileops.ops: construction from manifest parameters, calls on
DLPack tensors, the call record, meta calls and boundary operators, all through the C API."""

import ctypes
import json
import threading
import weakref
from ctypes import byref, c_char_p, c_int32, c_void_p

from . import _capi, _lend, _tensors, errors
from .errors import error

_DTYPE_NAMES = frozenset(
    ["bool", "int8", "uint8", "int32", "int64", "float16", "bfloat16", "float32", "float64", "dtype"]
)

# Whether the library takes lent DLTensors (C API 1.2); an older one gets DLPack capsules.
_LENDS = _capi.library_version().api_minor >= 2

# tileops._fastcall once set up (False where it was not built), for calls on torch tensors.
_fast = None


def _fast_module(torch):
    """tileops._fastcall set up for `torch`, or False where it was not built."""
    global _fast
    try:
        from . import _fastcall
    except ImportError:
        _fast = False
        return _fast
    current_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None) if torch.cuda.is_available() else None
    bool_view = None if _tensors._torch_reads_kdlbool(torch) else (lambda t: t.view(torch.bool))
    _fastcall.setup(ctypes.cast(_capi.op_call_at, c_void_p).value, torch.Tensor, torch.nn.Parameter, torch._C._to_dlpack,
                    torch._C._from_dlpack, torch.is_grad_enabled, current_stream, bool_view)
    _fast = _fastcall
    return _fast


# Live op instances by instance key, for the boundary operators of tileops.torch.
_instances = weakref.WeakValueDictionary()

# Set by tileops.torch: whether torch.compile is tracing, and the call through an op's
# boundary operator that a traced call makes instead of calling into C.
_compiling = None
_boundary_call = None


# Set by tileops.torch when its stable-ABI kernels are active: tileops._stablekernel, whose
# registry (instance key -> op handle) every live instance is in, so that those kernels find it.
_kernel_registry = None


def use_kernel_registry(registry):
    """Puts every live instance, and every one created from now on, into `registry`
    (add_op(key, handle); remove_op(key) before the handle is freed)."""
    global _kernel_registry
    _kernel_registry = registry
    for key, op in list(_instances.items()):
        if op._handle:
            registry.add_op(key, op._handle)


def enter_by_boundary(compiling, boundary_call):
    """Makes calls of ops with a compile boundary enter by `boundary_call(op, inputs, out)`
    while `compiling()` is true (tileops.torch: under torch.compile)."""
    global _compiling, _boundary_call
    _compiling, _boundary_call = compiling, boundary_call


def find_instance(key):
    """The live Op registered under instance key `key`. Raises tileops.RuntimeError when it is
    gone (or never was)."""
    op = _instances.get(key)
    if op is None:
        raise error("RuntimeError", "no live tileops op has instance key '%s'; it was destroyed or never created" % key)
    return op


def op_specs():
    """The C API's description of every in-tree op (tileops_ops_json), as dicts."""
    return json.loads(_capi.take_string(_capi.ops_json, None))


def _alternatives(decl):
    return [a.strip() for a in decl.get("type", "").split("|")]


def _dtype_name(value):
    """The tileops name of a torch or NumPy dtype, or None for anything else."""
    torch = _tensors._torch()
    if torch is not None and isinstance(value, torch.dtype):
        return str(value)[len("torch.") :]
    numpy = _tensors._numpy()
    if numpy is not None and (isinstance(value, numpy.dtype) or (isinstance(value, type) and issubclass(value, numpy.generic))):
        return numpy.dtype(value).name
    return None


def _set_param(params, op_name, decl, name, value):
    """Sets parameter `name` of C parameter map `params` to Python `value`, by the value's kind
    (a str by the manifest type: a dtype, a device or a string). The core checks it against
    the manifest when the op is created."""
    key = name.encode()
    if value is None:
        return _capi.params_set_none(params, key)
    if isinstance(value, bool):
        return _capi.params_set_bool(params, key, int(value))
    if isinstance(value, int):
        if not -(2**63) <= value < 2**63:
            raise error("ValueError", "%s: parameter '%s' = %d does not fit in int64" % (op_name, name, value))
        return _capi.params_set_int(params, key, value)
    if isinstance(value, float):
        return _capi.params_set_float(params, key, value)
    if isinstance(value, str):
        kinds = _alternatives(decl) if decl else []
        if "str" not in kinds and any(k in _DTYPE_NAMES for k in kinds):
            return _capi.params_set_dtype(params, key, value.encode())
        if "str" not in kinds and "device" in kinds:
            return _capi.params_set_device(params, key, value.encode())
        return _capi.params_set_string(params, key, value.encode())
    dtype = _dtype_name(value)
    if dtype is not None:
        return _capi.params_set_dtype(params, key, dtype.encode())
    torch = _tensors._torch()
    if torch is not None and isinstance(value, torch.device):
        return _capi.params_set_device(params, key, str(value).encode())
    if isinstance(value, (list, tuple)):
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
            raise error(
                "TypeError", "%s: parameter '%s' must be a list of ints, not %r" % (op_name, name, list(value))
            )
        items = (ctypes.c_int64 * len(value))(*value)
        return _capi.params_set_int_list(params, key, items, len(value))
    if hasattr(value, "__dlpack__"):
        tensor = _tensors.from_dlpack(value)
        return _capi.params_set_tensor(params, key, tensor._handle)
    raise error(
        "TypeError",
        "%s: parameter '%s' cannot be a %s; it takes None, bool, int, float, str, a dtype, a device, "
        "a list of ints or a tensor" % (op_name, name, type(value).__name__),
    )


class _Params:
    """A C parameter map, freed with this object."""

    def __init__(self):
        handle = c_void_p()
        _capi.check(_capi.params_create(byref(handle)))
        self.handle = handle.value

    def __del__(self, _free=_capi.params_free):
        handle, self.handle = self.handle, None
        if handle:
            _free(handle)


def _create(name, params, target):
    handle = c_void_p()
    _capi.check(_capi.op_create(name.encode(), params.handle, None if target is None else target.encode(), byref(handle)))
    return handle.value


class _Scratch(threading.local):
    """One thread's ctypes structures for calls of one op: filled anew by each call."""

    def __init__(self, n_inputs, n_outputs):
        self.inputs = (_capi.TensorRef * max(n_inputs, 1))()
        self.outputs = (_capi.TensorRef * max(n_outputs, 1))()
        self.buffers = (_capi.TensorRef * max(n_outputs, 1))()
        self.sources = (c_int32 * max(n_outputs, 1))()
        self.call = _capi.Call()
        self.call.struct_size = ctypes.sizeof(_capi.Call)
        self.call.num_inputs = n_inputs
        self.call.inputs = self.inputs
        self.call.num_outputs = n_outputs
        self.call.outputs = self.outputs
        self.call.output_sources = self.sources
        self.call_ref = byref(self.call)
        self.lent = _lend.Slots(n_inputs, n_outputs)


class Op:
    """A tileops op instance. Subclasses (tileops.ops.<Name>) are generated from the manifests;
    each carries its manifest entry in ``_spec``.

    ``Op(*params, target=None, **params)``: the manifest parameters, positionally in manifest
    order (keyword-only ones by name only) or by name; missing ones take their defaults. Errors
    as the C++ construction (tileops.TypeError, tileops.ValueError, ...).

    ``op(*inputs, out=None, **inputs)``: a call on tensors (torch tensors, NumPy arrays, any
    object with ``__dlpack__``, tileops.Tensor), one per manifest input, by position or name
    (optional ones may be left out or None). Returns the output, or a tuple of them (None for a
    null output): an input the call wrote and ``out`` are returned as the objects passed; new
    outputs as torch tensors when the first tensor argument is one (then on its device's current
    torch stream), NumPy arrays for NumPy arrays, else tileops.Tensor.
    """

    _spec = None

    @classmethod
    def _prepare(cls):
        """Settles what every call reads of the manifest entry, once per class."""
        spec = cls._spec
        cls._name = spec["name"]
        cls._input_names = tuple(i["name"] for i in spec["inputs"])
        cls._output_names = tuple(o["name"] for o in spec["outputs"])
        cls._optional = tuple("optional" in i for i in spec["inputs"])
        cls._input_labels = tuple("%s: input '%s'" % (cls._name, n) for n in cls._input_names)
        cls._param_decls = {p["name"]: p for p in spec["params"]}
        cls._positional_params = tuple(p["name"] for p in spec["params"] if not p.get("kw_only"))
        cls._boundaries = {b["name"]: b for b in spec["boundary_operators"]}
        cls._takes_out = any(o.get("buffer") == "out" for o in spec["outputs"])
        cls._n_inputs = len(cls._input_names)
        cls._n_outputs = len(cls._output_names)

    def __init__(self, *args, target=None, **kwargs):
        cls = type(self)
        if len(args) > len(cls._positional_params):
            raise error(
                "TypeError",
                "%s takes at most %d positional parameter(s) (%s), got %d"
                % (cls._name, len(cls._positional_params), ", ".join(cls._positional_params) or "none", len(args)),
            )
        given = dict(zip(cls._positional_params, args))
        for name, value in kwargs.items():
            if name in given:
                raise error("TypeError", "%s got parameter '%s' twice" % (cls._name, name))
            given[name] = value
        params = _Params()
        for name, value in given.items():
            _capi.check(_set_param(params.handle, cls._name, cls._param_decls.get(name), name, value))
        self._handle = None
        self._params = params
        self._target = target
        self._handle = _create(cls._name, params, target)
        key = c_char_p()
        _capi.check(_capi.op_instance_key(self._handle, byref(key)))
        self.instance_key = key.value.decode()
        self._meta_handle = None
        self._meta_lock = threading.Lock()
        self._scratch = _Scratch(len(cls._input_names), len(cls._output_names))
        self._boundary_names = self._all_boundary_names()
        _instances[self.instance_key] = self
        if _kernel_registry is not None:
            _kernel_registry.add_op(self.instance_key, self._handle)

    def __del__(self, _free=_capi.op_free):
        registry = _kernel_registry
        key = getattr(self, "instance_key", None)
        if registry is not None and key is not None and getattr(self, "_handle", None):
            registry.remove_op(key)  # returns once no stable-ABI kernel uses the handle
        for attr in ("_handle", "_meta_handle"):
            handle = getattr(self, attr, None)
            if handle:
                setattr(self, attr, None)
                _free(handle)

    def __repr__(self):
        return "tileops.ops.%s(%s)" % (
            self._name,
            ", ".join("%s=%r" % kv for kv in self.description()["params"].items()),
        )

    # ---- Calls ----------------------------------------------------------------------------

    def __call__(self, *args, out=None, **kwargs):
        if kwargs or len(args) != self._n_inputs:
            args = self._bind_inputs(args, kwargs)
        if _compiling is not None and self._boundaries and _compiling():
            return _boundary_call(self, args, out)
        if _fast:
            answer = _fast.call(self._handle, args, out, None, self._n_outputs, True)
            if answer is not NotImplemented:
                if answer[0]:
                    _capi.check(answer[0])
                return answer[1]
        return self._run(args, out, None)

    def _bind_inputs(self, args, kwargs):
        names = self._input_names
        if len(args) > len(names):
            raise error(
                "TypeError",
                "%s takes %d input(s) (%s), got %d" % (self._name, len(names), ", ".join(names), len(args)),
            )
        tensors = list(args) + [None] * (len(names) - len(args))
        for name, value in kwargs.items():
            if name not in names:
                raise error(
                    "TypeError", "%s has no input '%s'; its inputs are: %s" % (self._name, name, ", ".join(names))
                )
            index = names.index(name)
            if index < len(args):
                raise error("TypeError", "%s got input '%s' twice" % (self._name, name))
            tensors[index] = value
        return tensors

    def _run(self, tensors, out, buffers, grad_checked=False):
        """One call through the C API; `buffers` (per output, or None) receive the outputs.
        `grad_checked`: autograd is not a concern of this call (a torch operator's kernel), so
        tensors that require grad pass. Torch tensors are lent to the call (tileops._lend)
        when every tensor argument can be; anything else crosses as DLPack capsules."""
        if _LENDS:
            torch = _tensors._torch()
            if torch is not None:
                fast = _fast if _fast is not None else _fast_module(torch)
                if fast:
                    answer = fast.call(self._handle, tensors, out, buffers, self._n_outputs, not grad_checked)
                    if answer is not NotImplemented:
                        if answer[0]:
                            _capi.check(answer[0])
                        return answer[1]
                slots = self._scratch.lent
                if slots.fill(tensors, out, buffers, torch, not grad_checked):
                    return self._run_lent(slots, tensors, out, buffers)
        first = out
        for t in tensors:
            if t is not None:
                first = t
                break
        kind = _tensors.result_kind(first)
        labels = self._input_labels
        check_grad = not grad_checked
        capsules = [
            None if t is None or isinstance(t, _tensors.Tensor) else _tensors.capsule_of(t, labels[i], check_grad)
            for i, t in enumerate(tensors)
        ]
        out_capsule = None
        if out is not None and not isinstance(out, _tensors.Tensor):
            out_capsule = _tensors.capsule_of(out, "%s: 'out'" % self._name, check_grad)
        buffer_capsules = None
        if buffers is not None:
            buffer_capsules = [
                None if b is None else _tensors.capsule_of(b, "%s: an output buffer" % self._name, check_grad)
                for b in buffers
            ]
        # From here on nothing raises before the C API owns every capsule's tensor.
        scratch = self._scratch
        refs = scratch.inputs
        for i, t in enumerate(tensors):
            ref = refs[i]
            if capsules[i] is not None:
                capsules[i].take(ref)
            elif t is None:
                ref.kind, ref.ptr = _capi.REF_NONE, None
            else:
                ref.kind, ref.flags, ref.ptr = _capi.REF_TENSOR, 0, t._handle
        call = scratch.call
        _fill_ref(call.out, out, out_capsule)
        if buffer_capsules is not None:
            for o, b in enumerate(buffers):
                _fill_ref(scratch.buffers[o], b, buffer_capsules[o])
            call.output_buffers = scratch.buffers
        else:
            call.output_buffers = None
        ref_kind, ref_flags = _tensors.output_ref_kind(kind)
        outputs = scratch.outputs
        n_outputs = len(self._output_names)
        for o in range(n_outputs):
            outputs[o].kind, outputs[o].flags = ref_kind, ref_flags
        call.use_stream = 0
        if kind == _tensors.ResultKind.TORCH and first.is_cuda:
            index = first.get_device()
            call.use_stream = 1
            call.stream_device.device_type = _capi.KDL_CUDA
            call.stream_device.device_id = index
            call.stream = _tensors.torch_current_stream(index)
        _capi.check(_capi.op_call(self._handle, scratch.call_ref))
        return _results(scratch.sources, outputs, n_outputs, tensors, out, buffers,
                        lambda ptr: _tensors.wrap_output(kind, ptr))

    def _run_lent(self, slots, tensors, out, buffers):
        _capi.check(_capi.op_call_at(self._handle, slots.address))
        return _results(slots.sources, slots.outputs, self._n_outputs, tensors, out, buffers, _tensors.torch_from_export)

    # ---- What the instance is and did ------------------------------------------------------

    @property
    def last_call(self):
        """The record of the last completed call as a dict: op, indices, branch_key, device,
        tensors, traffic, written, has_out, kernels (the kernel keys, or the target's name, that
        served it), stages (a composite's sub-op calls, each a record of its own) and roofline
        ({flops, bytes} of the call, from the manifest). Raises tileops.RuntimeError before any
        call completed."""
        return json.loads(_capi.take_string(_capi.op_last_call_json, self._handle))

    def description(self):
        """{name, instance_key, target, serving_target, params, kernels, caches}: the
        instance's parameters, the kernels it built and its caches' counts."""
        return json.loads(_capi.take_string(_capi.op_json, self._handle))

    @property
    def params(self):
        """Every manifest parameter's value (given or default)."""
        return self.description()["params"]

    @property
    def serving_target(self):
        """The target the instance selected ("builtin", "reference", a plugin's), or None
        before its first call that ran an implementation."""
        return self.description()["serving_target"]

    # ---- Meta calls and boundary operators -------------------------------------------------

    def _meta_op(self):
        """A second instance with the same parameters for meta calls, so that they leave this
        one's last_call alone."""
        with self._meta_lock:
            if self._meta_handle is None:
                self._meta_handle = _create(self._name, self._params, self._target)
            return self._meta_handle

    def meta(self, inputs, out=None):
        """The outputs of a call on tensors described by `inputs` (one per manifest input: None,
        or (shape, dtype) or (shape, dtype, strides) with dtype a tileops name) and `out`
        (likewise): a list of (shape, dtype) per output, None for a null output. The signature
        check runs as for a real call (its errors included); nothing is allocated or run."""
        if len(inputs) != len(self._input_names):
            raise error(
                "TypeError",
                "%s takes %d input(s) (%s), got %d"
                % (self._name, len(self._input_names), ", ".join(self._input_names), len(inputs)),
            )
        meta_inputs = [None if d is None else _tensors.empty(d[0], d[1], "meta", d[2] if len(d) > 2 else None) for d in inputs]
        meta_out = None if out is None else _tensors.empty(out[0], out[1], "meta", out[2] if len(out) > 2 else None)
        n_outputs = len(self._output_names)
        refs = (_capi.TensorRef * max(len(meta_inputs), 1))()
        for i, t in enumerate(meta_inputs):
            if t is not None:
                refs[i].kind, refs[i].ptr = _capi.REF_TENSOR, t._handle
        outputs = (_capi.TensorRef * max(n_outputs, 1))()
        for o in range(n_outputs):
            outputs[o].kind = _capi.REF_TENSOR
        sources = (c_int32 * max(n_outputs, 1))()
        call = _capi.Call(struct_size=ctypes.sizeof(_capi.Call), num_inputs=len(meta_inputs), inputs=refs,
                          num_outputs=n_outputs, outputs=outputs, output_sources=sources)
        _fill_ref(call.out, meta_out, None)
        _capi.check(_capi.op_call(self._meta_op(), byref(call)))
        result = []
        for o in range(n_outputs):
            source = sources[o]
            if source >= 0:
                result.append((tuple(inputs[source][0]), inputs[source][1]))
            elif source == _capi.OUTPUT_OUT:
                result.append((tuple(out[0]), out[1]))
            elif outputs[o].ptr is None:
                result.append(None)
            else:
                tensor = _tensors.Tensor(outputs[o].ptr)
                result.append((tensor.shape, tensor.dtype))
        return result

    def boundary_operator(self, present, out=False):
        """The boundary operator ("tileops::norm_rms_norm_fwd") a call passing the inputs whose
        flags in `present` are true (one per manifest input) and, with `out`, an out buffer
        enters by. Raises tileops.TypeError as the C API does (no compile boundary, a required
        input absent, ...)."""
        flags = (ctypes.c_uint8 * max(len(present), 1))(*[1 if p else 0 for p in present])
        name = c_char_p()
        _capi.check(_capi.op_boundary_operator(self._handle, flags, len(present), 1 if out else 0, byref(name)))
        return name.value.decode()

    def _all_boundary_names(self):
        """{(presence flags, out passed): boundary operator name} for every call pattern the op
        admits: what a compiled call picks its torch custom op by without calling into C."""
        if not self._boundaries:
            return {}
        optional = [i for i, o in enumerate(self._optional) if o]
        names = {}
        for mask in range(1 << len(optional)):
            present = [True] * len(self._input_names)
            for bit, i in enumerate(optional):
                present[i] = bool(mask >> bit & 1)
            for out in (False, True) if self._takes_out else (False,):
                try:
                    names[(tuple(present), out)] = self.boundary_operator(present, out)
                except errors.Error:
                    continue  # a call passing these raises the error itself
        return names


def _results(sources, outputs, n_outputs, tensors, out, buffers, wrap):
    """A completed call's result as the caller gets it, from its output sources and refs: an
    input the call wrote, `out` and an output buffer as the objects passed, a null output as
    None, a new one as `wrap(ptr)`; one output alone, several as a tuple."""
    results = []
    for o in range(n_outputs):
        source = sources[o]
        if source >= 0:
            results.append(tensors[source])
        elif source == _capi.OUTPUT_OUT:
            results.append(out)
        elif source == _capi.OUTPUT_BUFFER:
            results.append(buffers[o])
        else:
            ptr = outputs[o].ptr
            results.append(None if ptr is None else wrap(ptr))
    return results[0] if n_outputs == 1 else tuple(results)


def _fill_ref(ref, obj, capsule):
    if capsule is not None:
        capsule.take(ref)
    elif obj is None:
        ref.kind, ref.flags, ref.ptr = _capi.REF_NONE, 0, None
    else:
        ref.kind, ref.flags, ref.ptr = _capi.REF_TENSOR, 0, obj._handle
