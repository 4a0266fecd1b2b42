"""tileops._stablekernel, the C++ kernels tileops.torch registers through torch's stable C shim
on torch 2.10 and later, run here against a test double of that shim (fake_torch_shim.cpp,
TILEOPS_TEST_FAKE_TORCH_SHIM) so that no torch is needed: results against the op called
directly, a planned call, an absent optional input, errors as "<tileops class>: <message>",
an op destroyed after its plan was cached, every handle released whether a call failed or not,
and four threads calling one op. Skipped where the module or the double was not built."""

import ctypes
import math
import os
import random
import threading
import unittest

import tileops
from tileops import _capi, _op

FAKE = os.environ.get("TILEOPS_TEST_FAKE_TORCH_SHIM")
try:
    from tileops import _stablekernel
except ImportError:
    _stablekernel = None

SKIP = ("tileops._stablekernel was not built" if _stablekernel is None
        else "no test double of torch's shim (TILEOPS_TEST_FAKE_TORCH_SHIM)" if not FAKE or not os.path.exists(FAKE)
        else None)


def _address(f):
    return ctypes.cast(f, ctypes.c_void_p).value


# Branch index -> (returned output indices, input count), for the plan callback.
_branches = {}


def _plan(index, key, facts):
    returned, n_inputs = _branches[index]
    op = _op.find_instance(key)
    plan = op.meta([None if f is None else (f[0], f[1]) for f in facts[:n_inputs]], None)
    return [plan[o] for o in returned]


@unittest.skipIf(SKIP is not None, SKIP or "")
class StableKernelDoubleTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        fake = cls.fake = ctypes.CDLL(FAKE)
        fake.fake_tensor.restype = ctypes.c_void_p
        fake.fake_tensor.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p]
        fake.fake_string.restype = ctypes.c_void_p
        fake.fake_box.restype = ctypes.c_uint64
        fake.fake_box.argtypes = [ctypes.c_void_p]
        fake.fake_data.restype = ctypes.POINTER(ctypes.c_float)
        fake.fake_data.argtypes = [ctypes.c_void_p]
        fake.fake_size.restype = ctypes.c_int64
        fake.fake_size.argtypes = [ctypes.c_void_p, ctypes.c_int]
        fake.aoti_torch_delete_tensor_object.argtypes = [ctypes.c_void_p]
        fake.fake_call.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64,
                                   ctypes.c_char_p, ctypes.c_size_t]
        why = _stablekernel.setup(FAKE, "", _address(_capi.op_call_at), _address(_capi.status_kind),
                                  _address(_capi.status_message), _address(_capi.status_free),
                                  _address(_capi.error_kind_name), _address(_capi.tensor_free), 2, _plan)
        if why:
            raise AssertionError(why)
        index, why = _stablekernel.register("norm_rms_norm_fwd", [False, True], False, 1, [0], "CPU")
        if index < 0:
            raise AssertionError(why)
        _branches[index] = ([0], 2)
        _op.use_kernel_registry(_stablekernel)

    @classmethod
    def tearDownClass(cls):
        _op._kernel_registry = None

    def _tensor(self, flat, shape):
        data = (ctypes.c_float * len(flat))(*flat)
        sizes = (ctypes.c_int64 * len(shape))(*shape)
        return self.fake.fake_tensor(data, len(shape), sizes)

    def _call(self, x, w, key):
        """The kernel on rows `x` and weight `w` (or None): (rows, None) or (None, error)."""
        stack = (ctypes.c_uint64 * 3)()
        stack[0] = self._tensor([v for row in x for v in row], (len(x), len(x[0])))
        stack[1] = 0 if w is None else self.fake.fake_box(self._tensor(w, (len(w),)))
        stack[2] = self.fake.fake_string(key.encode())
        error = ctypes.create_string_buffer(2048)
        if self.fake.fake_call(b"norm_rms_norm_fwd", stack, 3, 1, error, 2048):
            return None, error.value.decode()
        out = stack[0]
        rows, cols = self.fake.fake_size(out, 0), self.fake.fake_size(out, 1)
        data = self.fake.fake_data(out)
        result = [[data[r * cols + c] for c in range(cols)] for r in range(rows)]
        self.fake.aoti_torch_delete_tensor_object(out)
        return result, None

    @staticmethod
    def _expected(x, w, eps):
        out = []
        for row in x:
            scale = 1.0 / math.sqrt(sum(v * v for v in row) / len(row) + eps)
            out.append([v * scale * (1.0 if w is None else w[i]) for i, v in enumerate(row)])
        return out

    def _assert_close(self, got, expected):
        for g_row, e_row in zip(got, expected):
            for g, e in zip(g_row, e_row):
                self.assertAlmostEqual(g, e, delta=1e-4 + 1e-4 * abs(e))

    def test_calls_agree_with_the_op(self):
        base = self.fake.fake_live()
        norm = tileops.ops.RMSNormFwdOp([8], 1e-6)
        rng = random.Random(1)
        x = [[rng.uniform(-2, 2) for _ in range(8)] for _ in range(4)]
        w = [rng.uniform(0, 1) for _ in range(8)]
        for call in ("plans", "uses the plan"):
            got, error = self._call(x, w, norm.instance_key)
            self.assertIsNone(error, call)
            self._assert_close(got, self._expected(x, w, 1e-6))
        got, error = self._call(x, None, norm.instance_key)
        self.assertIsNone(error)
        self._assert_close(got, self._expected(x, None, 1e-6))
        self.assertEqual(self.fake.fake_live(), base)

    def test_errors_name_the_tileops_class_and_leak_nothing(self):
        base = self.fake.fake_live()
        norm = tileops.ops.RMSNormFwdOp([8])
        _, error = self._call([[0.0] * 7] * 2, None, norm.instance_key)
        self.assertRegex(error, r"^ValueError: .*input 'x' shape \[2, 7\] does not match")
        _, error = self._call([[0.0] * 8], None, "RMSNormFwdOp#999999")
        self.assertRegex(error, "^RuntimeError: no live tileops op has instance key 'RMSNormFwdOp#999999'")
        key = norm.instance_key
        x = [[1.0] * 8]
        self.assertIsNone(self._call(x, None, key)[1])
        del norm  # its plan stays cached; the registry no longer has it
        _, error = self._call(x, None, key)
        self.assertRegex(error, "^RuntimeError: no live tileops op has instance key '%s'" % key)
        self.assertEqual(self.fake.fake_live(), base)

    def test_four_threads_calling_one_op_agree(self):
        norm = tileops.ops.RMSNormFwdOp([16], 1e-6)
        rng = random.Random(2)
        inputs = [[[rng.uniform(-1, 1) for _ in range(16)] for _ in range(3)] for _ in range(4)]
        failures = []

        def worker(i):
            for _ in range(50):
                got, error = self._call(inputs[i], None, norm.instance_key)
                if error is not None:
                    failures.append(error)
                    return
                expected = self._expected(inputs[i], None, 1e-6)
                if any(abs(g - e) > 1e-4 for gr, er in zip(got, expected) for g, e in zip(gr, er)):
                    failures.append("thread %d: a result differs" % i)
                    return

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(failures, [])


if __name__ == "__main__":
    unittest.main()
