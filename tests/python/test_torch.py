"""tileops.torch on the CPU: every boundary operator registered under its name, its schema, its
kernel against the op called directly, and its Meta kernel (the fake) against tileops's own meta
call and a real call on every workload row of every op."""

import unittest

import tileops
from support import assert_close, assert_raises_through_torch_ops, case_inputs, case_params, requires_torch, torch

if torch is not None:
    import tileops.torch as tileops_torch
    from torch.fx.experimental.proxy_tensor import make_fx

INDEX_CAP = 16


def _outs(op, inputs, device):
    """The `out` arguments each workload row is called with: none, and for an op that takes
    `out` a new buffer shaped like its `buffer: out` output, so that every branch runs."""
    yield None
    if op._takes_out:
        specs = [None if t is None else (tuple(t.shape), str(t.dtype)[6:]) for t in inputs]
        index = [o.get("buffer") == "out" for o in op._spec["outputs"]].index(True)
        shape, dtype = op.meta(specs)[index]
        yield torch.empty(shape, dtype=getattr(torch, dtype), device=device)


def _cases():
    """(op class, workload case, boundary operator) for every boundary operator of every op:
    the branch a call of the case enters by."""
    for name in tileops.ops.__all__:
        cls = getattr(tileops.ops, name)
        if not cls._boundaries:
            continue
        for case in tileops.workloads(name):
            yield cls, case


@requires_torch
class RegistrationTest(unittest.TestCase):
    def test_every_boundary_operator_is_a_torch_operator(self):
        names = {b["name"] for name in tileops.ops.__all__ for b in getattr(tileops.ops, name)._spec["boundary_operators"]}
        self.assertEqual(set(tileops_torch.operators), names)
        for name in names:
            namespace, short = name.split("::")
            self.assertEqual(namespace, "tileops")
            self.assertTrue(hasattr(torch.ops.tileops, short), name)
        self.assertIn("tileops::norm_rms_norm_fwd", names)

    def test_schemas(self):
        schemas = {name: branch.schema for name, (_, branch) in tileops_torch.operators.items()}
        self.assertEqual(schemas["tileops::norm_rms_norm_fwd"],
                         "norm_rms_norm_fwd(Tensor x, Tensor? weight, str instance_key) -> Tensor")
        self.assertEqual(schemas["tileops::elementwise_add_fwd_out"],
                         "elementwise_add_fwd_out(Tensor a, Tensor b, Tensor(a!) out, str instance_key) -> ()")
        self.assertEqual(schemas["tileops::elementwise_relu_fwd_writes_input"],
                         "elementwise_relu_fwd_writes_input(Tensor(a!) input, str instance_key) -> ()")
        self.assertEqual(
            schemas["tileops::norm_batch_norm_fwd_writes_running_mean_writes_running_var"],
            "norm_batch_norm_fwd_writes_running_mean_writes_running_var(Tensor x, Tensor(a!) running_mean, "
            "Tensor(b!) running_var, Tensor? weight, Tensor? bias, str instance_key) -> (Tensor, Tensor, Tensor)")
        self.assertEqual(
            schemas["tileops::norm_batch_norm_fwd_without_mean_without_rstd"],
            "norm_batch_norm_fwd_without_mean_without_rstd(Tensor x, Tensor running_mean, Tensor running_var, "
            "Tensor? weight, Tensor? bias, str instance_key) -> Tensor")


