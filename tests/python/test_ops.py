"""Every op on every workload row of its manifest (rows scaled down to indices of at most 16)
from Python on torch tensors: the in-tree dispatch against the reference target, and the ops
with a PyTorch counterpart against it too."""

import math
import unittest

import tileops
from support import assert_close, case_inputs, case_params, requires_torch, torch

INDEX_CAP = 16
# Outputs larger than this many elements are left to the C++ tests (AlibiFwdOp's parameters,
# which a cap does not scale, make 134M-element rows).
MAX_OUTPUT_ELEMENTS = 1 << 22

F = torch.nn.functional if torch is not None else None


def _double(t):
    return None if t is None else t.double()


def _rms_norm(p, x, weight):
    eps = p["eps"] if p.get("eps") is not None else torch.finfo(x.dtype).eps
    xd = x.double()
    y = xd / torch.sqrt((xd * xd).mean(dim=tuple(range(-len(p["normalized_shape"]), 0)), keepdim=True) + eps)
    return (y * weight.double() if weight is not None else y).to(x.dtype)


def _silu_and_mul(p, x):
    n = x.shape[-1] // 2
    xd = x.double()
    return (F.silu(xd[:, :n]) * xd[:, n:]).to(x.dtype)


def _gelu_and_mul(p, x):
    n = x.shape[-1] // 2
    xd = x.double()
    return (F.gelu(xd[:, :n], approximate=p.get("approximate", "none")) * xd[:, n:]).to(x.dtype)


def _fused_add_rms_norm(p, x, residual, weight):
    # y comes from the residual as stored, rounded to its dtype (vLLM's fused_add_rms_norm).
    stored = (x.double() + residual.double()).to(x.dtype)
    return _rms_norm(p, stored, weight), stored


def _gemm(p, a, b):
    ad = a.double().t() if p.get("trans_a") else a.double()
    bd = b.double().t() if p.get("trans_b", True) else b.double()
    return (ad @ bd).to(a.dtype)


def _reduce(fn):
    def reference(p, x):
        dim = p.get("dim")
        dims = tuple(range(x.dim())) if dim is None else ((dim,) if isinstance(dim, int) else tuple(dim))
        out_dtype = getattr(torch, p["dtype"]) if p.get("dtype") else (
            torch.int64 if not x.dtype.is_floating_point else x.dtype)
        acc = x.double() if x.dtype.is_floating_point else x.long()
        for d in sorted((d % max(x.dim(), 1) for d in dims), reverse=True):
            acc = fn(acc, dim=d, keepdim=True)
        if not p.get("keepdim"):
            acc = acc.reshape([s for i, s in enumerate(x.shape) if i not in {d % max(x.dim(), 1) for d in dims}])
        return acc.to(out_dtype)

    return reference


def _swiglu(p, x, w_gate_up, w_down):
    i = w_gate_up.shape[0] // 2
    h = (x.double() @ w_gate_up.double().t()).to(x.dtype).double()
    act = (F.silu(h[:, :i]) * h[:, i:]).to(x.dtype).double()
    return (act @ w_down.double().t()).to(x.dtype)


def _moe_route(p, logits, bias=None):
    ld = logits.double()
    scores = torch.sigmoid(ld) if p.get("scoring_func") == "sigmoid" else torch.softmax(ld, -1)
    choice = scores + bias.double() if bias is not None else scores
    # A stable descending sort puts the lower id first among equal scores, as the op does.
    ids = torch.sort(choice, dim=-1, descending=True, stable=True).indices[:, :p["top_k"]]
    weights = scores.gather(1, ids)
    if p.get("renormalize"):
        weights = weights / weights.sum(-1, keepdim=True)
    return (weights * p.get("routed_scaling_factor", 1.0)).float(), ids.int()


def _moe_experts(p, x, weights, ids, w_gate_up, w_down):
    act = F.gelu if p.get("activation") == "gelu_and_mul" else F.silu
    inter = w_down.shape[2]
    y = torch.zeros(x.shape, dtype=torch.float64)
    for e in ids.unique().tolist():
        rows, slots = (ids == e).nonzero(as_tuple=True)
        h = x[rows].double() @ w_gate_up[e].double().t()
        out = (act(h[:, :inter]) * h[:, inter:]) @ w_down[e].double().t()
        y.index_add_(0, rows, out * weights[rows, slots].double().unsqueeze(1))
    return y.to(x.dtype)


def _fused_moe(p, x, logits, w_gate_up, w_down, bias=None):
    weights, ids = _moe_route(p, logits, bias)
    return _moe_experts(p, x, weights, ids, w_gate_up, w_down)


