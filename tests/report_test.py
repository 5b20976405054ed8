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
        summary = {l.split(" | ")[0][2:]: l for l in md.splitlines()
                   if l.startswith(("| reduction | 08_grid_stride_int4 |", "| vector_add | 04_grid_stride |"))}
        self.assertTrue(summary["reduction"].endswith("| yes |"), md)  # 101% >= 95%
        self.assertTrue(summary["vector_add"].endswith("| NO |"), md)  # 89% < 95%
        self.assertIn("vector_add/07_vectorized | 1 |", md)  # the failure is listed
        self.assertIn("8.3% (total)", md)                  # the basis is said
        self.assertIn("12.29x", md)                         # speedup on the metric's basis: 4.3 / 0.35
        self.assertIn("```", md)                            # the text chart, without matplotlib
        self.assertFalse([p for p in os.listdir(self.run) if p.endswith(".png")])

    def test_ceiling_ranges_print_once_where_both_ends_round_alike(self):
        with tempfile.TemporaryDirectory() as run:
            for i, (step, value) in enumerate([("transpose/00_copy", 376.6), ("transpose/01_naive_16x16", 377.4),
                                               ("vector_add/01_single_thread", 3010.2),
                                               ("vector_add/02_block_strided", 3016.8)]):
                r = record(step, i, 1.0, 100, 50.0)
                r["ceiling"]["value"] = value
                with open(os.path.join(run, step.replace("/", "_") + ".json"), "w") as f:
                    f.write(json.dumps(r) + "\n")
            self.assertEqual(report.report(run), 0)
            with open(os.path.join(run, "report.md")) as f:
                md = f.read()
        self.assertIn("copy 377 GB/s.", md)             # 376.6 and 377.4 both print as 377
        self.assertNotIn("377-377", md)
        self.assertIn("copy 3,010-3,017 GB/s.", md)     # two ends that print differently

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
        self.assertIn("| 8191 x 8193 | 65.0% | 93.0% | 3,000 GB/s |", out)  # one value, not "3,000-3,000"
        self.assertIn("-->1.50x<!-- /v -->", out)

    def test_labelled_run_tables(self):
        # Another GPU's run (LABEL=DIR): its own table, run line and summary, never mixed with the main run.
        other = [dict(record("reduction/00_cub", 0, 0.30, 3600, 100.0), device="Other GPU"),
                 dict(record("reduction/08_grid_stride_int4", 8, 0.31, 3500, 97.0), device="Other GPU")]
        text = ("<!-- ladder-table reduction main h200 -->\n<!-- /ladder-table -->\n"
                "<!-- ladder-run reduction h200 --><!-- /ladder-run -->\n"
                "<!-- ladder-summary h200 -->\n<!-- /ladder-summary -->")
        problems = []
        out = report.rewrite(text, {}, {}, {}, problems, "test", {"h200": other})
        self.assertEqual(problems, [])
        self.assertIn("| 08_grid_stride_int4 | 0.31 |", out)
        self.assertIn("Other GPU, CUDA 13.0, 2026-11-21", out)
        self.assertIn("| reduction | 08_grid_stride_int4 | 3,500 GB/s | 97.0% of ceiling |", out)

    def test_gpu_matrix_tables(self):
        # scripts/profile_matrix.sh's layout: DIR/<profile>/<folder>_<step>.json|.err|.static_smem
        d = os.path.join(self.run, "matrix")

        def put(profile, name, ext, text):
            os.makedirs(os.path.join(d, profile), exist_ok=True)
            with open(os.path.join(d, profile, f"{name}.{ext}"), "w") as f:
                f.write(text + "\n")

        tuned = record("sgemm/09_pipelined", 9, 3.0, 47000, 92.0, extra={"smem_per_block_bytes": 98304})
        tuned["choice"] = "128x256x16_8x16_w64x64_s2: fills whole waves"
        put("none", "sgemm_09_pipelined", "json", json.dumps(tuned))
        put("none", "sgemm_09_pipelined", "static_smem", "0")
        small = dict(tuned, choice="128x128x16_8x8_w64x32_s2: the largest tile that fits 99 KB")
        put("rtx3060", "sgemm_09_pipelined", "json", json.dumps(small))
        put("t4", "sgemm_09_pipelined", "err", "cp.async needs sm_80 or newer; this GPU (Tesla T4 (profile t4 on H100)) is sm_75")
        put("none", "sgemm_02_naive", "json", json.dumps(record("sgemm/02_naive", 2, 44.0, 3100, 6.0)))
        put("none", "sgemm_02_naive", "static_smem", "4096")
        for p in ("t4", "rtx3060", "v100"):
            put(p, "sgemm_02_naive", "json", json.dumps(record("sgemm/02_naive", 2, 44.0, 3100, 6.0)))
        steps, static_smem = report.load_matrix(d)
        table = report.gpu_table("sgemm", steps, static_smem)
        self.assertIn("| 02_naive | sm_70 | 4.0 KB | runs | runs | runs | - | runs |", table)
        self.assertIn("| 09_pipelined | sm_86 | 96.0 KB | runs: 128x256x16_8x16_w64x64_s2 | - | "
                      "exit 2: cp.async needs sm_80 or newer | - | adapts: 128x128x16_8x8_w64x32_s2 |", table)
        summary = report.gpu_summary(steps)
        self.assertIn("| [sgemm](sgemm/README.md) | 2 | 1 run | 1 run, 1 exit 2 | 0 run | 2 run (1 adapt) |", summary)
        text = "<!-- ladder-gpus sgemm m -->\n<!-- /ladder-gpus -->"
        out = report.rewrite(text, {}, {}, {}, [], "test", {}, {"m": (steps, static_smem)})
        self.assertIn(table, out)
        self.assertIn("under each device profile on Test GPU, CUDA 13.0, 2026-11-21", out)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
