#!/usr/bin/env python3
"""One short summary of a ctest run, from the JUnit file ctest writes (ctest --output-junit FILE).

  ctest_summary.py JUNIT.xml [--label NAME]

Prints, instead of ctest's list of every test that did not run:
  NAME: 1429 tests: 1200 passed, 229 skipped, 0 failed
    skipped, needs sm_80: 120 tests (sgemm/09_pipelined, sgemm/10_split_k, ...)
    skipped, needs sm_90a: 40 tests (sgemm/tf32_03_wgmma_tma, sgemm/tf32_04_wgmma_specialized)
    skipped, too little shared memory: 2 tests
    skipped, no GPU: 1428 tests
  then, for each failed test, its name and the last lines of its output.
A skip's reason is read from the test's output: a step's "unsupported: <id> needs sm_80 ..." line or a
GPU test's skip message (tests/step_runner.h, judge()). Exit status: 1 if any test failed, else 0.
Standard library only.
"""
import re
import sys
import xml.etree.ElementTree as ET

STEP_NEEDS = re.compile(r"\b([a-z_]+/[0-9A-Za-z_]+) needs (sm_\d+a?)\b")


def skip_message(output):
    """A GoogleTest skip's message (the lines after "...: Skipped"), else the whole output."""
    m = re.search(r": Skipped\n(.*?)\n\[  SKIPPED \]", output, re.S)
    return m.group(1) if m else output


def reason_of(output):
    """The category of a skipped test's output, and the step it names (or None)."""
    output = skip_message(output)
    m = STEP_NEEDS.search(output)
    if m:
        return f"needs {m.group(2)}", m.group(1)
    m = re.search(r"\bneeds (sm_\d+a?)\b", output)
    if m:
        return f"needs {m.group(1)}", None
    if "bytes of shared memory per block" in output:
        m = re.search(r"([a-z_]+/[0-9A-Za-z_]+)", output.split("bytes of shared memory per block")[0][-300:])
        return "too little shared memory", m.group(1) if m else None
    if re.search(r"no CUDA (device|driver)", output):
        return "no GPU", None
    if re.search(r"device memory|bytes free|too little memory", output):
        return "too little memory", None
    if "covered by the run without a profile" in output:
        return "covered by the run without a profile", None
    m = re.search(r"(\w+) is not installed", output)
    if m:
        return f"{m.group(1)} not installed", None
    last = [line for line in output.strip().splitlines() if line.strip()]
    return "other: " + (last[-1][:80] if last else "no output"), None


def summarize(path, label):
    root = ET.parse(path).getroot()
    cases = list(root.iter("testcase"))
    passed, failed, skipped = 0, [], {}
    for case in cases:
        out = case.findtext("system-out") or ""
        status = case.get("status")
        if status == "run" and case.find("failure") is None:
            passed += 1
        elif status == "notrun" or case.find("skipped") is not None:
            why, step = reason_of(out)
            entry = skipped.setdefault(why, {"count": 0, "steps": []})
            entry["count"] += 1
            if step and step not in entry["steps"]:
                entry["steps"].append(step)
        else:
            failed.append((case.get("name"), out))
    n_skipped = sum(e["count"] for e in skipped.values())
    head = f"{label}: " if label else ""
    print(f"{head}{len(cases)} tests: {passed} passed, {n_skipped} skipped, {len(failed)} failed")
    for why in sorted(skipped, key=lambda w: (w.startswith("other"), w)):
        e = skipped[why]
        steps = f" ({', '.join(sorted(e['steps']))})" if e["steps"] else ""
        print(f"  skipped, {why}: {e['count']} tests{steps}")
    for name, out in failed:
        tail = [line for line in out.strip().splitlines() if line.strip()][-6:]
        print(f"  FAILED {name}")
        for line in tail:
            print(f"      {line[:200]}")
    return 1 if failed else 0


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__)
        return 0 if len(argv) >= 2 else 2
    label = ""
    if "--label" in argv:
        i = argv.index("--label")
        label = argv[i + 1] if i + 1 < len(argv) else ""
    return summarize(argv[1], label)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
