"""Which kernels tileops.torch registers for its operators: the C++ stable-ABI kernels
(tileops._stablekernel) on torch 2.10 and later, the Python kernels on an older torch, with
TILEOPS_TORCH_STABLE_KERNELS=0, or without the built module; and that the Python kernels serve
calls wherever they are active. The stable-ABI kernels themselves are tested in test_gpu.py."""

import os
import subprocess
import sys
import unittest

import tileops
from support import assert_close, requires_torch, torch

if torch is not None:
    import tileops.torch as tileops_torch

    TORCH_VERSION = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2] if p.isdigit())


@requires_torch
class KernelChoiceTest(unittest.TestCase):
    def test_kernels_is_named(self):
        self.assertIn(tileops_torch.KERNELS, ("stable-abi", "python"))
        if tileops_torch.KERNELS == "python":
            self.assertTrue(tileops_torch.STABLE_KERNELS_UNAVAILABLE)

    @unittest.skipIf(torch is not None and TORCH_VERSION >= (2, 10), "torch 2.10 or later has the stable C shim")
    def test_an_older_torch_gets_the_python_kernels(self):
        self.assertEqual(tileops_torch.KERNELS, "python")
        self.assertIn("older than 2.10", tileops_torch.STABLE_KERNELS_UNAVAILABLE)

    def test_the_environment_variable_keeps_the_python_kernels(self):
        code = "import tileops.torch as t; print(t.KERNELS); print(t.STABLE_KERNELS_UNAVAILABLE)"
        env = dict(os.environ, TILEOPS_TORCH_STABLE_KERNELS="0")
        lines = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True,
                               text=True).stdout.splitlines()
        self.assertEqual(lines, ["python", "TILEOPS_TORCH_STABLE_KERNELS=0"])

    def test_the_active_kernels_serve_calls(self):
        norm = tileops.ops.RMSNormFwdOp([8])
        x, w = torch.randn(4, 8), torch.randn(8)
        for _ in range(2):  # the first call plans, the second uses the plan
            y = torch.ops.tileops.norm_rms_norm_fwd(x, w, norm.instance_key)
            assert_close(self, y, norm(x, w), "float32", "norm_rms_norm_fwd")
        add = tileops.ops.AddFwdOp(alpha=2)
        out = torch.empty(2, 3)
        self.assertIsNone(torch.ops.tileops.elementwise_add_fwd_out(torch.ones(2, 3), torch.ones(3), out,
                                                                     add.instance_key))
        self.assertEqual(out.tolist(), [[3.0] * 3] * 2)

    @unittest.skipIf(torch is not None and TORCH_VERSION >= (2, 10), "torch 2.10 or later has the stable C shim")
    def test_the_python_kernels_raise_tileops_classes(self):
        norm = tileops.ops.RMSNormFwdOp([8])
        with self.assertRaisesRegex(tileops.ValueError, r"input 'x' shape \[2, 7\] does not match"):
            torch.ops.tileops.norm_rms_norm_fwd(torch.randn(2, 7), None, norm.instance_key)


class StableKernelModuleTest(unittest.TestCase):
    """tileops._stablekernel where it was built: it refuses a torch without the stable shim,
    naming what is missing, and registers nothing then."""

    def setUp(self):
        try:
            from tileops import _stablekernel
        except ImportError:
            self.skipTest("tileops._stablekernel was not built (no Python headers)")
        self.module = _stablekernel

    def _setup(self, cpu):
        return self.module.setup(cpu, "", 0, 0, 0, 0, 0, 0, 2, lambda *args: [])

    def test_a_library_not_loaded_is_refused(self):
        self.assertIn("is not loaded", self._setup("/nonexistent/libtorch_cpu.so"))

    @requires_torch
    def test_a_torch_without_the_shim_is_refused(self):
        if TORCH_VERSION >= (2, 10):
            self.skipTest("torch %s has the stable C shim" % torch.__version__)
        cpu = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")
        if not os.path.exists(cpu):
            self.skipTest("this torch has no libtorch_cpu.so in its lib directory")
        why = self._setup(cpu)
        self.assertIn("torch lacks the stable shim function(s):", why)
        self.assertIn("torch_library_impl", why)


if __name__ == "__main__":
    unittest.main()
