"""The C API (tileops/c_api.h) as ctypes sees it: its structs, its functions' prototypes and
the conversion of a returned status into an exception of tileops.errors."""

import ctypes
from ctypes import POINTER, Structure, c_char_p, c_double, c_int, c_int32, c_int64, c_size_t, c_uint8, c_uint32, c_void_p

from ._library import load_library

lib = load_library()

API_MAJOR = 1

# Ref kinds, DLPack flags and output sources (c_api.h).
REF_NONE, REF_TENSOR, REF_DLPACK, REF_DLPACK_VERSIONED, REF_DLTENSOR = 0, 1, 2, 3, 4
DLPACK_UINT8_AS_BOOL, DLPACK_LEGACY_BOOL, DLPACK_READ_ONLY = 1, 2, 4
OUTPUT_NEW, OUTPUT_OUT, OUTPUT_BUFFER = -1, -2, -3

# DLPack device codes.
KDL_CPU, KDL_CUDA, KDL_ROCM = 1, 2, 10


class DLDevice(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(Structure):
    _fields_ = [
        ("data", c_void_p),
        ("device", DLDevice),
        ("ndim", c_int32),
        ("dtype", DLDataType),
        ("shape", POINTER(c_int64)),
        ("strides", POINTER(c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(Structure):
    pass


DLManagedTensor._fields_ = [
    ("dl_tensor", DLTensor),
    ("manager_ctx", c_void_p),
    ("deleter", ctypes.CFUNCTYPE(None, POINTER(DLManagedTensor))),
]


class DLPackVersion(Structure):
    _fields_ = [("major", c_uint32), ("minor", c_uint32)]


class DLManagedTensorVersioned(Structure):
    pass


DLManagedTensorVersioned._fields_ = [
    ("version", DLPackVersion),
    ("manager_ctx", c_void_p),
    ("deleter", ctypes.CFUNCTYPE(None, POINTER(DLManagedTensorVersioned))),
    ("flags", ctypes.c_uint64),
    ("dl_tensor", DLTensor),
]


class VersionInfo(Structure):
    _fields_ = [("struct_size", c_size_t), ("api_major", c_uint32), ("api_minor", c_uint32), ("library", c_char_p)]


class TensorInfo(Structure):
    _fields_ = [
        ("struct_size", c_size_t),
        ("dtype", c_char_p),
        ("ndim", c_int32),
        ("shape", POINTER(c_int64)),
        ("strides", POINTER(c_int64)),
        ("device_type", c_char_p),
        ("device_index", c_int32),
        ("data", c_void_p),
        ("read_only", c_int32),
    ]


class TensorRef(Structure):
    _fields_ = [("kind", c_int32), ("flags", c_uint32), ("ptr", c_void_p)]


class Call(Structure):
    _fields_ = [
        ("struct_size", c_size_t),
        ("num_inputs", c_size_t),
        ("inputs", POINTER(TensorRef)),
        ("out", TensorRef),
        ("num_outputs", c_size_t),
        ("outputs", POINTER(TensorRef)),
        ("output_buffers", POINTER(TensorRef)),
        ("output_sources", POINTER(c_int32)),
        ("use_stream", c_int32),
        ("stream_device", DLDevice),
        ("stream", c_void_p),
    ]


def _declare(name, restype, *argtypes):
    fn = getattr(lib, name)
    fn.restype = restype
    fn.argtypes = list(argtypes)
    return fn


status_kind = _declare("tileops_status_kind", c_int, c_void_p)
status_message = _declare("tileops_status_message", c_char_p, c_void_p)
status_free = _declare("tileops_status_free", None, c_void_p)
error_kind_name = _declare("tileops_error_kind_name", c_char_p, c_int)
error_kind_parent = _declare("tileops_error_kind_parent", c_int, c_int)
get_version = _declare("tileops_get_version", c_void_p, POINTER(VersionInfo))
string_free = _declare("tileops_string_free", None, c_void_p)

ops_json = _declare("tileops_ops_json", c_void_p, c_char_p, POINTER(c_void_p))
info_json = _declare("tileops_info_json", c_void_p, POINTER(c_void_p))
plugins_json = _declare("tileops_plugins_json", c_void_p, POINTER(c_void_p))
targets_json = _declare("tileops_targets_json", c_void_p, POINTER(c_void_p))
workloads_json = _declare("tileops_workloads_json", c_void_p, c_char_p, c_int64, POINTER(c_void_p))
roofline_svg = _declare("tileops_roofline_svg", c_void_p, c_char_p, c_char_p, POINTER(c_void_p))

tensor_from_dlpack = _declare("tileops_tensor_from_dlpack", c_void_p, c_void_p, c_uint32, POINTER(c_void_p))
tensor_from_dlpack_versioned = _declare(
    "tileops_tensor_from_dlpack_versioned", c_void_p, c_void_p, c_uint32, POINTER(c_void_p)
)
tensor_to_dlpack = _declare("tileops_tensor_to_dlpack", c_void_p, c_void_p, c_uint32, POINTER(c_void_p))
tensor_to_dlpack_versioned = _declare(
    "tileops_tensor_to_dlpack_versioned", c_void_p, c_void_p, c_uint32, c_uint32, c_uint32, POINTER(c_void_p)
)
tensor_empty = _declare(
    "tileops_tensor_empty", c_void_p, POINTER(c_int64), POINTER(c_int64), c_int32, c_char_p, c_char_p, POINTER(c_void_p)
)
tensor_get_info = _declare("tileops_tensor_get_info", c_void_p, c_void_p, POINTER(TensorInfo))
tensor_free = _declare("tileops_tensor_free", None, c_void_p)

params_create = _declare("tileops_params_create", c_void_p, POINTER(c_void_p))
params_free = _declare("tileops_params_free", None, c_void_p)
params_set_none = _declare("tileops_params_set_none", c_void_p, c_void_p, c_char_p)
params_set_bool = _declare("tileops_params_set_bool", c_void_p, c_void_p, c_char_p, c_int32)
params_set_int = _declare("tileops_params_set_int", c_void_p, c_void_p, c_char_p, c_int64)
params_set_float = _declare("tileops_params_set_float", c_void_p, c_void_p, c_char_p, c_double)
params_set_string = _declare("tileops_params_set_string", c_void_p, c_void_p, c_char_p, c_char_p)
params_set_dtype = _declare("tileops_params_set_dtype", c_void_p, c_void_p, c_char_p, c_char_p)
params_set_device = _declare("tileops_params_set_device", c_void_p, c_void_p, c_char_p, c_char_p)
params_set_int_list = _declare(
    "tileops_params_set_int_list", c_void_p, c_void_p, c_char_p, POINTER(c_int64), c_size_t
)
params_set_tensor = _declare("tileops_params_set_tensor", c_void_p, c_void_p, c_char_p, c_void_p)

op_create = _declare("tileops_op_create", c_void_p, c_char_p, c_void_p, c_char_p, POINTER(c_void_p))
op_free = _declare("tileops_op_free", None, c_void_p)
op_instance_key = _declare("tileops_op_instance_key", c_void_p, c_void_p, POINTER(c_char_p))
op_boundary_operator = _declare(
    "tileops_op_boundary_operator", c_void_p, c_void_p, POINTER(c_uint8), c_size_t, c_int32, POINTER(c_char_p)
)
op_last_call_json = _declare("tileops_op_last_call_json", c_void_p, c_void_p, POINTER(c_void_p))
op_json = _declare("tileops_op_json", c_void_p, c_void_p, POINTER(c_void_p))
op_call = _declare("tileops_op_call", c_void_p, c_void_p, POINTER(Call))
# The same taking the call's address, which ctypes converts without a type check.
op_call_at = ctypes.CFUNCTYPE(c_void_p, c_void_p, c_void_p)(("tileops_op_call", lib))

current_stream = _declare("tileops_current_stream", c_void_p, c_char_p, POINTER(c_void_p))
set_current_stream = _declare("tileops_set_current_stream", c_void_p, c_char_p, c_void_p, POINTER(c_void_p))
synchronize = _declare("tileops_synchronize", c_void_p, c_char_p)

# Set by tileops.errors once its classes exist: kind -> exception class.
error_classes = {}


def check(status):
    """Raises the tileops exception a non-NULL status stands for (and frees the status)."""
    if status:
        kind = status_kind(status)
        message = status_message(status).decode("utf-8", "replace")
        status_free(status)
        raise error_classes[kind](message)


def take_string(function, *args):
    """Calls a C API function whose last argument is a `char**` and returns the string."""
    out = c_void_p()
    check(function(*args, ctypes.byref(out)))
    try:
        return ctypes.string_at(out.value).decode("utf-8")
    finally:
        string_free(out)


def library_version():
    info = VersionInfo()
    info.struct_size = ctypes.sizeof(VersionInfo)
    check(get_version(ctypes.byref(info)))
    return info
