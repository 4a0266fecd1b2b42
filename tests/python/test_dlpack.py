"""DLPack round trips between torch, NumPy and tileops: zero copy, views, read-only memory,
bool, and what is refused."""

import unittest

import numpy

import tileops
from support import assert_close, requires_torch, torch


@requires_torch
class TorchRoundTripTest(unittest.TestCase):
    def round_trip(self, x):
        t = tileops.from_dlpack(x)
        back = t.to_torch() if x.dtype == torch.bool else torch.from_dlpack(t)
        self.assertEqual(t.data_ptr, x.data_ptr())
        self.assertEqual(t.shape, tuple(x.shape))
        if x.numel() > 0:
            self.assertEqual(t.strides, tuple(x.stride()))
        self.assertEqual(back.data_ptr(), x.data_ptr())
        self.assertEqual(back.dtype, x.dtype)
        self.assertTrue(torch.equal(back, x))
        return t

    def test_dtypes(self):
        for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.int8, torch.uint8,
                      torch.int32, torch.int64):
            with self.subTest(dtype=dtype):
                t = self.round_trip(torch.arange(12).reshape(3, 4).to(dtype))
                self.assertEqual(t.dtype, str(dtype)[len("torch."):])
                self.assertEqual(t.device, "cpu")

    def test_bool(self):
        x = torch.tensor([[True, False, True], [False, False, True]])
        t = self.round_trip(x)
        self.assertEqual(t.dtype, "bool")
        self.assertEqual(repr(t), "tileops.Tensor(bool[2, 3], cpu)")

    def test_views_keep_their_offsets_and_strides(self):
        base = torch.arange(48, dtype=torch.float32).reshape(6, 8)
        for name, view in (("rows", base[2:5]), ("columns", base[:, 1::3]), ("transposed", base.t()),
                           ("scalar", base[3, 4]), ("empty", base[2:2])):
            with self.subTest(view=name):
                self.round_trip(view)

    def test_ops_read_views_in_place(self):
        base = torch.randn(6, 16)
        norm = tileops.ops.RMSNormFwdOp([8])
        for view in (base[1:4, 2:10], base[:, ::2], base.t()[3:11].t()):
            with self.subTest(strides=view.stride()):
                self.assertTrue(torch.allclose(norm(view), norm(view.contiguous()), atol=1e-6))

    def test_read_only_memory_is_never_written(self):
        x = torch.tensor([-1.0, 2.0, -3.0])
        r = tileops.from_dlpack(x, read_only=True)
        self.assertTrue(r.read_only)
        self.assertEqual(repr(r), "tileops.Tensor(float32[3], cpu, read-only)")
        with self.assertRaisesRegex(tileops.ValueError, "ReluFwdOp: input 'input' is read-only"):
            tileops.ops.ReluFwdOp(inplace=True)(r)
        self.assertEqual(x.tolist(), [-1.0, 2.0, -3.0])
        y = tileops.ops.ReluFwdOp()(r)
        self.assertIsInstance(y, tileops.Tensor)
        self.assertEqual(torch.from_dlpack(y).tolist(), [0.0, 2.0, 0.0])
        # Exported as DLPack 1.x the flag travels with the tensor.
        again = tileops.from_dlpack(_Producer(r.__dlpack__(max_version=(1, 0))))
        self.assertTrue(again.read_only)
        with self.assertRaisesRegex(tileops.ValueError, "is read-only"):
            tileops.ops.AddFwdOp()(x, x, out=again)

    def test_legacy_and_versioned_capsules(self):
        t = tileops.from_dlpack(torch.ones(2))
        self.assertIn('"dltensor"', repr(t.__dlpack__()))
        self.assertIn('"dltensor_versioned"', repr(t.__dlpack__(max_version=(1, 2))))
        self.assertIn('"dltensor"', repr(t.__dlpack__(max_version=(0, 8))))
        with self.assertRaisesRegex(tileops.ValueError, "copy=True is refused"):
            t.__dlpack__(copy=True)
        flags = tileops.from_dlpack(torch.tensor([True, False]))
        self.assertEqual(tileops.from_dlpack(_Producer(flags.__dlpack__())).dtype, "bool")
        self.assertEqual(tileops.from_dlpack(_Producer(flags.__dlpack__(max_version=(1, 0)))).dtype, "bool")

    def test_outputs_are_torch_tensors_sharing_tileops_memory(self):
        x = torch.randn(4, 8)
        y = tileops.ops.RMSNormFwdOp([8])(x)
        self.assertIsInstance(y, torch.Tensor)
        self.assertEqual(y.shape, (4, 8))
        # An input the call writes, and out, come back as the objects passed.
        z = torch.randn(5)
        self.assertIs(tileops.ops.ReluFwdOp(inplace=True)(z), z)
        self.assertTrue((z >= 0).all())
        a, b, out = torch.ones(3), torch.full((3,), 2.0), torch.zeros(3)
        self.assertIs(tileops.ops.AddFwdOp(alpha=3)(a, b, out=out), out)
        self.assertEqual(out.tolist(), [7.0, 7.0, 7.0])

    def test_refused_tensors(self):
        norm = tileops.ops.RMSNormFwdOp([2])
        with self.assertRaisesRegex(tileops.TypeError, "unsupported DLPack dtype"):
            norm(torch.ones(2, 2, dtype=torch.complex64))
        with self.assertRaisesRegex(tileops.TypeError, "RMSNormFwdOp: input 'x' requires grad"):
            norm(torch.ones(2, 2, requires_grad=True))
        with torch.no_grad():
            self.assertEqual(norm(torch.ones(2, 2, requires_grad=True)).shape, (2, 2))
        with self.assertRaisesRegex(tileops.TypeError, "RMSNormFwdOp: input 'x' must be a tensor .* not list"):
            norm([[1.0, 2.0]])


