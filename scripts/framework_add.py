#!/usr/bin/env python3
"""A framework's elementwise add beside the ladder: r = x + y at n floats with PyTorch (optional; the
suite itself needs no PyTorch), timed by the GPU's own records (torch.profiler's CUDA kernel time)
and by CUDA events, as effective bandwidth (12 bytes per element). vector_add's chapter compares its
step 07 and the copy ceiling with it: no step and no framework kernel should beat the ceiling.

  framework_add.py [--n 100000000] [--reps 20]
"""
import argparse
import statistics
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=float, default=1e8)
    ap.add_argument("--reps", type=int, default=20)
    a = ap.parse_args()
    try:
        import torch
        from torch.profiler import ProfilerActivity, profile
    except ImportError:
        print("PyTorch is not installed: nothing to compare with")
        return 0
    if not torch.cuda.is_available():
        print("skipped, no GPU")
        return 0
    n = int(a.n)
    x = torch.rand(n, device="cuda") * 2 - 1
    y = torch.rand(n, device="cuda") * 2 - 1
    r = torch.full((n,), float("nan"), device="cuda")
    for _ in range(3):
        torch.add(x, y, out=r)
    torch.cuda.synchronize()
    assert torch.equal(r, x + y)
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    events = []
    for _ in range(a.reps):
        start.record()
        torch.add(x, y, out=r)
        stop.record()
        stop.synchronize()
        events.append(start.elapsed_time(stop))
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(a.reps):
            torch.add(x, y, out=r)
        torch.cuda.synchronize()
    kernels = [e.device_time for e in prof.events() if e.device_type.name == "CUDA" and e.device_time > 0]
    kernel_ms = statistics.median(kernels) / 1e3
    call_ms = statistics.median(events)
    gbps = lambda ms: 12.0 * n / (ms * 1e-3) / 1e9
    print(f"torch.add(x, y, out=r), n={n}, torch {torch.__version__}: kernel {kernel_ms:.4f} ms = "
          f"{gbps(kernel_ms):.0f} GB/s (GPU records); call {call_ms:.4f} ms = {gbps(call_ms):.0f} GB/s (events)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
