#!/usr/bin/env python3
"""Test of scripts/check_docs.py on small fake repositories built in a temporary directory.

    python3 tests/check_docs_test.py        prints "ok" and exits 0 when every case passes

A clean fake repository must pass (exit 0); a broken one must report exactly the problems planted in
it, one line each, and exit 1.
"""
import io
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKER = os.path.join(HERE, "..", "scripts", "check_docs.py")
sys.path.insert(0, os.path.join(HERE, "..", "scripts"))
import check_docs  # noqa: E402

FENCE = "```"

# A repository with one ladder folder whose docs are all correct.
CLEAN = {
    "CMakeLists.txt": "project(fake)\nadd_subdirectory(ladder)\n",
    "ladder/CMakeLists.txt": (
        "# add_step(98_commented_out) is not a step\n"
        "ladder_folder(SIZE_FLAGS --n)\n"
        "add_step(00_cpu)\n"
        "add_step(01_naive TUNABLE SANITIZE \"--n 33\")  # add_step(99_in_a_comment)\n"
        "add_step(aat_01_strided\n"
        "         TEST_ARGS --n 5)\n"),
    "common/CMakeLists.txt": "add_library(common x.cpp)\n",  # no add_step: not a folder
    "scripts/profile.sh": "#!/bin/sh\n",
    "scripts/sanitize.sh": "#!/bin/sh\n",
    "scripts/diff_steps.sh": "#!/bin/sh\n",
    "scripts/run_all.sh": "#!/bin/sh\n# writes results/<device>/<time>/\n",
    "scripts/tune.sh": "#!/bin/sh\n# records in results/tune/<step>.jsonl\n",
    "README.md": (
        "# Fake ladder\n\n"
        "[The ladder](ladder/README.md), [its first section](ladder/README.md#01-naive-one-thread-each),\n"
        "[the guide](docs/guide.md#a-heading-with-code-and-punctuation), [the web](https://example.com/x.md),\n"
        "[mail](mailto:someone@example.com), [here](#fake-ladder) and a link whose text\n"
        "[wraps over\ntwo lines](docs/guide.md). In code, `[not a link](nowhere.md)` is not checked.\n\n"
        f"{FENCE}\n"
        "scripts/run_all.sh ladder   # writes results/<device>/<time>/\n"
        f"{FENCE}\n"),
    "docs/guide.md": (
        "# Guide\n\n"
        "## A heading with `code`, and punctuation!\n\n"
        "Records of a run: results/<device>/latest; tuning records: `results/tune/`.\n\n"
        f"{FENCE}cpp\n"
        "// a C++ block is not a command: build/bin/anything scripts/none.sh\n"
        f"{FENCE}\n"),
    "ladder/README.md": (
        "# ladder\n\n"
        "![the chart](img/chart.png)\n\n"
        "## 01: naive, one thread each\n\n"
        "Step 01 takes <!-- v ladder/01_naive kernel_ms -->1.0 ms<!-- /v -->, "
        "<!-- v label:ladder/01_naive speedup:00_cpu -->3x<!-- /v --> faster.\n\n"
        f"{FENCE}bash\n"
        "$ build/bin/ladder_01_naive --n 5      # a prompt, stripped\n"
        "# build/bin/ladder_97_comment is in a comment\n"
        "build/bin/ladder_aat_01_strided --n 5 2>&1 | tee /tmp/log\n"
        "scripts/profile.sh ladder/01_naive ladder_aat_01_strided -- --n 5\n"
        "scripts/diff_steps.sh ladder 00 01\n"
        "scripts/diff_steps.sh ladder aat_01 01\n"
        "scripts/sanitize.sh ladder --steps 01_naive,ladder/aat_01_strided --tool memcheck\n"
        "scripts/run_all.sh \\\n"
        "    ladder\n"
        "scripts/tune.sh --out results/sweep && cat results/sweep/table.md\n"
        f"{FENCE}\n"),
    "ladder/img/chart.png": "",
    "unscanned/README.md": "[not scanned](missing.md)\n",  # no CMakeLists.txt with add_step
}

# The same repository with one problem of each kind planted, and the lines the checker must print.
BROKEN = dict(CLEAN)
BROKEN["README.md"] = CLEAN["README.md"] + (
    "\n[gone](missing.md) and [bad anchor](docs/guide.md#no-such-heading) "
    "and ![gone image](ladder/img/none.png).\n")
