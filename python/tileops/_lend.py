"""Torch tensors lent to one call as plain DLTensors (TILEOPS_REF_DLTENSOR): the call's fast
way in. No capsule is made and no ownership changes hands; the caller's references keep the
tensors alive until the call returns, which is all the C API asks of a lent tensor.

A tensor is lent when it is a plain torch.Tensor (or nn.Parameter) with strides on the CPU or
a CUDA/ROCm device, of a dtype tileops has and at most MAX_RANK dimensions; any other
argument makes the whole call take the DLPack way (tileops._tensors), which accepts or refuses
it with its own errors.
"""

import ctypes
import struct

from . import _capi

MAX_RANK = 8

# A slot is a DLTensor as the C struct lays it out on a 64-bit little-endian machine (data,
# device {type, id}, ndim, dtype {code, bits, lanes}, shape, strides, byte_offset), then the
# extents and the strides it points at: one struct per rank packs all of it at once.
_HEAD = "<QiiiBBHQQQ"
_HEAD_BYTES = struct.calcsize(_HEAD)
assert _HEAD_BYTES == ctypes.sizeof(_capi.DLTensor)
_SLOT = [struct.Struct(_HEAD + "%dq" % (2 * n)) for n in range(MAX_RANK + 1)]
_SLOT_BYTES = _HEAD_BYTES + 2 * MAX_RANK * 8


class _Torch:
    """What lending reads of torch, settled when the first call brings a torch tensor."""

    def __init__(self, torch):
        codes = {"bool": (6, 8), "int8": (0, 8), "uint8": (1, 8), "int32": (0, 32), "int64": (0, 64),
                 "float16": (2, 16), "bfloat16": (4, 16), "float32": (2, 32), "float64": (2, 64)}
        self.dl_types = {getattr(torch, name): code_bits for name, code_bits in codes.items()}
        self.gpu_code = _capi.KDL_ROCM if getattr(torch.version, "hip", None) else _capi.KDL_CUDA
        self.plain = (torch.Tensor, torch.nn.Parameter)
        self.grad_enabled = torch.is_grad_enabled
        self.current_stream = torch._C._cuda_getCurrentRawStream if torch.cuda.is_available() else None


_torch = None


def _settle(torch):
    global _torch
    if _torch is None:
        _torch = _Torch(torch)
    return _torch


class Slots:
    """One thread's DLTensor slots for the tensors of one op's calls (its inputs, `out`, then
    one output buffer per output) and the tileops_call whose refs point at them, asking for
    new outputs as legacy DLPack. ``fill()`` writes one call's tensors."""

    def __init__(self, n_inputs, n_outputs):
        n = n_inputs + 1 + n_outputs
        memory = (ctypes.c_char * (_SLOT_BYTES * n))()
        # struct packs into a plain byte view: a ctypes array's own buffer spells out its
        # format on every export, which costs more than the packing.
        self.memory, self._keep = memoryview(memory).cast("B"), memory
        base = ctypes.addressof(memory)
        refs = (_capi.TensorRef * max(n_inputs, 1))()
        buffers = (_capi.TensorRef * max(n_outputs, 1))()
        self.outputs = (_capi.TensorRef * max(n_outputs, 1))()
        self.sources = (ctypes.c_int32 * max(n_outputs, 1))()
        call = _capi.Call()
        call.struct_size = ctypes.sizeof(_capi.Call)
        call.num_inputs = n_inputs
        call.inputs = refs
        call.num_outputs = n_outputs
        call.outputs = self.outputs
        call.output_sources = self.sources
        for o in range(n_outputs):
            self.outputs[o].kind, self.outputs[o].flags = _capi.REF_DLPACK, _capi.DLPACK_LEGACY_BOOL
        # Per slot (inputs, out, buffers): its ref, its offset, and the addresses of its extents
        # and of its strides per rank.
        views = [refs[i] for i in range(n_inputs)] + [call.out] + [buffers[o] for o in range(n_outputs)]
        self.slots = []
        for k, ref in enumerate(views):
            head = base + k * _SLOT_BYTES
            ref.ptr = head
            dims = head + _HEAD_BYTES
            self.slots.append((ref, k * _SLOT_BYTES, dims, [dims + 8 * r for r in range(MAX_RANK + 1)]))
        self.n_inputs = n_inputs
        self.buffers = buffers
        self.call = call
        self.stream_device = call.stream_device
        self.address = ctypes.addressof(call)
        self._refs = refs

    def fill(self, tensors, out, buffers, torch, check_grad):
        """Lends `tensors` (one per input, None for an absent one), `out` (or None) and
        `buffers` (None, or one per output, None for an output without one) to the call, and
        sets the call's stream to torch's current stream of the first tensor's device. False
        when one of them cannot be lent (one that requires grad included, with `check_grad`
        while grad mode is on) or there is no tensor at all; the slots are then unused."""
        lending = _settle(torch)
        grad_on = check_grad and lending.grad_enabled()
        plain, dl_types, gpu_code, memory = lending.plain, lending.dl_types, lending.gpu_code, self.memory
        first = None
        call = self.call
        if buffers is None:
            call.output_buffers = None
            every = (*tensors, out)
        else:
            call.output_buffers = self.buffers
            every = (*tensors, out, *buffers)
        try:
            for (ref, offset, dims, strides_at), t in zip(self.slots, every):
                if t is None:
                    ref.kind = _capi.REF_NONE
                    continue
                if type(t) not in plain or (grad_on and t.requires_grad):
                    return False
                index = t.get_device()
                if index >= 0:
                    code = gpu_code
                elif t.is_cpu:
                    code, index = _capi.KDL_CPU, 0
                else:
                    return False
                dl_type = dl_types.get(t.dtype)
                shape = t.shape
                rank = len(shape)
                if dl_type is None or rank > MAX_RANK:
                    return False
                if first is None:
                    first = (code, index)
                _SLOT[rank].pack_into(memory, offset, t.data_ptr(), code, index, rank, dl_type[0], dl_type[1], 1,
                                      dims, strides_at[rank], 0, *shape, *t.stride())
                ref.kind = _capi.REF_DLTENSOR
        except RuntimeError:
            return False  # a layout without strides or storage (sparse, nested): the DLPack way says why
        if first is None:
            return False
        code, index = first
        if code == _capi.KDL_CPU:
            call.use_stream = 0
        else:
            call.use_stream = 1
            device = self.stream_device
            device.device_type, device.device_id = code, index
            call.stream = lending.current_stream(index)
        return True
