"""import tileops: the version, the generated op classes, the process facts, the error family
and how the package finds libtileops."""

import builtins
import inspect
import json
import os
import subprocess
import sys
import unittest

import tileops


class ImportTest(unittest.TestCase):
    def test_version_is_the_library_version(self):
        self.assertEqual(tileops.__version__, os.environ["TILEOPS_TEST_VERSION"])

    def test_every_in_tree_op_is_a_generated_class(self):
        names = [spec["name"] for spec in tileops._op.op_specs()]
        self.assertIn("RMSNormFwdOp", names)
        self.assertEqual(sorted(names), tileops.ops.__all__)
        for name in names:
            cls = getattr(tileops.ops, name)
            self.assertTrue(issubclass(cls, tileops.Op), name)
            self.assertEqual(cls._spec["name"], name)

    def test_constructor_signature_follows_the_manifest(self):
        signature = inspect.signature(tileops.ops.RMSNormFwdOp)
        self.assertEqual(list(signature.parameters), ["normalized_shape", "eps", "target"])
        self.assertIs(signature.parameters["normalized_shape"].default, inspect.Parameter.empty)
        self.assertIsNone(signature.parameters["eps"].default)
        add = inspect.signature(tileops.ops.AddFwdOp).parameters
        self.assertEqual(add["alpha"].kind, inspect.Parameter.KEYWORD_ONLY)
        self.assertIn("input  x:", tileops.ops.RMSNormFwdOp.__doc__)
        self.assertIn("boundary operators: tileops::norm_rms_norm_fwd", tileops.ops.RMSNormFwdOp.__doc__)

    def test_info_plugins_targets(self):
        info = tileops.info()
        self.assertEqual(info["version"], tileops.__version__)
        self.assertIn("cpu", [d["type"] for d in info["devices"]])
        plugins = tileops.plugins()
        self.assertIn("cpu", [p["name"] for p in plugins["plugins"]])
        self.assertEqual(plugins["load_failures"], [])
        self.assertIsInstance(tileops.targets(), list)

    def test_workloads(self):
        cases = tileops.workloads("RMSNormFwdOp", 64)
        first = cases[0]
        self.assertEqual(first["id"], "llama-8b-prefill-float16")
        self.assertEqual(first["params"]["normalized_shape"], [4096])
        self.assertEqual(first["inputs"][0], {"name": "x", "shape": [64, 4096], "dtype": "float16", "device": "cpu"})
        with self.assertRaisesRegex(tileops.ValueError, "unknown op 'NoSuchOp'"):
            tileops.workloads("NoSuchOp")

    def test_error_family_mirrors_cpp(self):
        self.assertTrue(issubclass(tileops.TypeError, tileops.Error))
        self.assertTrue(issubclass(tileops.TypeError, builtins.TypeError))
        self.assertTrue(issubclass(tileops.ValueError, builtins.ValueError))
        self.assertTrue(issubclass(tileops.OutOfMemoryError, tileops.RuntimeError))
        self.assertTrue(issubclass(tileops.OpNotAvailableError, tileops.RuntimeError))
        self.assertTrue(issubclass(tileops.AmbiguousTargetError, tileops.RuntimeError))
        self.assertTrue(issubclass(tileops.BackendError, tileops.RuntimeError))
        self.assertTrue(issubclass(tileops.UnknownTargetError, tileops.ValueError))
        self.assertTrue(issubclass(tileops.ConfigError, tileops.ValueError))
        self.assertTrue(issubclass(tileops.ManifestError, tileops.ValueError))
        self.assertEqual(tileops.OutOfMemoryError.__module__, "tileops")

    def test_a_bad_library_path_is_an_import_error_naming_it(self):
        env = dict(os.environ, TILEOPS_LIBRARY="/nonexistent/libtileops.so.0")
        run = subprocess.run([sys.executable, "-c", "import tileops"], env=env, capture_output=True, text=True)
        self.assertNotEqual(run.returncode, 0)
        self.assertIn("ImportError: tileops: cannot load libtileops; set TILEOPS_LIBRARY to its path", run.stderr)
        self.assertIn("/nonexistent/libtileops.so.0 (from TILEOPS_LIBRARY)", run.stderr)

    def test_library_from_the_environment(self):
        env = dict(os.environ, TILEOPS_LIBRARY=os.environ["TILEOPS_TEST_LIBRARY"])
        code = "import tileops, json; print(json.dumps(tileops.__version__))"
        run = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertEqual(json.loads(run.stdout), tileops.__version__)


if __name__ == "__main__":
    unittest.main()
