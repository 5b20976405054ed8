#!/usr/bin/env python3
"""scripts/ctest_summary.py on a made-up JUnit record: counts, skip reasons with their steps, failures,
and the exit status; and on the running log a stopped ctest leaves (LastTest.log.tmp)."""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL = os.path.join(ROOT, "scripts", "ctest_summary.py")

RECORD = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="x" tests="7" failures="1" skipped="5">
 <testcase name="a" status="run"><system-out>ok</system-out></testcase>
 <testcase name="sgemm_09_pipelined" status="notrun"><skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>
  <system-out>unsupported: sgemm/09_pipelined needs sm_80 or newer (cp.async); this GPU (Tesla T4) is sm_75
</system-out></testcase>
 <testcase name="MainSteps/SgemmGpu.MatchesReference/tf32_03" status="notrun"><skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>
  <system-out>x.cpp:1: Skipped
needs sm_90a — sgemm/tf32_03_wgmma_tma needs sm_90a, an sm_90 GPU and no other (wgmma, TMA); this GPU (A100) is sm_80
[  SKIPPED ] MainSteps/SgemmGpu.MatchesReference/tf32_03 (1 ms)
</system-out></testcase>
 <testcase name="t" status="notrun"><skipped message="x"/>
  <system-out>x.cpp:1: Skipped
too little shared memory — separable_conv/09_fused --tile 128x64_p4 needs 196608 bytes of shared memory per block; this GPU (A100) allows 166912
[  SKIPPED ] t (1 ms)
</system-out></testcase>
 <testcase name="n" status="notrun"><skipped message="SKIP_RETURN_CODE=77"/><system-out>skipped: no CUDA device on this machine (exit 77)</system-out></testcase>
 <testcase name="n2" status="notrun"><skipped message="x"/><system-out>x.cpp:3: Skipped
no CUDA device on this machine: GPU test skipped
[  SKIPPED ] n2 (0 ms)</system-out></testcase>
 <testcase name="broken" status="fail"><failure message=""/><system-out>line 1
sgemm/09_pipelined refused although this GPU (sm_80) meets its declared requirement</system-out></testcase>
</testsuite>
"""

SEP = "-" * 58
# Two finished tests and the one the stop interrupted, in ctest's running-log format.
RUNNING_LOG = f"""Start testing: Nov 25 16:55 UTC
{SEP}
8/1927 Testing: vector_add_06_streams
8/1927 Test: vector_add_06_streams
Command: "build/bin/vector_add_06_streams" "--n" "1000003"
Directory: build/vector_add
"vector_add_06_streams" start time: Nov 25 16:55 UTC
Output:
{SEP}
check    PASS (4000012 elements, max error 0)
<end of output>
Test time =   2.95 sec
{SEP}
Test Passed.
"vector_add_06_streams" end time: Nov 25 16:55 UTC
"vector_add_06_streams" time elapsed: 00:00:02
{SEP}

45/1927 Testing: sgemm_09_pipelined
45/1927 Test: sgemm_09_pipelined
Command: "build/bin/sgemm_09_pipelined"
Directory: build/sgemm
"sgemm_09_pipelined" start time: Nov 25 16:55 UTC
Output:
{SEP}
unsupported: sgemm/09_pipelined needs sm_80 or newer (cp.async); this GPU (Tesla T4) is sm_75
<end of output>
Test time =   0.50 sec
{SEP}
Skip regular expression found in output. Regex=[unsupported: sgemm/09_pipelined needs sm_80[ ,]]
"sgemm_09_pipelined" end time: Nov 25 16:55 UTC
"sgemm_09_pipelined" time elapsed: 00:00:00
{SEP}

46/1927 Testing: sgemm_10_split_k
46/1927 Test: sgemm_10_split_k
Command: "build/bin/sgemm_10_split_k"
"""


def check_running_log():
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "LastTest.log.tmp")
        with open(path, "w") as f:
            f.write(RUNNING_LOG)
        r = subprocess.run([sys.executable, TOOL, path, "--label", "stopped"], capture_output=True, text=True)
    expected = ["stopped: 2 tests: 1 passed, 1 skipped, 0 failed",
                "  skipped, needs sm_80: 1 tests (sgemm/09_pipelined)"]
    bad = [e for e in expected if e not in r.stdout.splitlines()]
    if bad or r.returncode != 0:
        print(f"running log: exit {r.returncode}; missing lines {bad} in:\n{r.stdout}{r.stderr}")
        return False
    return True


def main():
    if not check_running_log():
        return 1
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "r.xml")
        with open(path, "w") as f:
            f.write(RECORD)
        r = subprocess.run([sys.executable, TOOL, path, "--label", "t4"], capture_output=True, text=True)
    out = r.stdout
    expected = [
        "t4: 7 tests: 1 passed, 5 skipped, 1 failed",
        "  skipped, needs sm_80: 1 tests (sgemm/09_pipelined)",
        "  skipped, needs sm_90a: 1 tests (sgemm/tf32_03_wgmma_tma)",
        "  skipped, no GPU: 2 tests",
        "  skipped, too little shared memory: 1 tests (separable_conv/09_fused)",
        "  FAILED broken",
    ]
    bad = [e for e in expected if e not in out.splitlines()]
    if bad or r.returncode != 1:
        print(f"exit {r.returncode}; missing lines {bad} in:\n{out}{r.stderr}")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
