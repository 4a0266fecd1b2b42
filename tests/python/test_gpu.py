"""tileops.torch on a CUDA GPU with torch 2.4 or later: torch.compile(fullgraph=True) of every
boundary operator against eager calls, mode="reduce-overhead" (CUDA graphs), dynamic=True on one
op per family, a call on a non-default stream, and torch.library.opcheck of every operator.
Skipped, saying why, without a GPU, without tileops's cuda plugin, or with an older torch."""

import unittest

import tileops
from support import assert_close, assert_raises_through_torch_ops, case_inputs, case_params, torch


def _why_skipped():
    if torch is None:
        return "this python3 has no torch"
    version = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
    if version < (2, 4):
        return "torch %s is older than 2.4 (no register_fake, no torch.compile of custom ops)" % torch.__version__
    if not torch.cuda.is_available():
        return "torch sees no CUDA device"
    cuda = [d for d in tileops.info()["devices"] if d["type"] == "cuda"]
    if not cuda or cuda[0]["count"] == 0:
        return "tileops has no cuda device (built without the cuda plugin?)"
    return None


SKIP_REASON = _why_skipped()
requires_gpu = unittest.skipIf(SKIP_REASON is not None, SKIP_REASON or "")
if SKIP_REASON is None:
    import tileops.torch as tileops_torch

INDEX_CAP = 64
DEVICE = "cuda:0"


def _tuple(x):
    return x if isinstance(x, tuple) else (x,)


def _branch_cases():
    """One workload case per boundary operator (the first row entering it), with the `out`
    buffer an `_out` branch needs: (op class, case, name, with_out)."""
    seen = set()
    for name in tileops.ops.__all__:
        cls = getattr(tileops.ops, name)
        if not cls._boundaries:
            continue
        for case in tileops.workloads(name, INDEX_CAP):
            op = cls(**case_params(case))
            present = [s is not None for s in case["inputs"]]
            for with_out in (False, True) if cls._takes_out else (False,):
                boundary = op.boundary_operator(present, with_out)
                if boundary not in seen:
                    seen.add(boundary)
                    yield cls, case, boundary, with_out


def _runs_on(cls, device_type):
    """Whether every kernel interface of the op has a kernel type for `device_type`: ops without
    one (an op the plugin brings no kernel for) are skipped by name, not failed."""
    return all(any(device_type in k["devices"] for k in i["kernels"]) for i in cls._spec["interfaces"])


def _compare(test, got, expected, what):
    for g, e in zip(_tuple(got), _tuple(expected)):
        if e is None:
            test.assertIsNone(g, what)
        else:
            dtype = str(e.dtype)[6:]
            assert_close(test, g.cpu(), e.cpu(), dtype, what)


def _out_buffer(op, inputs):
    specs = [None if t is None else (tuple(t.shape), str(t.dtype)[6:]) for t in inputs]
    index = [o.get("buffer") == "out" for o in op._spec["outputs"]].index(True)
    shape, dtype = op.meta(specs)[index]
    return torch.empty(shape, dtype=getattr(torch, dtype), device=DEVICE)


