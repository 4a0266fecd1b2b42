"""Tensors crossing into and out of tileops, without copies.

In: any object with ``__dlpack__`` (torch tensors, NumPy arrays, CuPy arrays, tileops.Tensor),
as a DLPack capsule whose managed tensor the C API takes over. Out: new tensors as the caller's
kind: torch tensors when the call's tensors were torch tensors, NumPy arrays (writable views
through ``__array_interface__``) for NumPy arrays, else tileops.Tensor (which has
``__dlpack__`` itself).
"""

import ctypes
import sys
from ctypes import c_char_p, c_int, c_void_p, py_object

from . import _capi
from .errors import error

_LEGACY = b"dltensor"
_VERSIONED = b"dltensor_versioned"
_USED_LEGACY = b"used_dltensor"
_USED_VERSIONED = b"used_dltensor_versioned"
_KDL_BOOL = 6
_KDL_UINT = 1
# The offset of dl_tensor.dtype.code in DLManagedTensor: data, device, ndim come first.
_DTYPE_CODE_OFFSET = _capi.DLTensor.dtype.offset + _capi.DLDataType.code.offset

_pyapi = ctypes.pythonapi
_capsule_is_valid = ctypes.PYFUNCTYPE(c_int, py_object, c_char_p)(("PyCapsule_IsValid", _pyapi))
_capsule_pointer = ctypes.PYFUNCTYPE(c_void_p, py_object, c_char_p)(("PyCapsule_GetPointer", _pyapi))
_capsule_set_name = ctypes.PYFUNCTYPE(c_int, py_object, c_char_p)(("PyCapsule_SetName", _pyapi))
_capsule_new = ctypes.PYFUNCTYPE(py_object, c_void_p, c_char_p, c_void_p)(("PyCapsule_New", _pyapi))
# The same, on a capsule being destroyed: no new reference may be taken to it.
_raw_is_valid = ctypes.PYFUNCTYPE(c_int, c_void_p, c_char_p)(("PyCapsule_IsValid", _pyapi))
_raw_pointer = ctypes.PYFUNCTYPE(c_void_p, c_void_p, c_char_p)(("PyCapsule_GetPointer", _pyapi))


@ctypes.CFUNCTYPE(None, c_void_p)
def _release_unconsumed(capsule):
    """The destructor of the capsules this package makes: a capsule no consumer renamed still
    owns its managed tensor, whose deleter runs here."""
    if _raw_is_valid(capsule, _LEGACY):
        managed = _capi.DLManagedTensor.from_address(_raw_pointer(capsule, _LEGACY))
        if managed.deleter:
            managed.deleter(ctypes.pointer(managed))
    elif _raw_is_valid(capsule, _VERSIONED):
        managed = _capi.DLManagedTensorVersioned.from_address(_raw_pointer(capsule, _VERSIONED))
        if managed.deleter:
            managed.deleter(ctypes.pointer(managed))


_RELEASE_UNCONSUMED = ctypes.cast(_release_unconsumed, c_void_p)


_torch_module = None


def _torch():
    """The torch module once the process imported it, else None (tileops never imports it)."""
    global _torch_module
    if _torch_module is None:
        _torch_module = sys.modules.get("torch")
    return _torch_module


def _numpy():
    return sys.modules.get("numpy")


_torch_reads_dlbool = None


def _torch_reads_kdlbool(torch):
    """Whether this torch has kDLBool in DLPack (2.x exports and imports it; 1.13 refuses bool)."""
    global _torch_reads_dlbool
    if _torch_reads_dlbool is None:
        try:
            torch._C._to_dlpack(torch.zeros(1, dtype=torch.bool))
            _torch_reads_dlbool = True
        except RuntimeError:
            _torch_reads_dlbool = False
    return _torch_reads_dlbool