@requires_torch
class TorchFastPathTest(unittest.TestCase):
    """Plain torch tensors skip the Python DLPack path: the C half (tileops._fastcall) exports
    them with torch's own exporter, or, where it was not built, they are lent as bare DLTensors
    (TILEOPS_REF_DLTENSOR). Anything else takes the Python DLPack path, with its checks and
    errors. Each test runs both ways."""

    def setUp(self):
        self.exported = []
        self._capsule_of = tileops._tensors.capsule_of
        self._fast = tileops._op._fast

        def counting(obj, what, check_grad=True):
            self.exported.append(what)
            return self._capsule_of(obj, what, check_grad)

        tileops._tensors.capsule_of = counting

    def tearDown(self):
        tileops._tensors.capsule_of = self._capsule_of
        tileops._op._fast = self._fast

    def each_way(self):
        for way, fast in (("C half", None), ("lent DLTensors", False)):
            tileops._op._fast = fast
            del self.exported[:]
            yield way

    def test_the_c_half_is_built_here(self):
        self.assertIsNotNone(tileops._op._fast_module(torch) or None)

    def test_plain_tensors_views_parameters_and_out(self):
        for way in self.each_way():
            with self.subTest(way=way):
                base = torch.randn(6, 16)
                w = torch.nn.Parameter(torch.rand(8), requires_grad=False)
                view = base[1:4, 2:10]
                expected = view.double() * torch.rsqrt(view.double().pow(2).mean(-1, keepdim=True) + 1e-5) * w.double()
                assert_close(self, tileops.ops.RMSNormFwdOp([8])(view, w), expected.float(), "float32", way)
                out = torch.empty(3, 8)
                self.assertIs(tileops.ops.AddFwdOp()(view, view, out=out), out)
                self.assertTrue(torch.equal(out, 2 * view))
                self.assertEqual(self.exported, [])

    def test_the_callers_memory_stays_the_callers(self):
        for way in self.each_way():
            with self.subTest(way=way):
                x = torch.tensor([-1.0, 2.0, -3.0])
                y = tileops.ops.ReluFwdOp()(x)
                self.assertNotEqual(y.data_ptr(), x.data_ptr())
                x.fill_(7.0)
                del x
                self.assertEqual(y.tolist(), [0.0, 2.0, 0.0])
                z = torch.tensor([-4.0, 5.0])
                self.assertIs(tileops.ops.ReluFwdOp(inplace=True)(z), z)
                self.assertEqual(z.tolist(), [0.0, 5.0])
                self.assertEqual(self.exported, [])

    def test_what_the_fast_ways_do_not_take_crosses_as_dlpack(self):
        class Marked(torch.Tensor):
            pass

        for way in self.each_way():
            with self.subTest(way=way):
                marked = torch.tensor([-1.0, 3.0]).as_subclass(Marked)
                self.assertEqual(tileops.ops.ReluFwdOp()(marked).tolist(), [0.0, 3.0])
                self.assertEqual(self.exported, ["ReluFwdOp: input 'input'"])
                with self.assertRaisesRegex(tileops.TypeError, "RMSNormFwdOp: input 'x' requires grad"):
                    tileops.ops.RMSNormFwdOp([2])(torch.ones(2, 2, requires_grad=True))
                with self.assertRaisesRegex(tileops.TypeError, "unsupported DLPack dtype"):
                    tileops.ops.RMSNormFwdOp([2])(torch.ones(2, 2, dtype=torch.complex64))
                mixed = tileops.ops.AddFwdOp()(torch.ones(2), numpy.ones(2, dtype=numpy.float32))
                self.assertEqual(mixed.tolist(), [2.0, 2.0])
                deep = torch.randn([1] * 9 + [4]).abs()
                self.assertTrue(torch.equal(tileops.ops.ReluFwdOp()(deep), deep))

    def test_errors_of_the_call_itself(self):
        for way in self.each_way():
            with self.subTest(way=way):
                with self.assertRaisesRegex(tileops.ValueError, "RMSNormFwdOp"):
                    tileops.ops.RMSNormFwdOp([8])(torch.ones(2, 4), torch.ones(8))
                self.assertEqual(self.exported, [])