@requires_gpu
class CompileTest(unittest.TestCase):
    def setUp(self):
        torch._dynamo.reset()

    def test_every_boundary_operator_compiles_fullgraph(self):
        generator = torch.Generator().manual_seed(3)
        for cls, case, name, with_out in _branch_cases():
            with self.subTest(op=name, case=case["id"]):
                if not _runs_on(cls, "cuda"):
                    self.skipTest("%s has no CUDA kernels" % cls.__name__)
                torch._dynamo.reset()
                op = cls(**case_params(case))
                inputs = case_inputs(case, generator, DEVICE)
                eager_inputs = [None if t is None else t.clone() for t in inputs]
                out = _out_buffer(op, inputs) if with_out else None
                eager_out = None if out is None else out.clone()
                expected = op(*eager_inputs, out=eager_out)

                def call(*tensors):
                    return op(*tensors[:-1], out=tensors[-1])

                got = torch.compile(call, fullgraph=True)(*inputs, out)
                _compare(self, got, expected, "%s compiled vs eager" % name)
                for t, e in zip(inputs, eager_inputs):
                    if t is not None:
                        _compare(self, t, e, "%s: the inputs it writes" % name)

    def test_reduce_overhead(self):
        norm = tileops.ops.RMSNormFwdOp([4096], 1e-5)
        add = tileops.ops.AddFwdOp()
        compiled = torch.compile(lambda x, w, r: add(norm(x, w), r), mode="reduce-overhead", fullgraph=True)
        w = torch.rand(4096, device=DEVICE, dtype=torch.bfloat16)
        for step in range(4):
            x = torch.randn(4, 4096, device=DEVICE, dtype=torch.bfloat16)
            r = torch.randn(4, 4096, device=DEVICE, dtype=torch.bfloat16)
            got = compiled(x, w, r).clone()
            _compare(self, got, add(norm(x, w), r), "reduce-overhead step %d" % step)

    def test_dynamic_shapes_one_op_per_family(self):
        ops = {
            "norm": (tileops.ops.RMSNormFwdOp([256]), lambda m: [torch.randn(m, 256, device=DEVICE),
                                                              torch.rand(256, device=DEVICE)]),
            "elementwise": (tileops.ops.SiluAndMulFwdOp(), lambda m: [torch.randn(m, 2 * m + 6, device=DEVICE)]),
            "gemm": (tileops.ops.GemmFwdOp(), lambda m: [torch.randn(m, 64, device=DEVICE), torch.randn(96, 64, device=DEVICE)]),
            "reduction": (tileops.ops.SumFwdOp(1), lambda m: [torch.randn(m, 33, device=DEVICE)]),
            "rope": (tileops.ops.RopeFwdOp(), lambda m: [torch.randn(2, m, 4, 16, device=DEVICE), None]),
            "softmax": (tileops.ops.SoftmaxFwdOp(), lambda m: [torch.randn(3, m, device=DEVICE)]),
        }
        for family, (op, make) in ops.items():
            with self.subTest(family=family):
                torch._dynamo.reset()
                compiled = torch.compile(lambda *xs, op=op: op(*xs), dynamic=True, fullgraph=True)
                for m in (5, 9, 17):
                    inputs = make(m)
                    _compare(self, compiled(*inputs), op(*inputs), "%s dynamic, m = %d" % (family, m))


@requires_gpu
class StreamTest(unittest.TestCase):
    def test_a_call_runs_on_the_current_torch_stream(self):
        norm = tileops.ops.RMSNormFwdOp([4096])
        stream = torch.cuda.Stream()
        with torch.cuda.stream(stream):
            x = torch.empty(8, 4096, device=DEVICE)
            torch.cuda._sleep(200_000_000)  # the stream is busy long after the host moves on
            x.fill_(2.0)
            y = norm(x)
        stream.synchronize()
        # Had the kernel run on another stream it would have read x before fill_ wrote it.
        self.assertTrue(torch.allclose(y, torch.ones_like(y), atol=1e-3))
        self.assertEqual(norm.last_call["device"], DEVICE)
        self.assertEqual(tileops.current_stream(DEVICE), torch.cuda.default_stream().cuda_stream)


@requires_gpu
class OpcheckTest(unittest.TestCase):
    def test_opcheck_every_operator(self):
        generator = torch.Generator().manual_seed(4)
        for cls, case, name, with_out in _branch_cases():
            for device in ("cpu", DEVICE):
                with self.subTest(op=name, device=device):
                    if not _runs_on(cls, device.split(":")[0]):
                        self.skipTest("%s has no kernels for %s" % (cls.__name__, device))
                    op = cls(**case_params(case))
                    inputs = case_inputs(case, generator, device)
                    operator, branch = tileops_torch.operators[name]
                    args = list(inputs) + ([_out_buffer(op, inputs).to(device)] if with_out else []) + [op.instance_key]
                    torch.library.opcheck(operator, tuple(args))


@requires_gpu
class CudaCallTest(unittest.TestCase):
    def test_torch_cuda_tensors_in_and_out(self):
        norm = tileops.ops.RMSNormFwdOp([4096])
        x = torch.randn(4, 4096, device=DEVICE, dtype=torch.bfloat16)
        y = norm(x)
        self.assertEqual(y.device, x.device)
        self.assertEqual(norm.last_call["kernels"], ["cuda_rms_norm"])
        _compare(self, y, norm(x.cpu()).to(DEVICE), "cuda vs cpu")