class Capsule:
    """A DLPack capsule about to be handed to the C API: its ref kind (legacy or versioned) and
    import flags. ``take()`` moves its managed tensor out into a TensorRef, renaming the capsule
    as consumed."""

    __slots__ = ("capsule", "kind", "flags")

    def __init__(self, capsule, kind, flags):
        self.capsule = capsule
        self.kind = kind
        self.flags = flags

    def take(self, ref):
        if self.kind == _capi.REF_DLPACK:
            ref.ptr = _capsule_pointer(self.capsule, _LEGACY)
            _capsule_set_name(self.capsule, _USED_LEGACY)
        else:
            ref.ptr = _capsule_pointer(self.capsule, _VERSIONED)
            _capsule_set_name(self.capsule, _USED_VERSIONED)
        ref.kind = self.kind
        ref.flags = self.flags


def capsule_of(obj, what, check_grad=True):
    """The DLPack capsule of `obj` (anything with ``__dlpack__``) for an import, checked to be
    one. With `check_grad`, a torch tensor that requires grad while grad mode is on is refused:
    tileops records no autograd graph. Raises tileops.TypeError naming `what` otherwise."""
    torch = _torch()
    if torch is not None and isinstance(obj, torch.Tensor):
        if check_grad and obj.requires_grad and torch.is_grad_enabled():
            raise error(
                "TypeError",
                "%s requires grad, but tileops ops record no autograd graph; call under torch.no_grad() "
                "or pass %s.detach()" % (what, what.split(" ")[-1].strip("'")),
            )
        if obj.dtype == torch.bool:
            return Capsule(torch._C._to_dlpack(obj.view(torch.uint8)), _capi.REF_DLPACK, _capi.DLPACK_UINT8_AS_BOOL)
        return Capsule(torch._C._to_dlpack(obj), _capi.REF_DLPACK, 0)
    export = getattr(obj, "__dlpack__", None)
    if export is None:
        raise error("TypeError", "%s must be a tensor (an object with __dlpack__), not %s" % (what, type(obj).__name__))
    kwargs = {}
    device = obj.__dlpack_device__() if hasattr(obj, "__dlpack_device__") else (_capi.KDL_CPU, 0)
    if device[0] in (_capi.KDL_CUDA, _capi.KDL_ROCM):
        stream = current_stream("%s:%d" % ("cuda" if device[0] == _capi.KDL_CUDA else "hip", device[1]))
        kwargs["stream"] = stream if stream else (1 if device[0] == _capi.KDL_CUDA else 0)
    try:
        capsule = export(max_version=(1, 0), **kwargs)
    except TypeError:
        capsule = export(**kwargs)
    if _capsule_is_valid(capsule, _VERSIONED):
        return Capsule(capsule, _capi.REF_DLPACK_VERSIONED, 0)
    if _capsule_is_valid(capsule, _LEGACY):
        return Capsule(capsule, _capi.REF_DLPACK, 0)
    raise error("TypeError", "%s: __dlpack__ returned %s, not a DLPack capsule" % (what, type(capsule).__name__))


def torch_current_stream(index):
    """torch's current stream of CUDA device `index` as an int (0: the legacy default stream)."""
    torch = _torch()
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    return raw(index) if raw is not None else torch.cuda.current_stream(index).cuda_stream


def current_stream(device):
    """The calling thread's current tileops stream of `device` ("cuda:0") as an int (0: the
    default stream)."""
    stream = c_void_p()
    _capi.check(_capi.current_stream(device.encode(), ctypes.byref(stream)))
    return stream.value or 0


# NumPy's type strings of the tileops dtypes it has (little-endian; the last digit is the size).
_NUMPY_TYPESTR = {
    "bool": "|b1",
    "int8": "|i1",
    "uint8": "|u1",
    "int32": "<i4",
    "int64": "<i8",
    "float16": "<f2",
    "float32": "<f4",
    "float64": "<f8",
}


