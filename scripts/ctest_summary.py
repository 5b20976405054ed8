#!/usr/bin/env python3
"""One short summary of a ctest run, from the JUnit file ctest writes (ctest --output-junit FILE).

  ctest_summary.py JUNIT.xml [--label NAME]
  ctest_summary.py Testing/Temporary/LastTest.log[.tmp*] [--label NAME]   (a run that was stopped)

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


def cases_of_junit(path):
    """(name, status, output) of every test of a JUnit record: status "pass", "skip" or "fail"."""
    out = []
    for case in ET.parse(path).getroot().iter("testcase"):
        status = case.get("status")
        if status == "run" and case.find("failure") is None:
            kind = "pass"
        elif status == "notrun" or case.find("skipped") is not None:
            kind = "skip"
        else:
            kind = "fail"
        out.append((case.get("name"), kind, case.findtext("system-out") or ""))
    return out


def cases_of_log(path):
    """The same from ctest's Testing/Temporary/LastTest.log, which grows test by test: what a
    stopped run (a time limit) leaves. A skip is a skip regular expression that matched, or a
    test that says it was skipped."""
    text = open(path, errors="replace").read()
    out = []
    for block in re.split(r"\n-{58}\n\n", text):
        m = re.search(r"^\d+/\d+ Test: (.+)$", block, re.M)
        if not m:
            continue
        body = block.split("Output:\n" + "-" * 58 + "\n", 1)[-1].split("<end of output>")[0]
        if "Test Failed." in block:
            kind = "fail"
        elif "Skip regular expression found" in block or "Test Skipped" in block or re.search(r"skipped: .*exit 77", body):
            kind = "skip"
        elif "Test Passed." in block or "Test Pass Reason" in block:
            kind = "pass"
        else:
            continue  # the test the stop interrupted
        out.append((m.group(1).strip(), kind, body))
    return out


def summarize(path, label):
    # ctest writes LastTest.log.tmp while it runs and renames it when it ends
    cases = cases_of_log(path) if re.search(r"\.log(\.tmp\w*)?$", path) else cases_of_junit(path)
    passed, failed, skipped = 0, [], {}
    for name, kind, out in cases:
        if kind == "pass":
            passed += 1
        elif kind == "skip":
            why, step = reason_of(out)
            entry = skipped.setdefault(why, {"count": 0, "steps": []})
            entry["count"] += 1
            if step and step not in entry["steps"]:
                entry["steps"].append(step)
        else:
            failed.append((name, out))
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