@requires_torch
class OperatorTest(unittest.TestCase):
    def test_each_workload_row_through_its_operator(self):
        """On the CPU (rows capped): the operator's result equals the op's own, and its outputs
        come from torch's allocator."""
        generator = torch.Generator().manual_seed(11)
        ran = set()
        for cls, _ in _cases():
            for case in tileops.workloads(cls._name, INDEX_CAP):
                with self.subTest(op=cls._name, case=case["id"]):
                    op = cls(**case_params(case))
                    case_tensors = case_inputs(case, generator)
                    for out in _outs(op, case_tensors, "cpu"):
                        inputs = [None if t is None else t.clone() for t in case_tensors]
                        name = op.boundary_operator([t is not None for t in inputs], out is not None)
                        operator, branch = tileops_torch.operators[name]
                        direct_inputs = [None if t is None else t.clone() for t in case_tensors]
                        expected = op(*direct_inputs)
                        args = list(inputs) + ([out] if out is not None else []) + [op.instance_key]
                        got = branch.assemble(inputs, out, operator(*args))
                        expected = expected if isinstance(expected, tuple) else (expected,)
                        got = got if isinstance(got, tuple) else (got,)
                        for g, e in zip(got, expected):
                            if e is None:
                                self.assertIsNone(g)
                            else:
                                assert_close(self, g, e, str(e.dtype)[6:], "%s via %s" % (case["id"], name))
                        for t, d in zip(inputs, direct_inputs):
                            if t is not None:
                                self.assertTrue(torch.equal(t, d), "%s: the written inputs differ" % case["id"])
                        ran.add(name)
        self.assertEqual(ran, set(tileops_torch.operators))

    def test_out_branch(self):
        add = tileops.ops.AddFwdOp(alpha=2)
        a, b, out = torch.ones(2, 3), torch.full((3,), 3.0), torch.empty(2, 3)
        self.assertIsNone(torch.ops.tileops.elementwise_add_fwd_out(a, b, out, add.instance_key))
        self.assertEqual(out.tolist(), [[7.0] * 3] * 2)
        self.assertEqual(add.last_call["has_out"], True)

    def test_operator_kernels_allocate_with_torch(self):
        norm = tileops.ops.RMSNormFwdOp([8])
        x = torch.randn(4, 8)
        y = torch.ops.tileops.norm_rms_norm_fwd(x, None, norm.instance_key)
        # The output is torch's own storage: resizable, as tensors from torch's allocator are.
        y.resize_(64)
        self.assertEqual(y.shape, (64,))

    def test_an_instance_key_no_op_has(self):
        x = torch.randn(2, 8)
        with assert_raises_through_torch_ops(self, tileops.RuntimeError, "no live tileops op has instance key 'RMSNormFwdOp#0'"):
            torch.ops.tileops.norm_rms_norm_fwd(x, None, "RMSNormFwdOp#0")
        norm = tileops.ops.RMSNormFwdOp([8])
        key = norm.instance_key
        del norm
        with assert_raises_through_torch_ops(self, tileops.RuntimeError, "no live tileops op has instance key '%s'" % key):
            torch.ops.tileops.norm_rms_norm_fwd(x, None, key)

    def test_errors_cross_the_operator(self):
        norm = tileops.ops.RMSNormFwdOp([8])
        with assert_raises_through_torch_ops(self, tileops.ValueError, r"input 'x' shape \[2, 7\] does not match"):
            torch.ops.tileops.norm_rms_norm_fwd(torch.randn(2, 7), None, norm.instance_key)

    def test_boundary_call_is_what_a_compiled_call_runs(self):
        relu = tileops.ops.ReluFwdOp(inplace=True)
        x = torch.tensor([-1.0, 2.0])
        self.assertIs(tileops_torch.boundary_call(relu, [x], None), x)
        self.assertEqual(x.tolist(), [0.0, 2.0])
        batch_norm = tileops.ops.BatchNormFwdOp()
        y, mean, rstd = tileops_torch.boundary_call(batch_norm, [torch.randn(2, 3, 4), torch.zeros(3), torch.ones(3),
                                                                 None, None], None)
        self.assertEqual((tuple(y.shape), mean, rstd), ((2, 3, 4), None, None))
        add, out = tileops.ops.AddFwdOp(), torch.empty(2)
        self.assertIs(tileops_torch.boundary_call(add, [torch.ones(2), torch.ones(2)], out), out)
        self.assertEqual(out.tolist(), [2.0, 2.0])
        mlp = tileops.ops.SwiGLUMLPFwdOp()
        with self.assertRaisesRegex(tileops.OpNotAvailableError, "SwiGLUMLPFwdOp has no compile boundary"):
            tileops_torch.boundary_call(mlp, [torch.ones(1, 4), torch.ones(8, 4), torch.ones(4, 4)], None)
        with self.assertRaisesRegex(tileops.TypeError, "input 'x' is required but was not passed"):
            tileops_torch.boundary_call(tileops.ops.RMSNormFwdOp([4]), [None, None], None)

    def test_traced_with_make_fx(self):
        norm = tileops.ops.RMSNormFwdOp([8])
        relu = tileops.ops.ReluFwdOp()

        def block(x, w):
            return torch.ops.tileops.elementwise_relu_fwd(
                torch.ops.tileops.norm_rms_norm_fwd(x, w, norm.instance_key), relu.instance_key)

        x, w = torch.randn(3, 8), torch.rand(8)
        graph = make_fx(block, tracing_mode="fake")(x, w)
        self.assertIn("torch.ops.tileops.norm_rms_norm_fwd.default", graph.code)
        self.assertIn("'%s'" % norm.instance_key, graph.code)
        self.assertTrue(torch.equal(graph(x, w), relu(norm(x, w))))


