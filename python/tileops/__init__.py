"""tileops for Python: the ops of libtileops on torch tensors, NumPy arrays or any object with
``__dlpack__``, without copies, through the library's C API (ctypes: no compiler needed).

    import tileops, torch
    norm = tileops.ops.RMSNormFwdOp(normalized_shape=[4096])
    y = norm(x, w)                  # a torch tensor when x is one
    norm.last_call["kernels"]       # ["cpu_rms_norm"]

``tileops.torch`` registers every op with a compile boundary as a torch custom op
(``torch.ops.tileops.<name>``). ``tileops.bench`` times calls and draws their roofline
picture. Errors are tileops.Error and its subclasses, named as in C++.
"""

import ctypes as _ctypes
import json as _json

from . import _capi, bench, errors, ops
from .bench import synchronize
from ._op import Op
from ._tensors import Tensor, current_stream, empty, from_dlpack
from .errors import *  # noqa: F401,F403  (the error classes: tileops.ValueError, ...)

__version__ = _capi.library_version().library.decode()


def info():
    """The library's version, the config in effect and the files searched for it, the plugin
    path, the devices, the plugins loaded and failed, and the targets (``tileops info
    --json``), as a dict."""
    return _json.loads(_capi.take_string(_capi.info_json))


def plugins():
    """{plugins, load_failures, skipped}: what the plugin host loaded, refused and skipped."""
    return _json.loads(_capi.take_string(_capi.plugins_json))


def targets():
    """[{name, ops}] of the registered targets."""
    return _json.loads(_capi.take_string(_capi.targets_json))


def workloads(op_name, index_cap=0):
    """The cases of op `op_name`'s manifest workload rows: [{id, label, params, inputs}], each
    input {shape, dtype, device} or None; with `index_cap` > 0 every index value above it is
    lowered to it (parameters never change)."""
    return _json.loads(_capi.take_string(_capi.workloads_json, op_name.encode(), index_cap))


def set_current_stream(device, stream):
    """Makes `stream` (a native handle as an int, 0 the default stream) the calling thread's
    current tileops stream of `device` ("cuda:0") and returns the one it replaced. Calls on torch
    tensors set torch's current stream themselves."""
    previous = _ctypes.c_void_p()
    _capi.check(_capi.set_current_stream(device.encode(), stream or None, _ctypes.byref(previous)))
    return previous.value or 0