class Tensor:
    """A tileops tensor: a handle on memory tileops owns or imported, shape, strides (in
    elements), dtype and device. It exchanges itself through DLPack: ``torch.from_dlpack(t)``,
    ``numpy.from_dlpack(t)``, ``tileops.from_dlpack(t)``."""

    __slots__ = ("_handle", "_info")

    def __init__(self, handle):
        self._handle = handle
        self._info = None

    def __del__(self, _free=_capi.tensor_free):
        handle, self._handle = self._handle, None
        if handle:
            _free(handle)

    def _facts(self):
        if self._info is None:
            info = _capi.TensorInfo()
            info.struct_size = ctypes.sizeof(_capi.TensorInfo)
            _capi.check(_capi.tensor_get_info(self._handle, ctypes.byref(info)))
            self._info = info
        return self._info

    @property
    def shape(self):
        info = self._facts()
        return tuple(info.shape[i] for i in range(info.ndim))

    @property
    def strides(self):
        """Strides in elements."""
        info = self._facts()
        return tuple(info.strides[i] for i in range(info.ndim))

    @property
    def dtype(self):
        """The dtype's name: "float32", "bfloat16", "bool", ..."""
        return self._facts().dtype.decode()

    @property
    def device(self):
        """"cpu", "meta", "cuda:0", ..."""
        info = self._facts()
        kind = info.device_type.decode()
        return kind if kind in ("cpu", "meta") else "%s:%d" % (kind, info.device_index)

    @property
    def data_ptr(self):
        """The address of the first element (0 for meta tensors and empty storage)."""
        return self._facts().data or 0

    @property
    def read_only(self):
        """True for memory its producer lent for reading only: no op call writes it."""
        return bool(self._facts().read_only)

    def __repr__(self):
        return "tileops.Tensor(%s%s, %s%s)" % (
            self.dtype,
            list(self.shape),
            self.device,
            ", read-only" if self.read_only else "",
        )

    def __dlpack_device__(self):
        info = self._facts()
        kind = info.device_type.decode()
        codes = {"cpu": _capi.KDL_CPU, "cuda": _capi.KDL_CUDA, "hip": _capi.KDL_ROCM}
        if kind not in codes:
            raise error("TypeError", "a %s tensor has no DLPack device" % kind)
        return codes[kind], info.device_index

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        """A capsule of this tensor, without copying: DLPack 1.x ("dltensor_versioned", read-only
        flagged when the memory is) for a consumer passing max_version (1, x) or later, else the
        legacy DLManagedTensor (bool with kDLBool, as DLPack 0.8 and later write it). The memory is ordered on the current stream; `stream` is not
        waited for. A copy (copy=True) or another device is refused."""
        if copy:
            raise error("ValueError", "tileops.Tensor.__dlpack__ exports without copying; copy=True is refused")
        if dl_device is not None and tuple(dl_device) != self.__dlpack_device__():
            raise error("ValueError", "tileops.Tensor.__dlpack__: the tensor is on %s, not on %s" % (self.device, dl_device))
        managed = c_void_p()
        if max_version is not None and max_version[0] >= 1:
            _capi.check(
                _capi.tensor_to_dlpack_versioned(self._handle, max_version[0], max_version[1], 0, ctypes.byref(managed))
            )
            return _capsule_new(managed, _VERSIONED, _RELEASE_UNCONSUMED)
        _capi.check(_capi.tensor_to_dlpack(self._handle, _capi.DLPACK_LEGACY_BOOL, ctypes.byref(managed)))
        return _capsule_new(managed, _LEGACY, _RELEASE_UNCONSUMED)

    @property
    def __array_interface__(self):
        """NumPy's view of a host tensor (numpy.asarray(t) shares its memory, writable unless
        the tensor is read-only). bfloat16, which NumPy lacks, and device tensors are refused."""
        info = self._facts()
        if info.device_type != b"cpu":
            raise error("TypeError", "a %s tensor is not in host memory; NumPy cannot view it" % self.device)
        dtype = self.dtype
        if dtype not in _NUMPY_TYPESTR:
            raise error("TypeError", "NumPy has no %s; convert the tensor with torch (tensor.to_torch())" % dtype)
        size = int(_NUMPY_TYPESTR[dtype][-1])
        return {
            "version": 3,
            "shape": self.shape,
            "typestr": _NUMPY_TYPESTR[dtype],
            "data": (info.data or 0, bool(info.read_only)),
            "strides": tuple(s * size for s in self.strides),
        }

    def to_torch(self):
        """This tensor as a torch tensor viewing the same memory (bool included, which torch
        before 2.x does not read through DLPack)."""
        managed = c_void_p()
        _capi.check(_capi.tensor_to_dlpack(self._handle, _capi.DLPACK_LEGACY_BOOL, ctypes.byref(managed)))
        return wrap_output(ResultKind.TORCH, managed.value)