@requires_torch
class FakeTest(unittest.TestCase):
    def test_meta_kernels_on_every_workload_row(self):
        """Every row as written (nothing allocated): the operator on meta tensors gives the
        shapes and dtypes of tileops's meta call; capped, those of a real call too."""
        checked = set()
        for cls, case in _cases():
            with self.subTest(op=cls._name, case=case["id"]):
                op = cls(**case_params(case))
                specs = [None if s is None else (s["shape"], s["dtype"]) for s in case["inputs"]]
                metas = [None if s is None else torch.empty(s[0], dtype=getattr(torch, s[1]), device="meta") for s in specs]
                for out in _outs(op, metas, "meta"):
                    name = op.boundary_operator([m is not None for m in metas], out is not None)
                    operator, branch = tileops_torch.operators[name]
                    args = list(metas) + ([out] if out is not None else []) + [op.instance_key]
                    outputs = branch.assemble(metas, out, operator(*args))
                    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
                    out_spec = None if out is None else (tuple(out.shape), str(out.dtype)[6:])
                    planned = op.meta(specs, out_spec)
                    for o, (got, plan) in enumerate(zip(outputs, planned)):
                        if plan is None:
                            self.assertIsNone(got)
                            continue
                        self.assertEqual(got.device.type, "meta")
                        self.assertEqual((tuple(got.shape), str(got.dtype)[6:]), plan, "%s output %d" % (case["id"], o))
                    checked.add(name)
        for name in tileops_torch.operators:
            if name not in checked:
                self.fail("no workload row enters by %s" % name)

    def test_meta_against_real_calls(self):
        generator = torch.Generator().manual_seed(6)
        for cls, _ in _cases():
            for case in tileops.workloads(cls._name, INDEX_CAP):
                with self.subTest(op=cls._name, case=case["id"]):
                    op = cls(**case_params(case))
                    inputs = case_inputs(case, generator)
                    metas = [None if t is None else t.to("meta") for t in inputs]
                    operator, branch = tileops_torch.operators[op.boundary_operator([t is not None for t in inputs])]
                    fake = branch.assemble(metas, None, operator(*metas, op.instance_key))
                    real = op(*inputs)
                    fake = fake if isinstance(fake, tuple) else (fake,)
                    real = real if isinstance(real, tuple) else (real,)
                    for f, r in zip(fake, real):
                        self.assertEqual(f is None, r is None)
                        if r is not None:
                            self.assertEqual((tuple(f.shape), f.dtype), (tuple(r.shape), r.dtype), case["id"])


if __name__ == "__main__":
    unittest.main()
