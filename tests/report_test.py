#!/usr/bin/env python3
"""scripts/report.py on synthetic records: tables, the summary against the bars, failures, the
plain-text chart when matplotlib is absent, and the chapter blocks it rewrites (standard library)."""
import importlib.util
import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("report", os.path.join(HERE, "..", "scripts", "report.py"))
report = importlib.util.module_from_spec(spec)
spec.loader.exec_module(report)


def record(step, index, kernel, metric, pct, total=None, metric_from="kernel_ms", extra=None):
    folder = step.split("/")[0]
    return {"step": step, "folder": folder, "series": "main", "index": index, "device": "Test GPU",
            "cuda": "13.0", "date": "2026-11-21", "size": {"n": 1}, "verified": True, "max_err": 0,
            "kernel_ms": {"median": kernel, "min": kernel, "max": kernel, "reps": 3},
            "total_ms": {"median": total, "min": total, "max": total, "reps": 3} if total else None,
            "metric": {"value": metric, "unit": "GB/s"}, "metric_from": metric_from,
            "ceiling": {"name": "copy", "value": 3000.0, "unit": "GB/s"}, "pct_of_ceiling": pct,
            "extra": extra or {}}


class ReportTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.run = self.dir.name
        recs = [record("reduction/00_cub", 0, 0.36, 3000, 100.0),
                record("reduction/01_neighbored", 1, 4.0, 250, 8.3, total=4.3, metric_from="total_ms"),
                record("reduction/08_grid_stride_int4", 8, 0.35, 3030, 101.0),
                record("vector_add/04_grid_stride", 4, 0.45, 2670, 89.0)]
        for r in recs:
            with open(os.path.join(self.run, r["step"].replace("/", "_") + ".json"), "w") as f:
                f.write(json.dumps(r) + "\n")
        with open(os.path.join(self.run, "failures.tsv"), "w") as f:
            f.write("vector_add/07_vectorized\t1\tverification failed\n")
        os.environ["LADDER_NO_MATPLOTLIB"] = "1"

    def tearDown(self):
        self.dir.cleanup()

    def test_report_tables_summary_failures_and_text_chart(self):
        self.assertEqual(report.report(self.run), 0)
        with open(os.path.join(self.run, "report.md")) as f:
            md = f.read()
        self.assertIn("| reduction | 08_grid_stride_int4 |", md)
        self.assertIn("| yes |", md)                       # 101% >= 95%
        self.assertIn("| vector_add | 04_grid_stride |", md)
        self.assertIn("| NO |", md)                        # 89% < 95%
        self.assertIn("vector_add/07_vectorized | 1 |", md)  # the failure is listed
        self.assertIn("8.3% (total)", md)                  # the basis is said
        self.assertIn("12.29x", md)                         # speedup on the metric's basis: 4.3 / 0.35
        self.assertIn("```", md)                            # the text chart, without matplotlib
        self.assertFalse([p for p in os.listdir(self.run) if p.endswith(".png")])

    def test_chapter_blocks_and_values_are_rewritten(self):
        records = report.load_run(self.run)[0]
        by_id = {r["step"]: r for r in records}
        groups = report.ladders(records)
        text = ("a <!-- v reduction/08_grid_stride_int4 pct_of_ceiling -->old<!-- /v --> b "
                "<!-- v reduction/08_grid_stride_int4 speedup:01_neighbored -->old<!-- /v -->\n"
                "<!-- ladder-table reduction main -->\nold\n<!-- /ladder-table -->\n"
                "<!-- ladder-run reduction -->old<!-- /ladder-run -->\n"
                "<!-- v reduction/09_missing kernel_ms -->old<!-- /v -->")
        problems = []
        out = report.rewrite(text, groups, by_id, {}, problems, "test")
        self.assertIn("-->101.0%<!-- /v -->", out)
        self.assertIn("-->11.43x<!-- /v -->", out)          # kernel times: 4.0 / 0.35
        self.assertIn("| 00_cub | 0.36 |", out)
        self.assertIn("Test GPU, CUDA 13.0, 2026-11-21", out)
        self.assertIn("09_missing kernel_ms -->old<!-- /v -->", out)  # left alone, and reported
        self.assertEqual(len(problems), 1)
        self.assertEqual(report.rewrite(out, groups, by_id, {}, [], "test"), out)  # idempotent

    def test_sweep_block_and_labelled_values(self):
        odd = [record("transpose/06_vector_tiles", 6, 0.3, 1900, 65.0), record("transpose/07_sector_aligned", 7, 0.2, 2700, 93.0)]
        for r in odd:
            r["size"] = {"rows": 8191, "cols": 8193}
        labelled = {"odd": odd}
        by_id = {f"odd:{r['step']}": r for r in odd}
        text = ("<!-- ladder-sweep transpose odd -->\n<!-- /ladder-sweep -->\n"
                "x <!-- v odd:transpose/07_sector_aligned speedup:06_vector_tiles -->-<!-- /v -->")
        out = report.rewrite(text, {}, by_id, {}, [], "test", labelled)
        self.assertIn("| size | 06_vector_tiles | 07_sector_aligned | ceiling |", out)
        self.assertIn("| 8191 x 8193 | 65.0% | 93.0% | 3,000-3,000 GB/s |", out)
        self.assertIn("-->1.50x<!-- /v -->", out)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
