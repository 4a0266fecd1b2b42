"""Errors from Python: the C++ class names and messages, raised as the tileops family."""

import builtins
import unittest

import numpy

import tileops


class ErrorsTest(unittest.TestCase):
    def test_construction_errors(self):
        with self.assertRaisesRegex(tileops.TypeError, r"missing required parameter 'normalized_shape' \(list\[int\]\)"):
            tileops.ops.RMSNormFwdOp()
        with self.assertRaisesRegex(tileops.TypeError, "RMSNormFwdOp: unknown parameter 'epsilon'; its parameters are: "
                                                       "normalized_shape, eps"):
            tileops.ops.RMSNormFwdOp([8], epsilon=1e-6)
        with self.assertRaisesRegex(tileops.ValueError, r"RMSNormFwdOp: eps must be positive \(eps = -1"):
            tileops.ops.RMSNormFwdOp([8], -1.0)
        with self.assertRaisesRegex(tileops.TypeError, r"RMSNormFwdOp takes at most 2 positional parameter\(s\) "
                                                       r"\(normalized_shape, eps\), got 3"):
            tileops.ops.RMSNormFwdOp([8], 1e-6, 3)
        with self.assertRaisesRegex(tileops.TypeError, "RMSNormFwdOp got parameter 'eps' twice"):
            tileops.ops.RMSNormFwdOp([8], 1e-6, eps=1e-5)
        with self.assertRaisesRegex(tileops.TypeError, "parameter 'normalized_shape' must be a list of ints"):
            tileops.ops.RMSNormFwdOp([8.5])
        with self.assertRaisesRegex(tileops.TypeError, "parameter 'eps' cannot be a dict"):
            tileops.ops.RMSNormFwdOp([8], {})
        with self.assertRaisesRegex(tileops.ValueError, "'eps' is NaN"):
            tileops.ops.RMSNormFwdOp([8], float("nan"))
        with self.assertRaisesRegex(tileops.ValueError, "does not fit in int64"):
            tileops.ops.SoftmaxFwdOp(2**64)
        with self.assertRaisesRegex(tileops.ValueError, "float31"):
            tileops.ops.SumFwdOp(dtype="float31")

    def test_call_errors(self):
        norm = tileops.ops.RMSNormFwdOp([8])
        x = numpy.ones((2, 8), dtype=numpy.float32)
        with self.assertRaisesRegex(tileops.RuntimeError, r"RMSNormFwdOp \(RMSNormFwdOp#\d+\): last_call is not "
                                                          "available: no call has completed yet"):
            norm.last_call
        with self.assertRaisesRegex(tileops.ValueError, r"RMSNormFwdOp: input 'weight' shape \[7\] does not match "
                                                        r"\[\*normalized_shape\] = \[8\]"):
            norm(x, numpy.ones(7, dtype=numpy.float32))
        with self.assertRaisesRegex(tileops.TypeError, "RMSNormFwdOp: input 'weight'"):
            norm(x, numpy.ones(8, dtype=numpy.float64))
        with self.assertRaisesRegex(tileops.TypeError, "input 'x' is required but was not passed"):
            norm(weight=numpy.ones(8, dtype=numpy.float32))
        with self.assertRaisesRegex(tileops.TypeError, r"RMSNormFwdOp takes 2 input\(s\) \(x, weight\), got 3"):
            norm(x, x, x)
        with self.assertRaisesRegex(tileops.TypeError, "RMSNormFwdOp has no input 'w'; its inputs are: x, weight"):
            norm(x, w=x)
        with self.assertRaisesRegex(tileops.TypeError, "RMSNormFwdOp got input 'x' twice"):
            norm(x, x=x)
        with self.assertRaisesRegex(tileops.TypeError, "takes no 'out' buffer, but one was passed"):
            norm(x, out=x)
        # A failed call keeps the record of the last one that completed.
        norm(x)
        with self.assertRaises(tileops.ValueError):
            norm(x, numpy.ones(7, dtype=numpy.float32))
        self.assertEqual(norm.last_call["tensors"]["x"]["shape"], [2, 8])

    def test_target_errors(self):
        op = tileops.ops.ReluFwdOp(target="no_such_target")
        with self.assertRaisesRegex(tileops.UnknownTargetError, "no_such_target") as caught:
            op(numpy.ones(2, dtype=numpy.float32))
        self.assertIsInstance(caught.exception, builtins.ValueError)
        self.assertIn("builtin", str(caught.exception))

    def test_sizes(self):
        with self.assertRaisesRegex(tileops.ValueError, "exceeds 9223372036854775807"):
            tileops.empty([2**40, 2**40], "float32", "meta")
        with self.assertRaisesRegex(tileops.ValueError, "ndim 65 is outside 0 to 64"):
            tileops.empty([1] * 65, "float32", "meta")
        with self.assertRaisesRegex(tileops.ValueError, "cuda:x"):
            tileops.empty([1], "float32", "cuda:x")

    def test_meta_calls_check_like_real_ones(self):
        norm = tileops.ops.RMSNormFwdOp([4096])
        self.assertEqual(norm.meta([([2, 7, 4096], "bfloat16"), None]), [((2, 7, 4096), "bfloat16")])
        with self.assertRaisesRegex(tileops.ValueError, r"input 'weight' shape \[8\]"):
            norm.meta([([2, 4096], "float32"), ([8], "float32")])
        with self.assertRaisesRegex(tileops.TypeError, r"RMSNormFwdOp takes 2 input\(s\) \(x, weight\), got 1"):
            norm.meta([([2, 4096], "float32")])
        with self.assertRaisesRegex(tileops.RuntimeError, "no call has completed yet"):
            norm.last_call


if __name__ == "__main__":
    unittest.main()