def from_dlpack(obj, read_only=False):
    """`obj` (anything with ``__dlpack__``) as a tileops.Tensor viewing the same memory. With
    `read_only`, no op call writes it (an in-place op or an ``out=`` buffer raises
    tileops.ValueError). Raises tileops.TypeError or tileops.ValueError naming what DLPack
    tensor tileops cannot take (a dtype, a device, negative strides, ...)."""
    if isinstance(obj, Tensor) and not read_only:
        return obj
    ref = _capi.TensorRef()
    capsule_of(obj, "the tensor").take(ref)
    flags = ref.flags | (_capi.DLPACK_READ_ONLY if read_only else 0)
    handle = c_void_p()
    importer = _capi.tensor_from_dlpack_versioned if ref.kind == _capi.REF_DLPACK_VERSIONED else _capi.tensor_from_dlpack
    _capi.check(importer(ref.ptr, flags, ctypes.byref(handle)))
    return Tensor(handle.value)


def empty(shape, dtype, device="cpu", strides=None):
    """A new tileops.Tensor of `shape` and `dtype` ("float32") on `device` ("cpu", "meta", ...),
    with uninitialised contents; `strides` (elements) for a strided view of new memory."""
    ndim = len(shape)
    extents = (ctypes.c_int64 * ndim)(*shape)
    steps = (ctypes.c_int64 * ndim)(*strides) if strides is not None else None
    handle = c_void_p()
    _capi.check(_capi.tensor_empty(extents, steps, ndim, dtype.encode(), device.encode(), ctypes.byref(handle)))
    return Tensor(handle.value)


class ResultKind:
    """How a call's new outputs go back to the caller: the kind of its first tensor argument."""

    TORCH = 0
    NUMPY = 1
    TILEOPS = 2


def result_kind(obj):
    torch = _torch()
    if torch is not None and isinstance(obj, torch.Tensor):
        return ResultKind.TORCH
    numpy = _numpy()
    if numpy is not None and isinstance(obj, numpy.ndarray):
        return ResultKind.NUMPY
    return ResultKind.TILEOPS


def output_ref_kind(kind):
    """The form (ref kind, export flags) in which a call's outputs are asked for."""
    if kind == ResultKind.TORCH:
        return _capi.REF_DLPACK, _capi.DLPACK_LEGACY_BOOL
    return _capi.REF_TENSOR, 0


def torch_from_export(ptr):
    """A legacy DLPack export of the C API (asked for with DLPACK_LEGACY_BOOL) as a torch
    tensor, which takes the export over."""
    torch = _torch()
    as_bool = False
    if not (_torch_reads_dlbool or _torch_reads_kdlbool(torch)):
        code = ctypes.c_uint8.from_address(ptr + _DTYPE_CODE_OFFSET)
        if code.value == _KDL_BOOL:
            code.value, as_bool = _KDL_UINT, True
    # torch consumes the capsule at once: it needs no destructor unless that fails.
    capsule = _capsule_new(ptr, _LEGACY, None)
    try:
        tensor = torch._C._from_dlpack(capsule)
    except BaseException:
        if _capsule_is_valid(capsule, _LEGACY):
            managed = _capi.DLManagedTensor.from_address(ptr)
            managed.deleter(ctypes.pointer(managed))
        raise
    return tensor.view(torch.bool) if as_bool else tensor


def wrap_output(kind, ptr):
    """An output the C API filled in the form output_ref_kind asked for, as the caller's kind."""
    if kind == ResultKind.TORCH:
        return torch_from_export(ptr)
    tensor = Tensor(ptr)
    if kind == ResultKind.NUMPY:
        return _numpy().asarray(tensor)
    return tensor
