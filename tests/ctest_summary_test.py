#!/usr/bin/env python3
"""scripts/ctest_summary.py on a made-up JUnit record: counts, skip reasons with their steps, failures,
and the exit status."""
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


def main():
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