class _Producer:
    """An object whose __dlpack__ hands out a given capsule (a producer of DLPack 1.x)."""

    def __init__(self, capsule):
        self.capsule = capsule

    def __dlpack__(self, stream=None, max_version=None):
        return self.capsule

    def __dlpack_device__(self):
        return (1, 0)


class NumpyTest(unittest.TestCase):
    def test_numpy_in_numpy_out(self):
        x = numpy.linspace(-2, 2, 12, dtype=numpy.float32).reshape(3, 4)
        y = tileops.ops.SoftmaxFwdOp()(x)
        self.assertIsInstance(y, numpy.ndarray)
        expected = numpy.exp(x) / numpy.exp(x).sum(axis=-1, keepdims=True)
        self.assertTrue(numpy.allclose(y, expected, atol=1e-6))
        self.assertTrue(y.flags.writeable)
        self.assertEqual(tileops.ops.SoftmaxFwdOp()(y).shape, (3, 4))
        t = tileops.from_dlpack(x)
        self.assertEqual(t.data_ptr, x.ctypes.data)
        view = numpy.asarray(t)
        self.assertEqual(view.ctypes.data, x.ctypes.data)
        self.assertFalse(numpy.asarray(tileops.from_dlpack(x, read_only=True)).flags.writeable)
        with self.assertRaisesRegex(tileops.TypeError, "NumPy has no bfloat16"):
            numpy.asarray(tileops.empty([2], "bfloat16"))

    def test_negative_strides_are_refused(self):
        x = numpy.arange(6, dtype=numpy.float32)[::-1]
        with self.assertRaisesRegex(tileops.ValueError, "negative"):
            tileops.ops.ReluFwdOp()(x)

    def test_tileops_tensors_in_and_out(self):
        x = tileops.from_dlpack(numpy.array([-1.0, 1.0], dtype=numpy.float32))
        y = tileops.ops.ReluFwdOp()(x)
        self.assertIsInstance(y, tileops.Tensor)
        self.assertEqual(numpy.from_dlpack(y).tolist(), [0.0, 1.0])
        meta = tileops.empty([2, 3], "bfloat16", "meta")
        self.assertEqual(repr(meta), "tileops.Tensor(bfloat16[2, 3], meta)")
        self.assertEqual(meta.data_ptr, 0)
        with self.assertRaisesRegex(tileops.TypeError, "meta tensors carry no data"):
            meta.__dlpack__()


if __name__ == "__main__":
    unittest.main()