def _fused_moe_shared(p, x, logits, w_gate_up, w_down, s_gate_up, s_down, bias=None):
    routed = _fused_moe(p, x, logits, w_gate_up, w_down, bias)
    return (routed.double() + _swiglu(p, x, s_gate_up, s_down).double()).to(x.dtype)
def _max_pool2d(p, x):
    return F.max_pool2d(x.double(), p["kernel_size"], p.get("stride"), p.get("padding", 0), p.get("dilation", 1),
                        p.get("ceil_mode", False)).to(x.dtype)


def _avg_pool2d(p, x):
    return F.avg_pool2d(x.double(), p["kernel_size"], p.get("stride"), p.get("padding", 0), p.get("ceil_mode", False),
                        p.get("count_include_pad", True), p.get("divisor_override")).to(x.dtype)
def _rope(interleaved):
    def reference(p, x, positions, factors=None, scale=1.0):
        heads_first = p.get("input_layout", "BSHD") == "BHSD"
        xd = x.double().transpose(1, 2) if heads_first else x.double()  # as [B, S, H, D]
        s, d = xd.shape[1], xd.shape[3]
        pos = torch.arange(s, dtype=torch.float64) if positions is None else positions.double()
        inv_freq = p.get("theta", 10000.0) ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
        if factors is not None:
            inv_freq = inv_freq / factors.double()
        angle = pos[:, None] * inv_freq[None, :]
        cos, sin = (torch.cos(angle) * scale)[None, :, None, :], (torch.sin(angle) * scale)[None, :, None, :]
        a, b = (xd[..., 0::2], xd[..., 1::2]) if interleaved else (xd[..., : d // 2], xd[..., d // 2:])
        ra, rb = a * cos - b * sin, b * cos + a * sin
        y = torch.stack((ra, rb), dim=-1).flatten(-2) if interleaved else torch.cat((ra, rb), dim=-1)
        return (y.transpose(1, 2) if heads_first else y).to(x.dtype)

    return reference


def _long_rope(p, x, positions):
    original = p.get("original_max_position_embeddings", 4096)
    extended = p.get("max_position_embeddings", 131072)
    seq = x.shape[2 if p.get("input_layout", "BSHD") == "BHSD" else 1]
    if positions is not None:
        seq = int(positions.max()) + 1 if positions.numel() else 0
    factors = p["long_factor"] if seq > original else p["short_factor"]
    ratio = extended / original
    scale = 1.0 if ratio <= 1 else math.sqrt(1 + math.log(ratio) / math.log(original))
    return _rope(False)(p, x, positions, factors, scale)


# PyTorch's counterpart of an op: fn(params, *inputs) -> expected output(s).
TORCH_REFERENCES = {
    "RMSNormFwdOp": _rms_norm,
    "LayerNormFwdOp": lambda p, x, w, b: F.layer_norm(
        x.double(), p["normalized_shape"], _double(w), _double(b), p.get("eps", 1e-5)).to(x.dtype),
    "SoftmaxFwdOp": lambda p, x: torch.softmax(x.double(), p.get("dim", -1)).to(x.dtype),
    "AddFwdOp": lambda p, a, b: (a.double() + p.get("alpha", 1) * b.double()).to(a.dtype)
    if a.dtype.is_floating_point else a + p.get("alpha", 1) * b,
    "ReluFwdOp": lambda p, x: torch.relu(x.double()).to(x.dtype),
    "GeluFwdOp": lambda p, x: F.gelu(x.double(), approximate=p.get("approximate", "none")).to(x.dtype),
    "SiluAndMulFwdOp": _silu_and_mul,
    "GeluAndMulFwdOp": _gelu_and_mul,
    "FusedAddRMSNormFwdOp": _fused_add_rms_norm,
    "EmbeddingFwdOp": lambda p, ids, weight: F.embedding(ids.long(), weight),
    "GemmFwdOp": _gemm,
    "SumFwdOp": _reduce(torch.sum),
    "ProdFwdOp": _reduce(torch.prod),
    "MeanFwdOp": _reduce(torch.mean),
    "SwiGLUMLPFwdOp": _swiglu,
    "MoERouteFwdOp": _moe_route,
    "MoEExpertsFwdOp": _moe_experts,
    "FusedMoEFwdOp": _fused_moe,
    "FusedMoESharedExpertFwdOp": _fused_moe_shared,
    "MaxPool2dFwdOp": _max_pool2d,
    "AvgPool2dFwdOp": _avg_pool2d,
    "RopeFwdOp": _rope(False),
    "RopeInterleavedFwdOp": _rope(True),
    "LongRoPEFwdOp": _long_rope,
    # The workload rows run on "self", the group of one rank, where torch.distributed's
    # all_reduce, all_gather_into_tensor and reduce_scatter_tensor leave the values as they are.
    "AllReduceFwdOp": lambda p, x: x.clone(),
    "AllGatherFwdOp": lambda p, x: x.clone(),
    "ReduceScatterFwdOp": lambda p, x: x.clone(),
}


def _clone(tensors):
    return [None if t is None else t.clone() for t in tensors]


def _outputs(result):
    return list(result) if isinstance(result, tuple) else [result]


@requires_torch
class OpResultsTest(unittest.TestCase):
    def test_every_op_on_every_workload_row(self):
        generator = torch.Generator().manual_seed(2024)
        ran = 0
        for name in tileops.ops.__all__:
            cls = getattr(tileops.ops, name)
            for case in tileops.workloads(name, INDEX_CAP):
                with self.subTest(op=name, case=case["id"]):
                    params = case_params(case)
                    if "device" in cls._param_decls and params.get("device") is None:
                        params["device"] = "cpu"
                    builtin, reference = cls(**params), cls(**params, target="reference")
                    specs = [None if s is None else (s["shape"], s["dtype"]) for s in case["inputs"]]
                    planned = builtin.meta(specs)
                    if any(o is not None and math.prod(o[0]) > MAX_OUTPUT_ELEMENTS for o in planned):
                        continue
                    inputs = case_inputs(case, generator)
                    got = _outputs(builtin(*_clone(inputs)))
                    want = _outputs(reference(*_clone(inputs)))
                    self.assertEqual(len(got), len(planned))
                    for o, (g, w, plan) in enumerate(zip(got, want, planned)):
                        if plan is None:
                            self.assertIsNone(g)
                            continue
                        self.assertEqual((tuple(g.shape), str(g.dtype)[6:]), plan)
                        assert_close(self, g, w, plan[1], "%s %s output %d vs the reference target" % (name, case["id"], o))
                    if name in TORCH_REFERENCES:
                        expected = _outputs(TORCH_REFERENCES[name](params, *_clone(inputs)))
                        assert_close(self, got[0], expected[0], planned[0][1], "%s %s vs PyTorch" % (name, case["id"]))
                    record = builtin.last_call
                    served = record["kernels"] + [k for s in record["stages"] for c in s["calls"] for k in c["kernels"]]
                    self.assertTrue(served, "%s %s: no kernel named in last_call" % (name, case["id"]))
                    ran += 1
        self.assertGreater(ran, 40)

    def test_alibi(self):
        op = tileops.ops.AlibiFwdOp(seq_len=5, num_heads=4, out_dtype=torch.float32, device="cpu")
        x = torch.zeros(1)
        self.assertIsInstance(op(), tileops.Tensor)
        y = op().to_torch()
        self.assertEqual(tuple(y.shape), (4, 5, 5))
        distance = torch.arange(5).view(1, 5) - torch.arange(5).view(5, 1)
        slopes = torch.tensor([2 ** (-8 * (h + 1) / 4) for h in range(4)])
        assert_close(self, y, (slopes.view(4, 1, 1) * distance).float(), "float32", "AlibiFwdOp vs its formula")
        self.assertEqual(x.tolist(), [0.0])

    def test_batch_norm_training_updates_its_running_statistics(self):
        op = tileops.ops.BatchNormFwdOp(training=True, momentum=0.5)
        x = torch.randn(4, 3, 5)
        mean, var = torch.zeros(3), torch.ones(3)
        y, batch_mean, rstd = op(x, mean, var)
        expected = F.batch_norm(x, torch.zeros(3), torch.ones(3), training=True, momentum=0.5, eps=1e-5)
        assert_close(self, y, expected, "float32", "BatchNormFwdOp training vs PyTorch")
        assert_close(self, batch_mean, x.mean(dim=(0, 2)), "float32", "the batch mean")
        assert_close(self, mean, 0.5 * x.mean(dim=(0, 2)), "float32", "the running mean, updated in place")
        self.assertEqual(op.last_call["written"], ["running_mean", "running_var"])
        eval_op = tileops.ops.BatchNormFwdOp()
        y, no_mean, no_rstd = eval_op(x, mean, var)
        self.assertIsNone(no_mean)
        self.assertIsNone(no_rstd)


if __name__ == "__main__":
    unittest.main()
