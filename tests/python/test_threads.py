"""Four threads sharing one op instance: every call's result is its own inputs' (the C API
releases the GIL while tileops runs)."""

import threading
import unittest

import numpy

import tileops

CALLS_PER_THREAD = 200


class SharedOpTest(unittest.TestCase):
    def test_four_threads_share_one_op(self):
        norm = tileops.ops.RMSNormFwdOp([64])
        add = tileops.ops.AddFwdOp(alpha=2)
        failures = []

        def work(seed):
            rng = numpy.random.default_rng(seed)
            try:
                for i in range(CALLS_PER_THREAD):
                    rows = 1 + (seed + i) % 5
                    x = rng.standard_normal((rows, 64), dtype=numpy.float32)
                    w = rng.standard_normal(64, dtype=numpy.float32)
                    y = norm(x, w)
                    expected = x / numpy.sqrt((x * x).mean(axis=-1, keepdims=True) + numpy.finfo(numpy.float32).eps) * w
                    if not numpy.allclose(y, expected, atol=1e-4, rtol=1e-4):
                        failures.append("thread %d call %d: RMSNorm differs" % (seed, i))
                    out = numpy.empty_like(x)
                    if add(x, y, out=out) is not out or not numpy.allclose(out, x + 2 * y, atol=1e-5):
                        failures.append("thread %d call %d: Add differs" % (seed, i))
            except Exception as e:
                failures.append("thread %d: %r" % (seed, e))

        threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(failures, [])
        record = norm.last_call
        self.assertEqual(record["op"], "RMSNormFwdOp")
        self.assertEqual(record["kernels"], ["cpu_rms_norm"])


if __name__ == "__main__":
    unittest.main()