def _family_ops():
    """One op per family with inputs of a given extent m, on the GPU."""
    return {
        "norm": (tileops.ops.RMSNormFwdOp([256]), lambda m: [torch.randn(m, 256, device=DEVICE),
                                                          torch.rand(256, device=DEVICE)]),
        "elementwise": (tileops.ops.SiluAndMulFwdOp(), lambda m: [torch.randn(m, 2 * m + 6, device=DEVICE)]),
        "gemm": (tileops.ops.GemmFwdOp(), lambda m: [torch.randn(m, 64, device=DEVICE), torch.randn(96, 64, device=DEVICE)]),
        "reduction": (tileops.ops.SumFwdOp(1), lambda m: [torch.randn(m, 33, device=DEVICE)]),
        "rope": (tileops.ops.RopeFwdOp(), lambda m: [torch.randn(2, m, 4, 16, device=DEVICE), None]),
        "softmax": (tileops.ops.SoftmaxFwdOp(), lambda m: [torch.randn(3, m, device=DEVICE)]),
    }


def _through_torch_ops(op, inputs):
    """op(*inputs) called through its boundary operator's torch custom op."""
    name = op.boundary_operator([t is not None for t in inputs])
    operator, branch = tileops_torch.operators[name]
    return branch.assemble(inputs, None, operator(*inputs, op.instance_key))


@requires_gpu
class StableKernelTest(unittest.TestCase):
    """tileops.torch's C++ kernels (torch 2.10 and later), registered through torch's stable C shim."""

    def setUp(self):
        version = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
        if version < (2, 10):
            self.skipTest("torch %s has no stable C shim to register kernels with" % torch.__version__)

    def test_the_stable_abi_kernels_are_active(self):
        self.assertEqual(tileops_torch.KERNELS, "stable-abi", tileops_torch.STABLE_KERNELS_UNAVAILABLE)

    def test_torch_ops_agree_with_tileops_ops_one_op_per_family(self):
        for family, (op, make) in _family_ops().items():
            with self.subTest(family=family):
                inputs = make(9)
                for call in ("plans", "uses the plan"):
                    _compare(self, _through_torch_ops(op, inputs), op(*inputs), "%s: torch.ops %s" % (family, call))

    def test_a_call_through_torch_ops_runs_on_the_current_stream(self):
        norm = tileops.ops.RMSNormFwdOp([4096])
        stream = torch.cuda.Stream()
        with torch.cuda.stream(stream):
            x = torch.empty(8, 4096, device=DEVICE)
            torch.cuda._sleep(200_000_000)
            x.fill_(2.0)
            y = torch.ops.tileops.norm_rms_norm_fwd(x, None, norm.instance_key)
        stream.synchronize()
        self.assertTrue(torch.allclose(y, torch.ones_like(y), atol=1e-3))

    def test_an_out_of_facts_first_call_raises_the_tileops_error(self):
        # With the C++ kernels the tileops class reaches the caller as the first word of torch's
        # RuntimeError (support.assert_raises_through_torch_ops); op(...) keeps the class.
        norm = tileops.ops.RMSNormFwdOp([256])
        bad = torch.randn(2, 7, device=DEVICE)
        with assert_raises_through_torch_ops(self, tileops.ValueError, r"input 'x' shape \[2, 7\] does not match"):
            torch.ops.tileops.norm_rms_norm_fwd(bad, None, norm.instance_key)
        with self.assertRaisesRegex(tileops.ValueError, r"input 'x' shape \[2, 7\] does not match"):
            norm(bad)
        x = torch.randn(2, 256, device=DEVICE)
        _compare(self, torch.ops.tileops.norm_rms_norm_fwd(x, None, norm.instance_key), norm(x), "after the error")

    def test_four_threads_calling_one_op_agree(self):
        import threading

        norm = tileops.ops.RMSNormFwdOp([1024])
        inputs = [torch.randn(16, 1024, device=DEVICE) for _ in range(4)]
        expected = [norm(x) for x in inputs]
        failures = []

        def worker(i):
            try:
                for _ in range(200):
                    y = torch.ops.tileops.norm_rms_norm_fwd(inputs[i], None, norm.instance_key)
                    if not torch.allclose(y, expected[i], atol=1e-4, rtol=1e-4):
                        failures.append("thread %d: a result differs" % i)
                        return
            except Exception as e:  # noqa: BLE001 - reported below
                failures.append("thread %d: %r" % (i, e))

        threads = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(failures, [])


if __name__ == "__main__":
    unittest.main()
