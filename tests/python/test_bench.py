"""tileops.bench: a call timed from Python gives the row `tileops bench --json` prints, and the
roofline picture of such rows is the one `tileops bench --svg` draws."""

import json
import os
import re
import tempfile
import unittest

import numpy

import tileops


def rms_norm_row(**peaks):
    norm = tileops.ops.RMSNormFwdOp([64])
    x = numpy.ones((4, 64), dtype=numpy.float32)
    w = numpy.ones(64, dtype=numpy.float32)
    return norm, tileops.bench.measure(norm, x, w, case="tiny", warmup=1, repeat=3, **peaks)


class MeasureTest(unittest.TestCase):
    def test_a_measured_row_has_the_bench_fields_and_the_manifest_roofline(self):
        norm, row = rms_norm_row(peak_gbps=10.0, peak_gflops=100.0)
        self.assertEqual(row["op"], "RMSNormFwdOp")
        self.assertEqual(row["case"], "tiny")
        self.assertEqual([k["key"] for k in row["kernels"]], ["cpu_rms_norm"])
        # The manifest: 4 FLOPs per element with a weight; bytes read x and the weight, write y.
        self.assertEqual(norm.last_call["roofline"], {"flops": 4 * 256, "bytes": (256 + 64 + 256) * 4})
        seconds = row["ms"] / 1e3
        self.assertGreater(seconds, 0)
        self.assertAlmostEqual(row["gflops"] * 1e9 * seconds, 1024, delta=1e-6)
        self.assertAlmostEqual(row["gbps"] * 1e9 * seconds, 2304, delta=1e-6)
        # The roof is the longer of the bytes at 10 GB/s and the FLOPs at 100 GFLOP/s.
        roof = max(2304 / 10e9, 1024 / 100e9)
        self.assertAlmostEqual(row["roofline_fraction"], roof / seconds, delta=1e-9 * roof / seconds)

    def test_without_peaks_the_fraction_is_none(self):
        _, row = rms_norm_row()
        self.assertIsNone(row["roofline_fraction"])

    def test_bad_counts_and_peaks_are_refused(self):
        norm = tileops.ops.ReluFwdOp()
        x = numpy.ones(4, dtype=numpy.float32)
        with self.assertRaisesRegex(tileops.ValueError, r"repeat must be an int >= 1, got 0"):
            tileops.bench.measure(norm, x, repeat=0)
        with self.assertRaisesRegex(tileops.ValueError, r"warmup must be an int >= 0, got -1"):
            tileops.bench.measure(norm, x, warmup=-1)
        with self.assertRaisesRegex(tileops.ValueError, r"peak_gbps must be a positive finite number or None, got inf"):
            tileops.bench.measure(norm, x, peak_gbps=float("inf"))
        with self.assertRaisesRegex(tileops.ValueError, "peak_gflops needs peak_gbps"):
            tileops.bench.measure(norm, x, peak_gflops=1.0)

    def test_synchronize_waits_for_a_device_it_knows_and_names_one_it_does_not(self):
        tileops.synchronize("cpu")
        with self.assertRaisesRegex(tileops.ValueError, r"cannot wait for cpu:3: the cpu runtime has 1 device\(s\)"):
            tileops.synchronize("cpu:3")


class RooflineSvgTest(unittest.TestCase):
    def test_rows_measured_here_are_drawn_under_both_ceilings(self):
        _, row = rms_norm_row()
        failed = {"op": "ReluFwdOp", "case": "broken", "error": "no kernel"}
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "roof.svg")
            svg = tileops.bench.roofline_svg({"peak_gbps": 10, "peak_gflops": 100, "rows": [row, failed]},
                                             device="cpu", path=path)
            with open(path, encoding="utf-8") as f:
                self.assertEqual(f.read(), svg)
        self.assertTrue(svg.startswith("<svg "))
        self.assertEqual(len(re.findall(r'class="row"', svg)), 1)
        self.assertIn("RMSNormFwdOp tiny (cpu_rms_norm)", svg)
        self.assertNotIn("broken", svg)
        self.assertRegex(svg, r">100 GFLOP/s</text>")
        self.assertIn("10 GB/s, cpu", svg)
        roof = re.search(r'class="roof"[^>]*points="([^"]*)"', svg).group(1)
        self.assertEqual(len(roof.split()), 3)

    def test_without_a_flop_peak_only_the_bandwidth_ceiling_is_drawn(self):
        _, row = rms_norm_row()
        svg = tileops.bench.roofline_svg('{"peak_gbps": 10, "peak_gflops": null, "rows": [%s]}'
                                         % json.dumps(row), device="cpu")
        self.assertIn("no FLOP peak", svg)
        self.assertIsNone(re.search(r">[0-9.e+]+ GFLOP/s</text>", svg))
        roof = re.search(r'class="roof"[^>]*points="([^"]*)"', svg).group(1)
        self.assertEqual(len(roof.split()), 2)
        self.assertEqual(len(re.findall(r'class="row"', svg)), 1)

    def test_results_of_another_shape_are_refused_naming_the_field(self):
        cases = [
            ("not json", "this text does not parse"),
            ("[]", "a JSON object, got array"),
            ({"rows": []}, 'an object with "peak_gbps"'),
            ({"peak_gbps": -1, "rows": []}, "a positive finite number at peak_gbps, got -1"),
            ({"peak_gbps": 1, "peak_gflops": "fast", "rows": []}, "a number at peak_gflops, got string"),
            ({"peak_gbps": 1, "rows": {}}, "an array at rows, got object"),
            ({"peak_gbps": 1, "rows": [{"case": "a"}]}, r'an object with "op" at rows\[0\]'),
            ({"peak_gbps": 1, "rows": [{"op": "A", "case": "a", "gbps": "1", "gflops": 1}]},
             r"a number at rows\[0\].gbps, got string"),
            ({"peak_gbps": 1, "rows": [{"op": "A", "case": "a", "gbps": 1, "gflops": 1, "kernels": [{}]}]},
             r'an object with "key" at rows\[0\].kernels\[0\]'),
            ({"peak_gbps": float("inf"), "rows": []}, "without NaN or infinity"),
        ]
        for result, message in cases:
            with self.subTest(result=result):
                with self.assertRaisesRegex(tileops.ValueError, message):
                    tileops.bench.roofline_svg(result)


if __name__ == "__main__":
    unittest.main()