BROKEN["ladder/README.md"] = CLEAN["ladder/README.md"] + (
    "\nThe records are in `results/h100-run1/ladder.json`.\n"
    "<!-- v ladder/05_gone kernel_ms -->1 ms<!-- /v -->\n\n"
    f"{FENCE}sh\n"
    "build/bin/ladder_02_renamed --n 5\n"
    "scripts/profile.sh ladder/07_missing\n"
    "scripts/diff_steps.sh ladder 00 05\n"
    "scripts/sanitize.sh ladder --steps 01_naive,09_nope\n"
    "scripts/missing.sh ladder\n"
    f"{FENCE}\n")
BROKEN["ladder/img/orphan.png"] = ""
EXPECTED_BROKEN = [
    "README.md:13: link target 'missing.md' does not exist",
    "README.md:13: link 'docs/guide.md#no-such-heading': no heading '#no-such-heading' in docs/guide.md",
    "README.md:13: link target 'ladder/img/none.png' does not exist",
    "ladder/README.md:22: cites results/h100-run1/ladder.json: a clone has no results/ "
    "(cite the numbers, not the run's files)",
    "ladder/README.md:23: value marker names no step: 'ladder/05_gone'",
    "ladder/README.md:26: build/bin/ladder_02_renamed: no such step executable",
    "ladder/README.md:27: scripts/profile.sh: 'ladder/07_missing': no step '07_missing' in ladder",
    "ladder/README.md:28: scripts/diff_steps.sh: '05': no step of ladder starts with '05_'",
    "ladder/README.md:29: scripts/sanitize.sh: '09_nope' is not a step",
    "ladder/README.md:30: scripts/missing.sh does not exist",
    "ladder/img/orphan.png:1: image is referenced by no Markdown file",
]


def make_repo(files):
    root = tempfile.mkdtemp(prefix="check_docs_test_")
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as f:
            f.write(text)
    return root


def run_checker(root):
    done = subprocess.run([sys.executable, CHECKER, "--root", root], capture_output=True, text=True)
    return done.returncode, done.stdout.splitlines()


class CheckDocsTest(unittest.TestCase):
    def test_clean_repository_passes(self):
        rc, lines = run_checker(make_repo(CLEAN))
        self.assertEqual(lines, ["docs: 3 files, 0 problems"])
        self.assertEqual(rc, 0)

    def test_broken_repository_reports_each_planted_problem(self):
        rc, lines = run_checker(make_repo(BROKEN))
        self.assertEqual(lines[:-1], EXPECTED_BROKEN)
        self.assertEqual(lines[-1], f"docs: 3 files, {len(EXPECTED_BROKEN)} problems")
        self.assertEqual(rc, 1)

    def test_steps_come_from_add_step_lines(self):
        self.assertEqual(check_docs.read_steps(CLEAN["ladder/CMakeLists.txt"]),
                         ["00_cpu", "01_naive", "aat_01_strided"])

    def test_github_slugs(self):
        self.assertEqual(check_docs.github_slug("07_sector_aligned: every shape"),
                         "07_sector_aligned-every-shape")
        self.assertEqual(check_docs.github_slug('01: `<<<1, L>>>` — "Too small"'), "01-1-l--too-small")
        self.assertEqual(check_docs.github_slug("Variants (`--variant`)"), "variants---variant")

    def test_duplicate_headings_get_numbered_anchors(self):
        anchors = check_docs.heading_anchors(["# Notes", "## Notes", "```", "# not a heading", "```"])
        self.assertEqual(anchors, {"notes", "notes-1"})

    def test_step_like_words(self):
        for word in ("07_sector_aligned", "tf32_02_mma_sync", "sgemm/aat_01_strided", "vector_add_04_x"):
            self.assertTrue(check_docs.step_like(word), word)
        for word in ("ladder", "--n", "4096x4096x4096", "ncu", "racecheck"):
            self.assertFalse(check_docs.step_like(word), word)


if __name__ == "__main__":
    stream = io.StringIO()
    result = unittest.TextTestRunner(stream=stream, verbosity=2).run(
        unittest.defaultTestLoader.loadTestsFromTestCase(CheckDocsTest))
    if not result.wasSuccessful():
        sys.stderr.write(stream.getvalue())
        sys.exit(1)
    print("ok")
