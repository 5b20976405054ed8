#!/usr/bin/env python3
"""The teaching diagrams of the chapters, drawn with matplotlib from the layouts themselves.

No measurements are read: every picture is computed from the index arithmetic of the step it
explains (a bank is (word address) % 32, a sector is (byte address) // 32, a lane's fragment comes
from the PTX formula), with the parameters of the step file named in its caption.

  python3 scripts/figures.py              draw every figure (PNG, into <folder>/img/fig_*.png)
  python3 scripts/figures.py --list       the figures with their one-line captions
  python3 scripts/figures.py --only NAME  draw one (NAME: fig_swizzle_128b, or sgemm/img/fig_swizzle_128b.png)

Without matplotlib it says so in one line and exits 0. Output is deterministic: fixed sizes, no
timestamps, no "Software" key in the PNG (reruns with the same matplotlib are byte-identical).
"""

import argparse
import math
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DPI = 110

# Okabe & Ito's colour-blind-safe palette (and a neutral grey).
OI = {
    "black": "#000000", "orange": "#E69F00", "sky": "#56B4E9", "green": "#009E73",
    "yellow": "#F0E442", "blue": "#0072B2", "red": "#D55E00", "purple": "#CC79A7",
    "grey": "#BBBBBB", "lightgrey": "#E8E8E8", "dark": "#444444",
}
CYCLE8 = [OI["orange"], OI["sky"], OI["green"], OI["yellow"], OI["blue"], OI["red"], OI["purple"], "#999999"]

plt = None  # matplotlib.pyplot, imported in main()
FIGURES = []  # (name, relative path, function)


def figure(relpath):
    """Registers a figure function under its file name."""
    def register(fn):
        name = os.path.splitext(os.path.basename(relpath))[0]
        FIGURES.append((name, relpath, fn))
        return fn
    return register


def caption(fn):
    return " ".join((fn.__doc__ or "").split())


# ---- Drawing helpers -------------------------------------------------------------------------------

def setup_matplotlib():
    global plt
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot
    matplotlib.rcParams.update({
        "svg.hashsalt": "ladder-figures",
        "font.size": 9,
        "axes.titlesize": 10,
        "figure.titlesize": 12,
        "font.family": "DejaVu Sans",
        "hatch.linewidth": 0.6,
    })
    plt = pyplot


def new_fig(w, h, title=None):
    fig = plt.figure(figsize=(w, h))
    if title:
        fig.suptitle(title, fontsize=12, fontweight="bold", y=0.985)
    return fig


def grid_ax(fig, rect, xlim, ylim, equal=True):
    """Axes for drawing in cell units, y growing downwards, no frame."""
    ax = fig.add_axes(rect)
    ax.set_xlim(*xlim)
    ax.set_ylim(ylim[1], ylim[0])
    if equal:
        ax.set_aspect("equal", adjustable="box")
    ax.axis("off")
    return ax


def box(ax, x, y, w, h, fc="none", ec=OI["dark"], lw=0.5, text=None, fs=8, tc="black", hatch=None,
        zorder=1, alpha=1.0, bold=False, ls="-"):
    from matplotlib.patches import Rectangle
    ax.add_patch(Rectangle((x, y), w, h, facecolor=fc, edgecolor=ec, linewidth=lw, hatch=hatch,
                           zorder=zorder, alpha=alpha, linestyle=ls))
    if text is not None:
        ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=fs, color=tc,
                zorder=zorder + 1, fontweight="bold" if bold else "normal")


def text(ax, x, y, s, fs=8, ha="center", va="center", **kw):
    return ax.text(x, y, s, fontsize=fs, ha=ha, va=va, **kw)


def arrow(ax, x0, y0, x1, y1, color=OI["dark"], lw=1.0, style="-|>", ms=8, zorder=3, ls="-", alpha=1.0):
    from matplotlib.patches import FancyArrowPatch
    ax.add_patch(FancyArrowPatch((x0, y0), (x1, y1), arrowstyle=style, mutation_scale=ms, color=color,
                                 linewidth=lw, zorder=zorder, linestyle=ls, shrinkA=0, shrinkB=0,
                                 alpha=alpha))


def brace_h(ax, x0, x1, y, label, fs=8, color=OI["dark"], below=True):
    """A bracket under (or over) the span x0..x1 at height y, with a label."""
    d = 0.35 if below else -0.35
    ax.plot([x0, x0, x1, x1], [y, y + d, y + d, y], color=color, lw=0.8)
    text(ax, (x0 + x1) / 2, y + 1.3 * d, label, fs=fs, color=color, va="top" if below else "bottom")


def brace_v(ax, y0, y1, x, label, fs=8, color=OI["dark"], right=True, rotation=0):
    d = 0.35 if right else -0.35
    ax.plot([x, x + d, x + d, x], [y0, y0, y1, y1], color=color, lw=0.8)
    text(ax, x + 1.2 * d, (y0 + y1) / 2, label, fs=fs, color=color, ha="left" if right else "right",
         rotation=rotation)


def note(fig, x, y, s, fs=8.5, ha="left", va="top", wrap=True, width=None, **kw):
    """Figure text at (x, y) in figure fractions. wrap: a single newline is a soft break (joined), a blank
    line or a newline before an indented line is kept; lines are filled to `width` (fraction of the
    figure, default: up to 2% from the right edge)."""
    if wrap:
        import textwrap
        width = width if width is not None else 0.98 - x
        chars = int(width * fig.get_figwidth() * 72 / (fs * 0.56))
        paragraphs = []  # [indent, text] or None for a blank line
        for line in s.split("\n"):
            if line == "":
                paragraphs.append(None)
            elif line.startswith(" ") or not paragraphs or paragraphs[-1] is None:
                lead = len(line) - len(line.lstrip(" "))
                paragraphs.append([lead, line.strip()])
            else:
                paragraphs[-1][1] += " " + line.strip()
        lines = []
        for para in paragraphs:
            if para is None:
                lines.append("")
                continue
            lead, body = para
            lines.extend(textwrap.wrap(body, chars, initial_indent=" " * lead, subsequent_indent=" " * (lead + 2 if lead else 0),
                                       break_on_hyphens=False) or [""])
        s = "\n".join(lines)
    fig.text(x, y, s, fontsize=fs, ha=ha, va=va, **kw)


def legend_patches(ax, items, loc="upper right", fs=8, ncol=1, **kw):
    from matplotlib.patches import Patch
    handles = [Patch(facecolor=fc, edgecolor=OI["dark"], hatch=h, label=l) for l, fc, h in items]
    return ax.legend(handles=handles, loc=loc, fontsize=fs, ncol=ncol, frameon=False, **kw)


def _FAP(*a, **k):
    from matplotlib.patches import FancyArrowPatch
    return FancyArrowPatch(*a, **k)


def save(fig, relpath):
    path = os.path.join(ROOT, relpath)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    fig.savefig(path, dpi=DPI, metadata={"Software": None})
    plt.close(fig)
    return path


# ====================================================================================================
# vector_add
# ====================================================================================================

@figure("vector_add/img/fig_coalescing.png")
def fig_coalescing():
    """One warp-wide load of step 02 (thread t reads x[t + 256k]) against step 03 (thread t reads its
    own chunk, x[t*chunk + k], chunk = 390,625 floats at the default n = 10^8): the 32 threads of
    warp 0 touch 4 sectors of one 128-byte line in step 02 and 32 sectors in 32 different lines in
    step 03, of which 4 bytes each are used. Look at the sector count and the share of used bytes."""
    threads, n, k = 256, 100_000_000, 0  # kThreads of steps 02/03, the default --n, iteration k
    chunk = (n + threads - 1) // threads
    strided = [4 * (t + threads * k) for t in range(32)]   # byte addresses of warp 0's load
    chunked = [4 * (t * chunk + k) for t in range(32)]
    s_sectors = sorted({a // 32 for a in strided})
    c_sectors = sorted({a // 32 for a in chunked})
    assert len(s_sectors) == 4 and len(c_sectors) == 32

    fig = new_fig(9, 5.0, "Coalescing: the sectors one warp-wide load touches (warp 0, iteration k = 0)")

    # Step 02: 32 consecutive floats under 32 threads, 4 sectors of 8 floats.
    ax = grid_ax(fig, [0.01, 0.58, 0.72, 0.33], (-1.5, 33.5), (-0.6, 6.2))
    text(ax, -1.3, -0.35, "step 02 (block-strided):  thread t reads x[t + 256·k]   →   32 consecutive floats",
         fs=9.5, ha="left", fontweight="bold")
    for t in range(32):
        box(ax, t, 0.4, 1, 0.9, fc=OI["sky"], text=str(t), fs=6.5)
    text(ax, -0.6, 0.85, "T", fs=8, ha="right")
    for t in range(32):
        arrow(ax, t + 0.5, 1.3, t + 0.5, 3.0, lw=0.6, ms=5)
    for i in range(32):
        box(ax, i, 3.0, 1, 0.9, fc=OI["orange"], lw=0.4)
    for s_i, s in enumerate(s_sectors):
        box(ax, 8 * s_i, 3.0, 8, 0.9, ec="black", lw=1.6)
        text(ax, 8 * s_i + 4, 4.35, f"sector {s} (32 B)", fs=7.5)
    brace_h(ax, 0, 32, 4.8, "one 128-byte line  x[0..31]: 1 request → 4 sectors, 128 B fetched, 128 B used",
            fs=8)
    text(ax, -0.6, 3.45, "x", fs=8, ha="right")

    # Step 03: each thread alone in its sector.
    ax2 = grid_ax(fig, [0.01, 0.03, 0.72, 0.52], (-1.5, 33.5), (-0.6, 8.2))
    text(ax2, -1.3, -0.35, f"step 03 (block-chunked):  thread t reads x[t·{chunk:,} + k]  →  floats "
         f"{4 * chunk:,} B apart", fs=9.5, ha="left", fontweight="bold")
    for t in range(32):
        box(ax2, t, 0.4, 1, 0.9, fc=OI["sky"], text=str(t), fs=6.5)
        arrow(ax2, t + 0.5, 1.3, t + 0.5, 2.2, lw=0.6, ms=5)
        # the thread's 32-byte sector, drawn as 8 floats stacked; the one it uses is filled
        a = chunked[t]
        used = (a % 32) // 4
        for e in range(8):
            box(ax2, t + 0.1, 2.2 + 0.5 * e, 0.8, 0.5, fc=OI["orange"] if e == used else "white", lw=0.3)
        box(ax2, t + 0.1, 2.2, 0.8, 4.0, ec="black", lw=1.0)
    text(ax2, -0.6, 4.2, "x", fs=8, ha="right")
    brace_h(ax2, 0, 32, 6.45, "column = thread t's own 32-byte sector (8 floats; orange: the float it reads), 32 different lines:\n"
            "1 request → 32 sectors, 1,024 B fetched, 128 B used", fs=8)

    # Summary bars.
    axb = fig.add_axes([0.82, 0.12, 0.16, 0.70])
    fetched = [32 * len(s_sectors), 32 * len(c_sectors)]
    axb.bar([0, 1], fetched, color=[OI["grey"]] * 2, edgecolor=OI["dark"], label="fetched")
    axb.bar([0, 1], [128, 128], color=OI["orange"], edgecolor=OI["dark"], label="used")
    for i, (f, s) in enumerate(zip(fetched, [len(s_sectors), len(c_sectors)])):
        axb.text(i, f + 25, f"{s} sectors\n{100 * 128 / f:g}% used", ha="center", fontsize=8)
    axb.set_xticks([0, 1])
    axb.set_xticklabels(["step 02", "step 03"])
    axb.set_ylabel("bytes per warp load request")
    axb.set_ylim(0, 1250)
    axb.legend(fontsize=8, frameon=False, loc="upper left")
    axb.spines[["top", "right"]].set_visible(False)
    axb.set_title("per request", fontsize=9)
    return fig


@figure("vector_add/img/fig_grid_stride.png")
def fig_grid_stride():
    """The grid-stride loop of step 04, drawn small: 4 blocks of 8 threads over 80 elements. Each
    colour is a block and each number a threadIdx.x; one sweep of the whole grid covers 32 consecutive
    elements, so every warp still reads consecutive floats, and thread (block 1, thread 3) takes
    elements 11, 43, 75. The real launch: 256 threads, SMs x 8 blocks (1,056 on an H100)."""
    blocks, threads, n = 4, 8, 80
    stride = blocks * threads
    sweeps = math.ceil(n / stride)
    fig = new_fig(9, 3.3, "Grid-stride loop (step 04): i = blockIdx.x·blockDim.x + threadIdx.x + j·gridDim.x·blockDim.x")
    ax = grid_ax(fig, [0.02, 0.30, 0.96, 0.58], (-6.5, stride + 0.5), (-1.2, sweeps * 1.6 + 0.2))
    pick = (1, 3)
    for j in range(sweeps):
        y = j * 1.6
        text(ax, -0.4, y + 0.45, f"sweep j = {j}\nx[{j * stride}..{min(n, (j + 1) * stride) - 1}]", fs=8, ha="right")
        for c in range(stride):
            i = j * stride + c
            b, t = divmod(c, threads)
            if i >= n:
                box(ax, c, y, 1, 0.9, fc="white", ec=OI["grey"], lw=0.4, text="", fs=7)
                continue
            chosen = (b, t) == pick
            box(ax, c, y, 1, 0.9, fc=CYCLE8[[1, 0, 2, 6][b]], lw=1.8 if chosen else 0.4,
                ec="black" if chosen else OI["dark"], text=str(t), fs=7.5, bold=chosen, zorder=3 if chosen else 1)
            text(ax, c + 0.5, y + 1.15, str(i), fs=5.5, color="#555555")
        if j == sweeps - 1:
            text(ax, (n - j * stride) + (stride - (n - j * stride)) / 2, y + 0.45, "i ≥ n: loop ends", fs=8,
                 color="#555555", bbox=dict(facecolor="white", edgecolor="none", pad=1))
    for b in range(blocks):
        brace_h(ax, b * threads, (b + 1) * threads, -0.25, f"block {b}", below=False, fs=8)
    note(fig, 0.03, 0.25,
         f"Toy sizes: gridDim.x = {blocks}, blockDim.x = {threads}, n = {n}; stride = gridDim.x·blockDim.x = {stride}. "
         "Number in a cell: threadIdx.x; small number: element i.\n"
         "Outlined: thread 3 of block 1 takes i = 11, 43, 75 — one element per sweep, whatever n is.\n"
         "Step 04's real launch (04_grid_stride.cu): 256 threads per block, blocks = SMs × (2,048 / 256) = 132 × 8 = 1,056 "
         "on an H100,\nstride = 270,336 floats; at n = 10^8 each thread runs ⌈10^8 / 270,336⌉ = 370 sweeps, and each "
         "warp reads 32 consecutive floats per sweep.", fs=8.3)
    return fig


@figure("vector_add/img/fig_bytes_in_flight.png")
def fig_bytes_in_flight():
    """One thread of step 04 against one of step 07 over the same stretch of time, one wait for memory
    drawn as one long bar. Step 04's source loads one float of x and one of y per trip, but the
    compiler (CUDA 13.0, sm_90) unrolls the loop four times and issues all eight 4-byte loads before
    the first add (cuobjdump -sass: eight LDG, then the FADDs and STGs): 32 bytes in flight per wait.
    Step 07's thread issues two 16-byte loads of x and two of y before it waits, then adds and stores
    both: 64 bytes in flight per wait. By Little's law a kernel's bandwidth is its bytes in flight over
    the latency: look at the bytes each thread has on the way during one wait. The measured waits
    (the note) are not drawn to scale."""
    lat, issue, work = 10.0, 0.6, 1.2      # drawing units: a wait, one issue slot, add + store
    fig = new_fig(9.6, 3.9, "vector_add: bytes in flight per thread, step 04 against step 07")
    ax = grid_ax(fig, [0.03, 0.30, 0.94, 0.58], (-7.5, 27.5), (-1.0, 6.2), equal=False)

    def load(x, y, colour):
        box(ax, x, y, issue, 0.8, fc=colour, lw=0.4)

    # step 04 as compiled: eight loads (four trips of x and y), one wait, four adds and stores, again
    text(ax, -7.3, 0.9, "step 04\n(float, loop\nunrolled 4×)", fs=8.5, ha="left", fontweight="bold")
    x = 0.0
    for batch in range(2):
        for u in range(8):
            load(x + u * issue, 0.5, OI["sky"])
        brace_h(ax, x, x + 8 * issue, 0.45, "4 × (ld x, ld y): 4 B each", fs=6.5, below=False)
        if batch == 0:
            box(ax, x + 8 * issue, 0.5, lat, 0.8, fc=OI["lightgrey"], lw=0.4, text="waiting: 32 B in flight", fs=7)
            box(ax, x + 8 * issue + lat, 0.5, 4 * issue, 0.8, fc=OI["orange"], lw=0.4, text="4 × (+ st)", fs=6.5)
            x += 8 * issue + lat + 4 * issue
        else:
            box(ax, x + 8 * issue, 0.5, 27 - (x + 8 * issue), 0.8, fc=OI["lightgrey"], lw=0.4, text="32 B …", fs=7)
    # step 07: four loads, one wait, two adds and stores
    text(ax, -7.3, 3.9, "step 07\n(float4, loads\nbefore stores)", fs=8.5, ha="left", fontweight="bold")
    for u in range(4):
        load(u * issue, 3.5, OI["blue"])
    brace_h(ax, 0, 4 * issue, 3.45, "x[t], y[t], x[t+512], y[t+512]: 16 B each", fs=6.5, below=False)
    box(ax, 4 * issue, 3.5, lat, 0.8, fc=OI["lightgrey"], lw=0.4, text="waiting: 64 B in flight", fs=7)
    box(ax, 4 * issue + lat, 3.5, 2 * work, 0.8, fc=OI["orange"], lw=0.4, text="+ st, + st", fs=6.5)
    text(ax, 4 * issue + lat + 2 * work + 0.4, 3.9, "the block's chunk is done;\n"
         "a new block takes its place", fs=7, ha="left", color=OI["dark"])
    arrow(ax, 4 * issue, 5.6, 4 * issue + lat, 5.6, style="<|-|>", lw=0.8, ms=6)
    text(ax, 4 * issue + lat / 2, 5.95, "one wait for memory (not to scale)", fs=7, color=OI["dark"])

    per04, per07 = 2 * 4 * 4, 2 * 2 * 16      # bytes each thread has in flight (step 04: 4 trips unrolled)
    threads = 2048                             # the most threads an H100 SM holds
    note(fig, 0.03, 0.22,
         f"In flight per thread: step 04 {per04} B (its compiler issues four floats of x and four of y before "
         f"the first add), step 07 {per07} B (two float4 of each); with {threads:,} threads on an SM, "
         f"{per04 * threads // 1024} KB against {per07 * threads // 1024} KB. Measured at n = 10^8 (H100, CUDA 13.0, "
         "2026-11-27), a warp of step 04 waits about 3.5 µs for its loads and one of step 07 about 4.9 µs, "
         "against 0.39 µs with the DRAM nearly idle: most of each wait is queueing. Step 07's loads are also a "
         "quarter as many instructions: one 16-byte load where step 04 issues four 4-byte ones.", fs=8, width=0.94)
    return fig


@figure("vector_add/img/fig_streams_pipeline.png")
def fig_streams_pipeline():
    """An idealised timeline of step 06 against step 05: 16 chunks issued round-robin on 4 streams, each
    chunk's H2D copies (x, y), kernel and D2H copy in its own stream. H2D copies of all streams queue on
    one copy engine and D2H on the other, so the pipelined run ends soon after the last H2D copy: the
    floor is the H2D bytes over the H2D rate, not zero. A schematic, not a measurement."""
    streams, per_stream = 4, 4            # kStreams, kChunksPerStream of 06_streams.cu
    chunks = streams * per_stream
    h2d, d2h, kern = 1.0, 1.0, 0.25       # time units per chunk and array; kernel drawn wider than measured
    # Serial: step 05 (whole-array copies on one stream).
    serial = [("H2D x", 0, chunks * h2d), ("H2D y", chunks * h2d, chunks * h2d),
              ("kernel", 2 * chunks * h2d, chunks * kern), ("D2H r", 2 * chunks * h2d + chunks * kern, chunks * d2h)]
    serial_end = serial[-1][1] + serial[-1][2]
    # Pipelined: list scheduling in issue order; an op starts when its engine and its stream are free.
    engine_free = {"h2d": 0.0, "sm": 0.0, "d2h": 0.0}
    stream_free = [0.0] * streams
    ops = []
    for c in range(chunks):
        s = c % streams
        for kind, eng, dur in (("H2D x", "h2d", h2d), ("H2D y", "h2d", h2d), ("kernel", "sm", kern),
                               ("D2H r", "d2h", d2h)):
            start = max(engine_free[eng], stream_free[s])
            engine_free[eng] = stream_free[s] = start + dur
            ops.append((s, c, kind, start, dur))
    pipe_end = max(st + d for _, _, _, st, d in ops)
    colors = {"H2D x": OI["sky"], "H2D y": OI["blue"], "kernel": OI["orange"], "D2H r": OI["green"]}

    fig = new_fig(9, 4.8, "Streams (step 06): copies and kernels of 16 chunks overlapped on 4 streams")
    ax = fig.add_axes([0.13, 0.30, 0.84, 0.58])
    rows = ["step 05\n(one stream)"] + [f"step 06\nstream {s}" for s in range(streams)]
    for name, st, d in serial:
        ax.barh(0, d, left=st, height=0.62, color=colors[name], edgecolor=OI["dark"], lw=0.5)
        ax.text(st + d / 2, 0, name, ha="center", va="center", fontsize=8,
                color="white" if name == "H2D y" else "black")
    for s, c, kind, st, d in ops:
        y = 1.2 + s
        ax.barh(y, d, left=st, height=0.62, color=colors[kind], edgecolor=OI["dark"], lw=0.4)
        if kind != "kernel":
            ax.text(st + d / 2, y, str(c), ha="center", va="center", fontsize=6.5,
                    color="white" if kind == "H2D y" else "black")
    ax.set_yticks([0] + [1.2 + s for s in range(streams)])
    ax.set_yticklabels(rows, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, serial_end + 1)
    ax.set_xlabel("time (units: one chunk's copy of one array)")
    ax.axvline(pipe_end, color=OI["red"], lw=1.2, ls="--")
    ax.axvline(serial_end, color=OI["dark"], lw=1.2, ls="--")
    ax.text(pipe_end + 0.4, 5.05, f"step 06 ends: {pipe_end:.1f}", color=OI["red"], fontsize=8, va="center")
    ax.text(serial_end - 0.4, 5.05, f"step 05 ends: {serial_end:.0f}", color=OI["dark"], fontsize=8,
            va="center", ha="right")
    ax.set_ylim(5.45, -0.6)
    ax.spines[["top", "right"]].set_visible(False)
    legend_patches(ax, [(k, v, None) for k, v in colors.items()], loc="upper center", ncol=4,
                   bbox_to_anchor=(0.5, 1.1), fs=8)
    note(fig, 0.03, 0.14,
         f"06_streams.cu: kStreams = {streams}, kChunksPerStream = {per_stream} → {chunks} chunks, chunk c on stream "
         "c % 4 (number in a box: c). Each stream runs its work in order; the H2D copies of all streams share one\n"
         "copy engine, the D2H copies use the other, so the run is bounded by 2 × 16 H2D units + the last kernel "
         "and D2H. Idealised: each direction at full rate (on the H100 both directions at once move ~75 GB/s),\n"
         "kernel widths not to scale (measured: ~0.4 ms of a ~16 ms trip). The GPU's own trace of a run is "
         "drawn below it in the chapter.", fs=8)
    return fig


# ====================================================================================================
# transpose
# ====================================================================================================

@figure("transpose/img/fig_naive_access.png")
def fig_naive_access():
    """The naive transpose with 32 x 8 blocks (step 02): warp 0 is one block row, so its read of `in` is
    32 consecutive floats (one line, 4 sectors) while its write to `out` is one column, 32 floats in 32
    rows, each in its own 32-byte sector (32 sectors per store request for 128 useful bytes). Look at the
    shaded sectors on each side."""
    bx, by = 32, 8  # 02_naive_32wide.cu: dim3 block(32, 8)
    rows = cols = 8192  # default --rows/--cols
    fig = new_fig(9, 6.3, "Naive transpose (step 02, 32 × 8 threads): coalesced read, strided write")
    # in: 8 block rows x 32 columns; warp 0 = threadIdx.y = 0.
    ax = grid_ax(fig, [0.02, 0.48, 0.55, 0.42], (-3, 33), (-2.5, 13))
    text(ax, 16, -1.8, "in[r0 + y][c0 + x]  (read)", fs=10, fontweight="bold")
    read_sectors = set()
    for y in range(by):
        for x in range(bx):
            warp0 = y == 0
            box(ax, x, y, 1, 1, fc=OI["sky"] if warp0 else "white", lw=0.3)
            if warp0:
                read_sectors.add((y * cols + x) * 4 // 32)
    for s in range(4):
        box(ax, 8 * s, 0, 8, 1, ec="black", lw=1.6)
    text(ax, -0.4, 0.5, "warp 0", fs=8, ha="right")
    for y in range(1, by):
        text(ax, -0.4, y + 0.5, f"warp {y}", fs=7, ha="right", color="#666666")
    brace_h(ax, 0, 32, 8.3, f"warp 0 reads x = 0..31 of row r0: {len(read_sectors)} sectors (one 128-B line)")
    text(ax, 16, 10.6, "threadIdx.x →", fs=8)
    text(ax, 16, 11.6, f"rows of `in` are {cols:,} floats apart", fs=8, color="#555555")

    # out: 32 rows x 8 columns; warp 0 writes out[c0 + x][r0].
    ax2 = grid_ax(fig, [0.58, 0.04, 0.24, 0.86], (-3.5, 9), (-2.5, 35))
    text(ax2, 4, -1.8, "out[c0 + x][r0 + y]  (write)", fs=10, fontweight="bold")
    write_sectors = set()
    for x in range(bx):
        for y in range(by):
            written = y == 0
            box(ax2, y, x, 1, 1, fc=OI["orange"] if written else "white", lw=0.3)
        write_sectors.add(((x * rows) + 0) * 4 // 32)
        box(ax2, 0, x, 8, 1, ec="black", lw=1.2)  # the 32-byte sector the write falls in
        text(ax2, -0.3, x + 0.5, f"x={x}", fs=6, ha="right", color="#555555")
    assert len(write_sectors) == 32
    brace_v(ax2, 0, 32, 8.2, "", fs=8)
    note(fig, 0.835, 0.55, f"warp 0 writes\ncolumn r0:\n{len(write_sectors)} rows,\n{len(write_sectors)} sectors\n"
         "(each 32-B\nsector carries\n4 useful bytes)", fs=8.5, wrap=False, va="center")
    text(ax2, 4, 33.3, "columns r0 .. r0+7 = the 8 block rows", fs=7.5, color="#555555")

    note(fig, 0.03, 0.44,
         "02_naive_32wide.cu, kernel of 01_naive_16x16.cu:\n"
         "    out[c * rows + r] = in[r * cols + c]\n"
         "    r = r0 + threadIdx.y,  c = c0 + threadIdx.x\n\n"
         "A warp is 32 consecutive threads: here exactly one block row\n"
         "(threadIdx.y fixed, threadIdx.x = 0..31).\n\n"
         f"Read: 4 sectors per request (ideal).\n"
         f"Write: 32 sectors per request, {cols:,} × 4 B apart.\n\n"
         "Step 01's 16 × 16 blocks: a warp is two half rows, so its\n"
         "write pairs up 2 floats per sector: ~16 sectors per request,\n"
         "but its read is two half lines.", fs=8.5, width=0.54)
    return fig


@figure("transpose/img/fig_shared_tile.png")
def fig_shared_tile():
    """Step 03's 32 x 32 tile through shared memory, coloured by the row of `in` each element came from.
    Step 1: warp y reads row y of the tile from `in` (coalesced) and stores it as row y of tile. Step 2:
    warp y reads column y of tile and writes it as row y of `out` (coalesced). The transposition happens
    in shared memory, where a strided access costs no DRAM sectors."""
    T = 32  # kTile
    wy = 5  # the warp drawn
    cmap = plt.get_cmap("viridis")
    fig = new_fig(9, 4.6, "Tiled transpose (step 03): both global sides coalesced, the turn in shared memory")
    panels = [("in (global)\nin[r0 + y][c0 + x]", lambda r, c: r),
              ("tile (shared)\n__shared__ float tile[32][32]", lambda r, c: r),
              ("out (global)\nout[c0 + y][r0 + x]", lambda r, c: c)]
    axes = []
    for p, (title, src_row) in enumerate(panels):
        ax = grid_ax(fig, [0.02 + p * 0.33, 0.18, 0.29, 0.66], (-1, T + 1), (-1, T + 1))
        ax.set_title(title, fontsize=9)
        for r in range(T):
            for c in range(T):
                box(ax, c, r, 1, 1, fc=cmap(src_row(r, c) / (T - 1)), ec="white", lw=0.2, alpha=0.55)
        for r in (0, wy, T - 1):
            text(ax, -0.3, r + 0.5, f"{r}", fs=6.5, ha="right", color="#555555")
        for c in (0, wy, T - 1):
            text(ax, c + 0.5, T + 0.6, f"{c}", fs=6.5, color="#555555")
        axes.append(ax)
    a_in, a_tile, a_out = axes
    # Step 1: row wy of in -> row wy of tile (orange). Step 2: column wy of tile -> row wy of out (blue).
    box(a_in, 0, wy, T, 1, ec=OI["red"], lw=2.2, zorder=5)
    box(a_tile, 0, wy, T, 1, ec=OI["red"], lw=2.2, zorder=5)
    box(a_tile, wy, 0, 1, T, ec=OI["blue"], lw=2.2, zorder=5)
    box(a_out, 0, wy, T, 1, ec=OI["blue"], lw=2.2, zorder=5)
    fig.patches.append(_FAP(
        (0.31, 0.56), (0.36, 0.56), transform=fig.transFigure, arrowstyle="-|>", mutation_scale=14,
        color=OI["red"], lw=1.8))
    fig.patches.append(_FAP(
        (0.64, 0.44), (0.69, 0.44), transform=fig.transFigure, arrowstyle="-|>", mutation_scale=14,
        color=OI["blue"], lw=1.8))
    fig.text(0.335, 0.60, "step 1", color=OI["red"], ha="center", fontsize=8.5, fontweight="bold")
    fig.text(0.665, 0.48, "step 2", color=OI["blue"], ha="center", fontsize=8.5, fontweight="bold")
    note(fig, 0.03, 0.15,
         f"Block 32 × 32 threads (03_shared_tiled.cu); outlined: warp y = {wy} (threadIdx.y = {wy}, threadIdx.x = x = 0..31). "
         "Colour = the row of `in` the element came from.\n"
         f"Step 1 (red): tile[y][x] = in[r0 + y][c0 + x] — a row of `in` (one 128-B line, 4 sectors) into row {wy} of tile; "
         "then __syncthreads().\n"
         f"Step 2 (blue): out[c0 + y][r0 + x] = tile[x][y] — column {wy} of tile (32 words 32 apart: one bank, next figure) "
         "into a row of `out` (4 sectors).", fs=8.2)
    return fig


@figure("transpose/img/fig_bank_conflicts.png")
def fig_bank_conflicts():
    """Bank of every word of the tile, bank = (row * pitch + col) % 32, for step 03's tile[32][32] and
    step 04's tile[32][33]. The outlined column is what one warp reads in step 2 (tile[x][y], x = 0..31):
    with pitch 32 all 32 words sit in one bank (a 32-way conflict, 32 wavefronts); with pitch 33 the
    banks run diagonally and the column spans all 32 banks (one wavefront)."""
    T, y = 32, 5  # kTile; the column read by warp y = 5
    cmap = plt.get_cmap("viridis")
    fig = new_fig(9, 7.4, "Shared-memory banks of the transpose tile: bank = (row·pitch + col) % 32")
    for p, pitch in enumerate((32, 33)):
        ax = grid_ax(fig, [0.03 + p * 0.49, 0.27, 0.45, 0.62], (-2, 34.5), (-1, 33))
        for r in range(T):
            for c in range(pitch):
                if c >= T:
                    box(ax, c, r, 1, 1, fc=OI["lightgrey"], ec="white", lw=0.2, hatch="////")
                    continue
                bank = (r * pitch + c) % 32
                box(ax, c, r, 1, 1, fc=cmap(bank / 31), ec="white", lw=0.2, alpha=0.85)
        hits = [0] * 32
        for x in range(T):
            bank = (x * pitch + y) % 32
            hits[bank] += 1
            text(ax, y + 0.5, x + 0.5, str(bank), fs=5.5, color="white" if bank < 16 else "black", zorder=6)
        box(ax, y, 0, 1, T, ec=OI["red"], lw=2.2, zorder=5)
        text(ax, y + 0.5, -0.6, f"tile[x][{y}]", fs=7.5, color=OI["red"])
        text(ax, -0.5, 16, "row x →", fs=7.5, rotation=90, ha="right")
        worst = max(hits)
        title = (f"tile[32][{pitch}] (step 0{3 + p}): row pitch {pitch} words\n"
                 f"warp reads column {y}: " + ("all in bank %d → %d-way conflict" % (hits.index(worst), worst)
                                               if worst > 1 else "32 different banks → no conflict"))
        ax.set_title(title, fontsize=9)
        # Accesses per bank.
        axh = fig.add_axes([0.10 + p * 0.49, 0.10, 0.37, 0.12])
        axh.bar(range(32), hits, color=[cmap(b / 31) for b in range(32)], edgecolor=OI["dark"], lw=0.4)
        axh.set_xlim(-0.7, 31.7)
        axh.set_ylim(0, 34)
        axh.set_xticks([0, 8, 16, 24, 31])
        axh.set_xlabel("bank", fontsize=8)
        axh.set_ylabel("words of the\nwarp's load", fontsize=8)
        axh.tick_params(labelsize=7.5)
        axh.spines[["top", "right"]].set_visible(False)
        axh.text(31, 30, f"{worst} wavefront{'s' if worst > 1 else ''}", ha="right", fontsize=8.5,
                 color=OI["red"] if worst > 1 else OI["green"], fontweight="bold")
    note(fig, 0.03, 0.045, "Colour: bank (0 dark → 31 light); number in the outlined column: its bank. Hatched: the "
         "unused pad word of each row (kPad = 1 in 04_padded.cu, 128 B per block).", fs=8)
    return fig


@figure("transpose/img/fig_multi_element.png")
def fig_multi_element():
    """Step 05: a 32 x 8 block moves a 32 x 32 tile, each thread 4 elements 8 rows apart. Colour = the
    warp (threadIdx.y) that moves the element. Step 1 stores rows y, y+8, y+16, y+24 of the tile; step 2
    reads columns y, y+8, y+16, y+24 and writes each as a row of `out`. Black and numbered: the 4
    elements of thread (x = 5, y = 2), in loop order i = 0..3."""
    T, R = 32, 8  # kTile, kBlockRows
    per = T // R
    tx, ty = 5, 2
    fig = new_fig(9, 6.0, "32 × 8 threads per 32 × 32 tile (step 05): 4 elements per thread, 8 rows apart")
    titles = ["step 1: tile[y + 8i][x] = in[r0 + y + 8i][c0 + x]\nwarp y stores tile rows y, y + 8, y + 16, y + 24",
              "step 2: out[c0 + y + 8i][r0 + x] = tile[x][y + 8i]\nwarp y reads tile columns y, y + 8, …, each into a row of out"]
    for p in range(2):
        ax = grid_ax(fig, [0.03 + p * 0.49, 0.20, 0.45, 0.68], (-4.5, T + 0.5), (-0.5, T + 2.2))
        ax.set_title(titles[p], fontsize=9)
        for r in range(T):
            for c in range(T):
                line = c if p == 1 else r  # the tile row (step 1) or column (step 2) the element moves in
                box(ax, c, r, 1, 1, fc=CYCLE8[line % R], ec="white", lw=0.2)
        for i in range(per):
            line = ty + R * i
            rr, cc = (tx, line) if p == 1 else (line, tx)  # tile[x][y + 8i] / tile[y + 8i][x]
            box(ax, cc, rr, 1, 1, fc="black", ec="black", lw=1.0, zorder=5, text=str(i), fs=7, tc="white", bold=True)
        if p == 0:
            for r in range(T):
                if r % R in (0, ty):
                    text(ax, -0.3, r + 0.5, f"y={r % R}, i={r // R}", fs=6.5, ha="right")
            text(ax, tx + 0.5, T + 0.8, f"x = {tx}", fs=7.5)
        else:
            for c in range(T):
                if c % R in (0, ty):
                    text(ax, c + 0.5, T + 1.0, f"y={c % R}\ni={c // R}", fs=5.6)
            text(ax, -0.3, tx + 0.5, f"x = {tx}", fs=7.5, ha="right")
    fig.patches.append(_FAP((0.485, 0.55), (0.515, 0.55), transform=fig.transFigure, arrowstyle="-|>",
                            mutation_scale=14, color=OI["dark"], lw=1.5))
    from matplotlib.patches import Patch
    fig.legend(handles=[Patch(facecolor=CYCLE8[w], label=f"warp {w}") for w in range(R)], loc="lower center",
               ncol=8, fontsize=8, frameon=False, bbox_to_anchor=(0.5, 0.115))
    note(fig, 0.03, 0.1,
         "05_multi_element.cu: dim3 block(32, 8), kPerThread = 4, __shared__ float tile[32][33] (the pad column is not "
         "drawn). A warp = one threadIdx.y; its 4 loads (i = 0..3) are independent, so all 4 are in flight before the "
         "first store to shared memory. Each access is still one 128-byte row piece per warp instruction, and a row of "
         "`out` is a column of the tile: warp y writes out rows y, y + 8, y + 16, y + 24.", fs=8)
    return fig



def _vector_tile_access(side, layout, warp=1, p=0, j=0):
    """Step 06's float4 path (06_vector_tiles.cu: 64 x 64 tile, tile[64][65], 32 x 8 threads, kVec = 4):
    the (row, column) of tile[][] that each lane of `warp` touches in pass p, vector element j, on the
    shared store (side "store", step 2) or the shared load (side "load", step 3). layout "plain":
    element (r, c) at tile[r][c]; "slot": at tile[slot(r)][slot(c)], slot(i) = (i % 4) * 16 + i / 4."""
    vec, side_len = 4, 64
    groups = side_len // vec                 # kGroups = 16
    rows_per_pass = 32 * 8 // groups         # kRowsPerPass = 16

    def slot(i):
        return (i % vec) * groups + i // vec

    words = []
    for lane in range(32):
        l = 32 * warp + lane
        g, pr = l % groups, l // groups
        if side == "store":   # tile[slot(pr + p*16)][j*16 + g] = v[p][j]: element (pr + 16p, 4g + j)
            r, c = pr + p * rows_per_pass, g * vec + j
        else:                 # w[j] = tile[j*16 + g][slot(pr + p*16)]: element (4g + j, pr + 16p)
            r, c = g * vec + j, pr + p * rows_per_pass
        words.append((slot(r), slot(c)) if layout == "slot" else (r, c))
    return words


@figure("transpose/img/fig_vector_tile_banks.png")
def fig_vector_tile_banks():
    """Step 06's shared tile, tile[64][65], and the 32 words one warp touches in one shared access,
    coloured by bank, bank = (row * 65 + column) % 32. Warp 1 (threads 32-63), first pass, element
    j = 0 of each float4. Top: stored plainly, element (r, c) at tile[r][c]: the store covers two tile
    rows at 16 columns 4 apart, the load two tile columns at 16 rows 4 apart, and either way the 32
    words fall in 16 banks, two in each (2 wavefronts). Bottom: step 06's layout, tile[slot(r)][slot(c)]
    with slot(i) = (i % 4) * 16 + i / 4: the store covers two slot rows 16 apart at 16 consecutive
    slot columns, the load two slot columns 16 apart at 16 consecutive slot rows: 32 banks, one
    wavefront. The bars count the warp's words per bank."""
    import numpy as np
    side, pitch, warp = 64, 65, 1
    cmap = plt.get_cmap("viridis")
    fig = new_fig(10.0, 11.0, "transpose 06: the banks of one warp's shared access (bank = (row·65 + col) % 32)")
    panels = [("plain", "store", "tile[r][c], step 2 (shared store)"),
              ("plain", "load", "tile[r][c], step 3 (shared load)"),
              ("slot", "store", "tile[slot(r)][slot(c)], step 2 (shared store)"),
              ("slot", "load", "tile[slot(r)][slot(c)], step 3 (shared load)")]
    worst_by_layout = {}
    for k, (layout, access, title) in enumerate(panels):
        col, row = k % 2, k // 2
        x0, y0 = 0.07 + 0.49 * col, 0.585 - 0.44 * row
        words = _vector_tile_access(access, layout, warp=warp)
        assert len(set(words)) == 32
        banks = [(r * pitch + c) % 32 for r, c in words]
        hits = [banks.count(b) for b in range(32)]
        worst = max(hits)
        worst_by_layout.setdefault(layout, []).append(worst)
        img = np.full((side, pitch, 3), 0.91)
        img[:, side] = 0.75  # the pad word of each row
        for (r, c), b in zip(words, banks):
            img[r, c] = cmap(b / 31)[:3]
        ax = fig.add_axes([x0, y0, 0.42, 0.265])
        ax.imshow(img, interpolation="nearest", extent=(0, pitch, side, 0), aspect="auto")
        for r, c in words:
            box(ax, c, r, 1, 1, ec="black", lw=0.5, zorder=3)
        ax.set_xticks([0, 16, 32, 48, 64])
        ax.set_yticks([0, 16, 32, 48, 63])
        ax.tick_params(labelsize=7, length=2)
        ax.set_xlabel("word in the row (64 = pad)", fontsize=7.5, labelpad=1)
        ax.set_ylabel("row of tile[][]", fontsize=7.5, labelpad=1)
        verdict = ("32 banks, one word each → 1 wavefront" if worst == 1 else
                   f"{sum(1 for h in hits if h)} banks, {worst} words each → {worst} wavefronts")
        ax.set_title(f"{title}\n{verdict}", fontsize=9,
                     color="black" if worst == 1 else OI["red"])
        axh = fig.add_axes([x0, y0 - 0.095, 0.42, 0.05])
        axh.bar(range(32), hits, color=[cmap(b / 31) for b in range(32)], edgecolor=OI["dark"], lw=0.4)
        axh.set_xlim(-0.7, 31.7)
        axh.set_ylim(0, 2.6)
        axh.set_yticks([0, 1, 2])
        axh.set_xticks([0, 8, 16, 24, 31])
        axh.set_xlabel("bank", fontsize=7.5, labelpad=1)
        axh.set_ylabel("words", fontsize=7.5)
        axh.tick_params(labelsize=7, length=2)
        axh.spines[["top", "right"]].set_visible(False)
    assert max(worst_by_layout["plain"]) == 2 and max(worst_by_layout["slot"]) == 1
    note(fig, 0.05, 0.955,
         "06_vector_tiles.cu, float4 path: thread l = 32·warp + lane takes vector column g = l % 16 and tile row "
         f"pr = l / 16; drawn: warp {warp} (pr = 2, 3), pass p = 0, element j = 0 of each float4. Top: the tile "
         "stored plainly; bottom: step 06's de-interleaved tile. Outlined and coloured (colour = bank, as in the "
         "bars under each tile): the 32 words the warp touches; grey: the rest of the tile, the pad column darker.",
         fs=8, width=0.92)
    return fig


@figure("transpose/img/fig_sector_aligned.png")
def fig_sector_aligned():
    """Three rows of `out` at rows = 8191 (rows of `out` start 7, 6 and 5 floats into a sector), each
    cell a float coloured by the tile, i.e. the block, that writes it. Step 06's pieces follow the
    matrix: tile t writes floats 64t .. 64t + 63 of the row, so the sector at every tile boundary holds
    floats of two tiles, written by two blocks at different times (red). Step 07's pieces follow the
    memory: each starts at the 64-byte boundary at or before float 64t (up to 15 floats early), so
    every sector inside a row has one owner; only the sector where a row of `out` meets the next
    one is still shared. Thick lines: 32-byte sectors."""
    rows, tile, align, sector = 8191, 64, 16, 8   # the matrix height; 07's kR, kAlign; floats per sector
    first, last = -12, 88                          # floats of each row drawn (negative: the row before)
    out_rows = [1, 2, 3]
    colours = {-1: OI["lightgrey"], 0: OI["sky"], 1: OI["orange"], 2: OI["green"]}

    def owner06(c, e):
        return -1 if e < 0 else e // tile

    def owner07(c, e):
        if e < 0:
            return -1
        early = (c * rows) % align          # how far the row starts past a 64-byte boundary
        return (e + early) // tile         # piece p covers [64p - early, 64p + 64 - early)

    fig = new_fig(10.0, 5.4, "transpose 07: pieces of `out` aligned to the memory, not to the matrix")
    shared_counts = []
    for p, (title, owner) in enumerate([("step 06: tile t writes floats 64t .. 64t + 63 of each row of `out`", owner06),
                                        ("step 07: each piece starts at the 64-byte boundary at or before float 64t",
                                         owner07)]):
        ax = grid_ax(fig, [0.03, 0.56 - 0.40 * p, 0.94, 0.32], (first - 9, last + 1), (-1.3, len(out_rows) * 1.5),
                     equal=False)
        text(ax, first - 8.5, -0.85, title, fs=9.5, ha="left", fontweight="bold")
        shared = 0
        for k, c in enumerate(out_rows):
            y = k * 1.5
            base = c * rows
            text(ax, first - 1, y + 0.45, f"out row {c}\n(starts {base % sector} floats\ninto a sector)", fs=6.5,
                 ha="right")
            for e in range(first, last):
                box(ax, e, y, 1, 0.9, fc=colours.get(owner(c, e), OI["grey"]), ec="white", lw=0.2)
            # sectors: address multiples of 8 floats
            e = first - ((base + first) % sector)
            while e < last:
                lo, hi = max(e, first), min(e + sector, last)
                owners = {owner(c, x) for x in range(e, e + sector)}
                two = len(owners) > 1
                shared += two and first <= e and e + sector <= last
                box(ax, lo, y, hi - lo, 0.9, ec=OI["red"] if two else "black", lw=1.8 if two else 0.7, zorder=3)
                e += sector
            text(ax, 0, y + 1.2, "float 0", fs=6, color=OI["dark"])
            text(ax, tile, y + 1.2, "float 64", fs=6, color=OI["dark"])
        shared_counts.append(shared)
    from matplotlib.patches import Patch
    fig.legend(handles=[Patch(facecolor=OI["lightgrey"], label="the previous row of `out`"),
                        Patch(facecolor=OI["sky"], label="tile 0's block"),
                        Patch(facecolor=OI["orange"], label="tile 1's block"),
                        Patch(facecolor="white", edgecolor=OI["red"], linewidth=1.8,
                              label="a sector two blocks write")],
               loc="lower center", ncol=4, fontsize=8, frameon=False, bbox_to_anchor=(0.5, 0.06))
    note(fig, 0.03, 0.06,
         "Sectors two blocks write leave L2 half written; with ECC the HBM3 is written in whole sectors, so each "
         "costs a DRAM read to merge (the extra reads of 06 at 8191 x 8193). 07 also reads 16 rows of `in` above "
         "its tile (a halo), which the block above has just read: L2 serves them.", fs=8, width=0.94)
    assert shared_counts[0] > shared_counts[1]
    return fig


@figure("transpose/img/fig_thin.png")
def fig_thin():
    """Step 09 on a matrix of R = 3 rows, drawn small: 24 columns, a span of 8 columns per block (the
    step's span is about 8,192 / R: 2,720 at R = 3), so 3 blocks. Top: `in`, each float coloured by the
    block that moves it and labelled with the index it gets in `out` (column c, row t go to
    c * R + t). A block reads R pieces of `in`, one per row, each contiguous. Bottom: `out` in memory
    order, 72 floats in lines of 24: each block's floats are one contiguous range, span * R long. Both
    sides coalesced: warps read 32 consecutive floats of one piece and write 32 consecutive floats of
    the range."""
    R, cols, span = 3, 24, 8
    colours = [OI["sky"], OI["orange"], OI["green"]]
    fig = new_fig(10.0, 5.6, "transpose 09: a thin matrix, R rows, moved a span of columns per block")
    ax = grid_ax(fig, [0.03, 0.58, 0.94, 0.28], (-4.5, cols + 0.5), (-1.4, R + 0.2), equal=False)
    text(ax, -4.3, -0.9, f"`in`: {R} rows x {cols} columns (row-major); a block takes {span} columns "
         "= R contiguous pieces", fs=9.5, ha="left", fontweight="bold")
    for t in range(R):
        text(ax, -0.4, t + 0.45, f"row {t}", fs=7.5, ha="right")
        for c in range(cols):
            box(ax, c, t, 1, 0.9, fc=colours[c // span], ec="white", lw=0.4, text=str(c * R + t), fs=6.5)
    for b in range(cols // span):
        box(ax, b * span, 0, span, R - 0.1, ec="black", lw=1.4, zorder=3)
        text(ax, b * span + span / 2, R + 0.05, f"block {b}", fs=7.5, va="top")
    bx = grid_ax(fig, [0.03, 0.16, 0.94, 0.30], (-4.5, cols + 0.5), (-1.4, R + 0.2), equal=False)
    text(bx, -4.3, -0.9, f"`out`: {cols} rows x {R} columns, in memory order (lines of {cols} floats): "
         f"each block's {span * R} floats are one range", fs=9.5, ha="left", fontweight="bold")
    for o in range(cols * R):
        line, x = divmod(o, cols)
        c = o // R
        box(bx, x, line, 1, 0.9, fc=colours[c // span], ec="white", lw=0.4, text=str(o), fs=6.5)
        if o % R == 0:  # out row c starts here: R floats, one from each row of `in`
            bx.plot([x, x], [line, line + 0.9], color=OI["dark"], lw=0.6, zorder=2)
    for line in range(R):
        text(bx, -0.4, line + 0.45, f"floats {line * cols}-{line * cols + cols - 1}", fs=7, ha="right")
    note(fig, 0.03, 0.12,
         "Each label is the float's index in `out`. A block reads its R pieces (coalesced: consecutive "
         "floats of one row of `in`), puts them in shared memory as R rows of span + pad floats, and writes "
         "its range of `out` (coalesced: consecutive floats). The pad, ceil(32 / R) floats, keeps a warp's "
         "32 reads of the transposed order on 32 banks. A matrix with R columns is the mirror image: one "
         "range read, R pieces written.", fs=8, width=0.94)
    return fig


def _grouped_tile(index, band, lines, across):
    """common/tile_order.h's grouped_tile: (line, position along it)."""
    per_band = band * across
    b = index // per_band
    first = b * band
    height = min(band, lines - first)
    in_band = index - b * per_band
    return first + in_band % height, in_band // height


@figure("transpose/img/fig_grid_order.png")
def fig_grid_order():
    """Which tiles run together, for a short, wide matrix drawn small: 5 tile rows (the last one
    ragged) by 20 tile columns, 20 blocks resident at once. Step 07 numbers the tiles row by row,
    tile columns fastest: each wave is a thin strip one tile row tall, writing a short piece into
    every row of `out` it touches, and the ragged last tile row is a wave of its own. Step 08 walks
    G = 20 / 5 = 4 tile columns at a time, row by row inside them: each wave is whole tile columns,
    i.e. complete, consecutive rows of `out`. Colour = the wave a tile runs in. (At 1025 x 32769 on
    an H100: 17 tile rows, 257 tile columns, 264 resident blocks, G = 15.)"""
    tile_rows, tile_cols, resident = 5, 20, 20
    group = max(1, resident // tile_rows)
    ragged = 0.35  # the last tile row's share of a full one, as drawn
    blocks = tile_rows * tile_cols

    def order07(b):
        return b // tile_cols, b % tile_cols

    def order08(b):
        col, row = _grouped_tile(b, group, tile_cols, tile_rows)
        return row, col

    from matplotlib import colormaps
    waves = (blocks + resident - 1) // resident
    cmap = colormaps["viridis"].resampled(waves)
    fig = new_fig(9.6, 6.0, "transpose 08: the tiles that run together (one colour = one wave)")
    for p, (title, order) in enumerate([("step 07: tile columns fastest", order07),
                                        (f"step 08: {group} tile columns at a time, row by row", order08)]):
        ax = grid_ax(fig, [0.03, 0.56 - 0.40 * p, 0.94, 0.33], (-0.5, tile_cols + 1.5), (-1.2, tile_rows + 0.2),
                     equal=False)
        text(ax, -0.4, -0.65, title, fs=9.5, ha="left", fontweight="bold")
        seen = set()
        for b in range(blocks):
            r, c = order(b)
            assert (r, c) not in seen
            seen.add((r, c))
            h = ragged if r == tile_rows - 1 else 1.0
            w = b // resident
            box(ax, c, r, 1, h, fc=cmap(w), ec="white", lw=0.8, text=str(w), fs=6.5,
                tc="white" if w < waves * 0.6 else "black")
        text(ax, tile_cols + 0.2, tile_rows - 1 + ragged / 2, "ragged\nlast row", fs=6.5, ha="left")
    note(fig, 0.03, 0.13,
         "A tile column of `in` is a band of rows of `out`: tile (r, c) writes a 64-float piece into each row of "
         "`out` of its columns. Top: wave 0 writes one piece into each row of `out` of all 20 tile columns, and "
         "those rows are finished only four waves later; the ragged row runs last, alone. Bottom: wave 0 "
         "finishes the rows of `out` of tile columns 0-3, ragged tiles included, and blocks 0-3 read adjacent "
         "pieces of the same rows of `in`. The order: grouped_tile() in common/tile_order.h.", fs=8, width=0.94)
    return fig

# ====================================================================================================
# reduction
# ====================================================================================================

def _tree_passes(scheme, n):
    """[(stride, [(tid, dst, src), ...]), ...] for the three in-place trees of steps 01-03."""
    passes = []
    if scheme == "interleaved":
        s = n // 2
        while s > 0:
            passes.append((s, [(t, t, t + s) for t in range(n) if t < s]))
            s //= 2
        return passes
    s = 1
    while s < n:
        ops = []
        for t in range(n):
            if scheme == "neighbored" and t % (2 * s) == 0 and t + s < n:
                ops.append((t, t, t + s))
            if scheme == "neighbored_less":
                idx = 2 * s * t
                if idx < n and idx + s < n:
                    ops.append((t, idx, idx + s))
        passes.append((s, ops))
        s *= 2
    return passes


def _warp_stats(scheme, block=512):
    """Per pass of a 512-thread block: (stride, warps with work, warps diverged)."""
    out = []
    for s, ops in _tree_passes(scheme, block):
        active = {t for t, _, _ in ops}
        warps = [sum(1 for l in range(32) if w * 32 + l in active) for w in range(block // 32)]
        out.append((s, sum(1 for a in warps if a), sum(1 for a in warps if 0 < a < 32)))
    return out


@figure("reduction/img/fig_tree_neighbored.png")
def fig_tree_neighbored():
    """The three in-place trees of steps 01-03 on 16 values: which thread adds which pair at each pass
    (tN in the cell that receives the sum). Step 01 (tid % (2*stride) == 0) scatters the working threads,
    step 02 (index = 2*stride*tid) packs them into the lowest thread ids, step 03 (stride halving from
    blockDim/2) packs them and keeps their addresses consecutive. The strips on the right mark the
    working threads; the text gives the same pass for the real 512-thread block."""
    n = 16
    schemes = [("neighbored", "step 01 — neighbored pairs, if (tid % (2·stride) == 0): slice[tid] += slice[tid + stride]"),
               ("neighbored_less", "step 02 — packed threads, index = 2·stride·tid: slice[index] += slice[index + stride]"),
               ("interleaved", "step 03 — interleaved pairs, stride = blockDim/2 … 1: slice[tid] += slice[tid + stride]")]
    colors = {"neighbored": OI["orange"], "neighbored_less": OI["sky"], "interleaved": OI["green"]}
    fig = new_fig(9, 10.6, "Reduction trees on 16 values: who adds what, pass by pass")
    h = 0.29
    for k, (scheme, title) in enumerate(schemes):
        passes = _tree_passes(scheme, n)
        stats = _warp_stats(scheme)
        ax = grid_ax(fig, [0.02, 0.67 - k * h, 0.96, h - 0.02], (-3.2, 41), (-1.3, 5 * 2.0 - 0.2), equal=False)
        text(ax, -3.1, -0.85, title, fs=9, ha="left", fontweight="bold")
        text(ax, 18.0, -0.2, "working threads (tid 0..15)", fs=7.5, ha="left", color="#444444")
        text(ax, 26.6, -0.2, "all 9 passes of the real 512-thread block", fs=7.5, ha="left", color="#444444")
        for lvl in range(len(passes) + 1):
            y = lvl * 2.0
            label = "values" if lvl == 0 else f"stride {passes[lvl - 1][0]}"
            text(ax, -0.3, y + 0.4, label, fs=7.5, ha="right")
            receivers = {d: t for t, d, _ in passes[lvl - 1][1]} if lvl else {}
            for i in range(n):
                if lvl == 0:
                    box(ax, i, y, 1, 0.8, fc=OI["lightgrey"], text=f"x{i}", fs=6.5, lw=0.4)
                elif i in receivers:
                    box(ax, i, y, 1, 0.8, fc=colors[scheme], text=f"t{receivers[i]}", fs=6.5, lw=0.5, bold=True)
                else:
                    box(ax, i, y, 1, 0.8, fc="white", ec=OI["grey"], lw=0.4)
            if lvl:
                for t, d, src in passes[lvl - 1][1]:
                    arrow(ax, src + 0.5, y - 1.2, d + 0.55, y, lw=0.7, ms=5, color=OI["dark"])
                    arrow(ax, d + 0.5, y - 1.2, d + 0.5, y, lw=0.5, ms=4, color="#999999")
                active = {t for t, _, _ in passes[lvl - 1][1]}
                for t in range(n):
                    box(ax, 18 + t * 0.55, y + 0.1, 0.55, 0.6, fc=colors[scheme] if t in active else "white",
                        ec=OI["dark"], lw=0.3)
        # The 512-thread block, all 9 passes, compactly.
        lines = []
        for s, warps, div in stats:
            lines.append(f"stride {s:>3}: {warps:>2} of 16 warps add, {div:>2} diverge")
        col = "\n".join(lines)
        text(ax, 26.6, 0.9, col, fs=7.2, ha="left", va="top", family="DejaVu Sans Mono")
    note(fig, 0.03, 0.085,
         "Cells: the in-place slice (x0..x15); tN = the thread that stores the sum there (black arrow: the added "
         "partner, grey: its own value). Toy block of 16 threads;\n01_neighbored.cu, 02_neighbored_less.cu and "
         "03_interleaved.cu run 512 threads per block (kThreads) in global memory. A warp diverges when some of "
         "its 32 lanes add\nand others skip: step 01 splits all 16 warps in its first 5 passes; steps 02 and 03 "
         "only once fewer than 32 threads are left.", fs=8)
    return fig


@figure("reduction/img/fig_smem_bank_conflicts.png")
def fig_smem_bank_conflicts():
    """The banks hit by warp 0 (tid 0..31) when the tree lives in shared memory. Harris's interleaved
    addressing, sdata[2*s*tid] += sdata[2*s*tid + s], puts 2 threads per bank at s = 1, 4 at s = 2,
    8 at s = 4 (an n-way conflict replays the load n times); sequential addressing, sdata[tid] +=
    sdata[tid + s], gives the 32 lanes 32 different banks at every stride."""
    block = 512  # the ladder's kThreads (only the s = 16 row depends on it: threads with 2·s·tid ≥ 512 skip)
    rows = []
    for s in (1, 2, 4, 8, 16):
        hits = [0] * 32
        for tid in range(32):
            idx = 2 * s * tid
            if idx < block:
                hits[idx % 32] += 1
        rows.append((f"interleaved  s = {s}\nsdata[{2 * s}·tid]", hits, s))
    for s in (256, 32):
        hits = [0] * 32
        for tid in range(32):
            if tid < s:
                hits[tid % 32] += 1
        rows.append((f"sequential  s = {s}\nsdata[tid]", hits, s))
    fig = new_fig(9, 6.0, "Reduction in shared memory: banks hit by one warp's load (bank = word % 32)")
    ax = grid_ax(fig, [0.17, 0.21, 0.70, 0.70], (-0.2, 32.2), (-1.6, len(rows) * 1.35), equal=False)
    for b in range(32):
        text(ax, b + 0.5, -0.6, str(b), fs=6.5)
    text(ax, 16, -1.35, "bank", fs=8)
    cmap = plt.get_cmap("YlOrBr")
    for r, (label, hits, s) in enumerate(rows):
        y = r * 1.35 + (0.35 if r >= 5 else 0)
        worst = max(hits)
        for b in range(32):
            c = hits[b]
            box(ax, b, y, 1, 0.9, fc=cmap(0.15 + 0.85 * c / 16) if c else "white", lw=0.4,
                text=str(c) if c else "", fs=6.5, tc="white" if c >= 8 else "black")
        text(ax, -0.5, y + 0.45, label, fs=7.8, ha="right", family="DejaVu Sans Mono")
        verdict = f"{worst}-way" if worst > 1 else "conflict-free"
        text(ax, 32.6, y + 0.45, verdict, fs=8.5, ha="left", color=OI["red"] if worst > 1 else OI["green"],
             fontweight="bold")
    ax.plot([-3, 35], [5 * 1.35 + 0.1, 5 * 1.35 + 0.1], color=OI["dark"], lw=0.8, ls="--", clip_on=False)
    note(fig, 0.03, 0.17,
         "Number in a cell: how many of warp 0's 32 threads read a word in that bank (first operand; the second, "
         "+ s, has the same pattern). Threads whose index\n2·s·tid ≥ blockDim (512) skip: at s = 16 only tid < 16 "
         "work, all in bank 0. Shared memory serves one word per bank per wavefront, so an n-way conflict costs n\n"
         "wavefronts. The ladder keeps its tree in global memory (reduction/01-03), where the same index pattern costs "
         "sectors instead: step 02's 2·stride·tid is Harris's\ninterleaved addressing, step 03's tid + stride his "
         "sequential addressing (\"Optimizing Parallel Reduction in CUDA\", kernels 2 and 3).", fs=7.9)
    return fig


@figure("reduction/img/fig_warp_shuffle.png")
def fig_warp_shuffle():
    """Step 07's last warp: sum += __shfl_down_sync(0xffffffff, sum, offset) for offset 16, 8, 4, 2, 1.
    Each lane takes the register of lane + offset; the coloured arrows are the additions that reach lane
    0, which ends with the warp's total. Lanes whose source would be past lane 31 get their own value
    back (hatched): their results are never used. No memory, no __syncwarp."""
    offsets = [16, 8, 4, 2, 1]
    fig = new_fig(9, 5.7, "Warp shuffle reduction (step 07): __shfl_down_sync, offsets 16, 8, 4, 2, 1")
    ax = grid_ax(fig, [0.16, 0.18, 0.82, 0.72], (-0.2, 32.2), (-0.8, len(offsets) * 1.6 + 1.0), equal=False)
    # Lanes whose value reaches lane 0 at the end: walk backwards.
    needed_at = [None] * (len(offsets) + 1)
    needed_at[len(offsets)] = {0}
    for i in range(len(offsets) - 1, -1, -1):
        o = offsets[i]
        prev = set()
        for l in needed_at[i + 1]:
            prev.add(l)
            prev.add(l + o)
        needed_at[i] = prev
    for lvl in range(len(offsets) + 1):
        y = lvl * 1.6
        label = "start: v = slice[lane]\n+ slice[lane + 32]" if lvl == 0 else f"after offset {offsets[lvl - 1]}"
        text(ax, -0.4, y + 0.35, label, fs=7.5, ha="right")
        for l in range(32):
            own = lvl > 0 and l + offsets[lvl - 1] > 31
            matters = l in needed_at[lvl]
            fc = OI["sky"] if matters else "white"
            box(ax, l, y, 1, 0.7, fc=fc, lw=0.4, hatch="////" if own else None,
                text=str(l) if lvl == 0 or matters else "", fs=6.5)
        if lvl:
            o = offsets[lvl - 1]
            for l in range(32 - o):
                matters = l in needed_at[lvl]
                arrow(ax, l + o + 0.5, y - 0.9, l + 0.5, y, lw=1.0 if matters else 0.4, ms=6 if matters else 3,
                      color=OI["red"] if matters else "#BBBBBB", zorder=4 if matters else 2)
    text(ax, 0.5, len(offsets) * 1.6 + 0.95, "lane 0: the warp's sum", fs=8.5, ha="left", color=OI["red"],
         fontweight="bold")
    note(fig, 0.03, 0.125,
         "07_warp_shuffle.cu, warp_sum(): for (offset = 16; offset > 0; offset >>= 1) v += __shfl_down_sync(0xffffffff, v, "
         "offset). Row = the registers after that step;\nblue = lanes whose value still reaches lane 0; red arrows = those "
         "additions. Before the shuffles warp 0 folds the last 64 values: sum = slice[tid] + slice[tid + 32].\n"
         "A shift-down tree, not the XOR butterfly (__shfl_xor_sync), which would leave the total in every lane. "
         "Hatched: lane + offset > 31, the lane reads its own value.", fs=8)
    return fig


def _first_loads(data_blocks, threads, n):
    """Who loads what for the first add of steps 03 (data_blocks = 1), 04 (2) and 05 (8): for every
    input index, (block, tid) of the thread that loads it; step 03's first add is the tree's first pass
    (tid < threads/2 reads slice[tid] and slice[tid + threads/2]), steps 04/05's is the fold
    (thread tid reads slice[tid + j*threads], j < data_blocks)."""
    owner = {}
    span = threads * data_blocks
    for b in range(n // span):
        start = b * threads * data_blocks          # blockIdx.x * blockDim.x * kDataBlocks
        for tid in range(threads):
            if data_blocks == 1:
                if tid < threads // 2:
                    owner[start + tid] = (b, tid)
                    owner[start + tid + threads // 2] = (b, tid)
            else:
                for j in range(data_blocks):
                    owner[start + tid + j * threads] = (b, tid)
    return owner


@figure("reduction/img/fig_unroll_fold.png")
def fig_unroll_fold():
    """Who loads which input value for a block's first add, drawn small (8 threads per block, 64
    values): step 03 (kDataBlocks 1) gives each block 8 values and its first tree pass lets threads
    0-3 add slice[tid + 4] while threads 4-7 load nothing; step 04 (kDataBlocks 2) gives each block 16
    values and every thread adds slice[tid + 8]; step 05 (kDataBlocks 8) gives the one block 64 values
    and every thread loads slice[tid + 8j], j = 0..7. The number in a cell is the tid that loads it.
    The real steps run 512 threads per block (kThreads): at n = 2^28, 524,288, 262,144 and 65,536
    blocks."""
    T, n = 8, 64
    pick = 3
    steps = [(1, "step 03 — one value per thread: 8 blocks; first tree pass, tid < 4: slice[tid] += slice[tid + 4]",
              "threads 4-7 of every block load nothing: 32 of 64 threads idle"),
             (2, "step 04 — two data blocks per block: 4 blocks; fold: slice[tid] += slice[tid + 8]",
              "all 32 threads load 2 values; half the blocks"),
             (8, "step 05 — eight data blocks per block: 1 block; fold: slice[tid] = Σ_j slice[tid + 8·j], j = 0..7",
              "all 8 threads load 8 values, all 8 in flight; an eighth of the blocks")]
    fig = new_fig(11, 8.2, "Steps 03 → 04 → 05: who loads which value in the first pass (toy: blockDim.x = 8, n = 64)")
    h = 0.262
    for k, (D, title, verdict) in enumerate(steps):
        owner = _first_loads(D, T, n)
        span = T * D
        blocks = n // span
        ax = grid_ax(fig, [0.02, 0.67 - k * h, 0.96, h - 0.01], (-6.2, n + 0.4), (-2.6, 5.9), equal=False)
        text(ax, -6.0, -2.1, title, fs=9, ha="left", fontweight="bold")
        text(ax, -0.4, 0.4, "x[0..63]", fs=7.5, ha="right")
        text(ax, -0.4, 4.1, "threads", fs=7.5, ha="right")
        for b in range(blocks):
            col = CYCLE8[b % 8]
            x0 = b * span
            brace_h(ax, x0 + 0.1, x0 + span - 0.1, -0.15, f"block {b}", fs=7, below=False)
            # the first data block: where the fold leaves its sums and the tree runs next
            if D > 1:
                box(ax, x0, 0, T, 0.8, ec="black", lw=1.6, zorder=4)
            tw = span / T
            for t in range(T):
                loads = [i for i in range(x0, x0 + span) if owner.get(i) == (b, t)]
                chosen = t == pick and b == (1 if blocks > 1 else 0)
                box(ax, x0 + t * tw + 0.08, 3.7, tw - 0.16, 0.8, fc=col if loads else "white",
                    ec="black" if chosen else OI["dark"], lw=1.6 if chosen else 0.4,
                    hatch=None if loads else "////", text=f"t{t}" if loads else None,
                    fs=6.5 if tw < 2 else 7, bold=chosen, zorder=3 if chosen else 1)
                if not loads:  # the label on white, above the hatching
                    text(ax, x0 + (t + 0.5) * tw, 4.1, f"t{t}", fs=6.5 if tw < 2 else 7, zorder=5,
                         bbox=dict(facecolor="white", edgecolor="none", pad=0.2))
                for i in loads:
                    arrow(ax, i + 0.5, 0.8, x0 + (t + 0.5) * tw, 3.7, lw=1.1 if chosen else 0.35,
                          ms=5 if chosen else 0.1, color="black" if chosen else "#AAAAAA",
                          zorder=3 if chosen else 0, style="-|>" if chosen else "-")
        for i in range(n):
            b, t = owner.get(i, (i // span, None))
            box(ax, i, 0, 1, 0.8, fc=CYCLE8[b % 8], lw=0.4, text=str(t), fs=6.5, zorder=2)
        text(ax, n, 5.3, verdict, fs=8.3, ha="right", color=OI["dark"], style="italic")
    note(fig, 0.03, 0.135,
         "Cell colour: the block; number in a cell: the tid that loads the value; arrows: the values each thread "
         "loads (black: thread 3 of block 1, of block 0 in step 05); hatched thread: no load at all. Outlined in "
         "steps 04 and 05: the block's first data block, where slice[tid] holds the fold's sums and step 03's tree "
         "then runs. Index arithmetic of 03_interleaved.cu, 04_unroll2.cu and 05_unroll8_warps.cu: start = "
         "blockIdx.x·blockDim.x·kDataBlocks; in 04 and 05 thread tid reads slice[tid + j·blockDim.x], j < kDataBlocks; "
         "in 03's first pass threads tid < blockDim.x/2 read slice[tid] and slice[tid + blockDim.x/2].\n"
         "Real sizes: kThreads = 512, so a block covers 512, 1,024 and 4,096 values, and n = 2^28 needs 524,288, "
         "262,144 and 65,536 blocks; the value thread tid loads in data block j is 2 KiB (512 ints) past the one "
         "in data block j − 1, and each warp-wide load is 32 consecutive ints.", fs=8)
    return fig


@figure("reduction/img/fig_grid_stride_int4.png")
def fig_grid_stride_int4():
    """Step 08's loads, drawn small: 2 blocks of 4 threads, kUnroll = 4, n = 183 ints (n4 = 45 int4s
    and a tail of 3). Thread `first` reads data4[i + u*stride], u = 0..3, stride = gridDim*kThreads
    int4s, then i += kUnroll*stride; loads at or past n4 give zeros, and the last n % 4 ints are read
    one each by the threads first < n % 4. Below, one real warp-wide int4 load: 32 lanes x 16 B = 512
    contiguous bytes, 16 sectors, all used. The real launch: kThreads = 256, 1,056 blocks on an H100,
    stride = 270,336 int4s."""
    G, T, U = 2, 4, 4                     # gridDim.x, kThreads, kUnroll (toy)
    n = 183
    n4 = n // 4
    stride = G * T                        # int4s
    pick = (1, 2)                         # (blockIdx.x, threadIdx.x)
    # rows of the drawing: (k, u, [(first, int4 index or None)])
    rows = []
    iters = max(len(range(f, n4, U * stride)) for f in range(stride))
    for k in range(iters):
        for u in range(U):
            rows.append((k, u, [(f, f + k * U * stride + u * stride) for f in range(stride)]))
    tail = [(f, 4 * n4 + f) for f in range(stride) if f < n - 4 * n4]

    fig = new_fig(11, 7.9, "Step 08: grid-stride loop with int4 loads (toy: gridDim.x = 2, kThreads = 4, kUnroll = 4, n = 183)")
    rh = 1.25
    ny = len(rows) * rh + 0.6 + 2 * 0.5 + rh
    ax = grid_ax(fig, [0.02, 0.375, 0.96, 0.565], (-13.5, 4 * stride + 13), (-1.6, ny), equal=False)
    text(ax, -13.3, -1.25, "for (i = first; i < n4; i += kUnroll·stride)   v[u] = i + u·stride < n4 ? data4[i + u·stride] "
         ": make_int4(0, 0, 0, 0)", fs=8.5, ha="left", family="DejaVu Sans Mono")
    for f in range(stride):
        b, t = divmod(f, T)
        text(ax, 4 * f + 2, -0.45, f"b{b} t{t}", fs=7, color=OI["dark"])
    y = 0.0
    row_y = []
    for k, u, cells in rows:
        if u == 0 and k > 0:
            y += 0.5
        row_y.append(y)
        lo, hi = cells[0][1], cells[-1][1]
        text(ax, -0.4, y + 0.4, f"k = {k}, u = {u}:  data4[{lo}..{hi}]", fs=7.5, ha="right")
        for f, i4 in cells:
            b, t = divmod(f, T)
            chosen = (b, t) == pick
            assert i4 - u * stride < n4   # every thread enters every drawn iteration (true for n = 183)
            live = i4 < n4                # else the load gives make_int4(0, 0, 0, 0)
            for e in range(4):
                box(ax, 4 * f + e, y, 1, 0.8, fc=CYCLE8[[1, 0][b]] if live else "white",
                    ec=OI["dark"] if live else OI["grey"], lw=0.3)
            box(ax, 4 * f, y, 4, 0.8, ec="black" if chosen else OI["dark"], lw=1.8 if chosen else 0.8,
                zorder=4 if chosen else 2, text=f"t{t}" if live else "0", fs=7.5 if live else 7,
                tc="black" if live else "#999999", bold=chosen)
            if live:
                text(ax, 4 * f + 2, y + 1.0, f"{4 * i4}–{4 * i4 + 3}", fs=5.8, color="#555555")
        y += rh
    # the tail: data[4*n4 + first] for first < n % 4
    y += 0.5
    text(ax, -0.4, y + 0.4, "tail:  data[4·n4 + first]", fs=7.5, ha="right")
    for f, i in tail:
        b, t = divmod(f, T)
        box(ax, 4 * f, y, 1, 0.8, fc=CYCLE8[[1, 0][b]], lw=0.8, text=f"t{t}", fs=6.5, zorder=2)
        text(ax, 4 * f + 0.5, y + 1.0, str(i), fs=5.8, color="#555555")
    text(ax, 4 * len(tail) + 0.4, y + 0.4, f"first < n − 4·n4 = {n - 4 * n4}: one scalar int each "
         f"(ints {4 * n4}..{n - 1}); every other thread skips it", fs=7.5, ha="left", color=OI["dark"])
    # iteration braces and the stride arrows on the right
    xr = 4 * stride + 3.6
    for k in range(iters):
        y0, y1 = row_y[k * U], row_y[k * U + U - 1] + 0.8
        brace_v(ax, y0, y1, xr, f"iteration k = {k}:\n{U} int4 loads\nper thread, then\n"
                f"i += kUnroll·stride\n= {U * stride} int4s", fs=7.2)
    for k in range(iters):
        for r in range(k * U + 1, k * U + U):
            arrow(ax, 4 * stride + 0.5, row_y[r - 1] + 0.4, 4 * stride + 0.5, row_y[r] + 0.4, lw=0.9, ms=6,
                  color="black", style="-|>")
            text(ax, 4 * stride + 0.8, (row_y[r - 1] + row_y[r]) / 2 + 0.4, "+ stride", fs=6.8, ha="left")
    text(ax, 4 * stride + 0.3, -0.45, f"stride = gridDim·kThreads = {stride} int4s", fs=7, ha="left")

    # one real warp: 32 lanes x 16 B
    ax2 = grid_ax(fig, [0.02, 0.16, 0.96, 0.19], (-13.5, 4 * stride + 13), (-1.5, 2.5), equal=False)
    text(ax2, -13.3, -1.2, "one real warp-wide load (lanes 0-31 of a warp, one u): data4[i .. i + 31], 32 × 16 B = 512 "
         "contiguous bytes", fs=8.5, ha="left", fontweight="bold")
    for l in range(32):
        box(ax2, l, 0, 1, 0.8, fc=OI["sky"], lw=0.3, text=str(l), fs=6)
    for s in range(16):
        box(ax2, 2 * s, 0, 2, 0.8, ec="black", lw=1.2, zorder=3)
        text(ax2, 2 * s + 1, 1.1, f"s{s}", fs=6.5)
    text(ax2, -0.4, 0.4, "lanes (16 B each)", fs=7.5, ha="right")
    text(ax2, -0.4, 1.1, "32-B sectors", fs=7.5, ha="right")
    for line in range(4):
        brace_h(ax2, 8 * line + 0.05, 8 * line + 8 - 0.05, 1.45, f"128-B line {line}", fs=7)
    text(ax2, 32.4, 0.4, "16 sectors per request,\n100% of the bytes used", fs=7.5, ha="left", color=OI["green"],
         fontweight="bold")
    note(fig, 0.03, 0.135,
         "Top: one cell = one int, one outlined group = one int4 (16 B); colour = block, t = threadIdx.x, small numbers = "
         "the ints' indices; first = blockIdx.x·kThreads + threadIdx.x. Outlined black: block 1, thread 2 (first = 6), "
         "which loads int4s 6, 14, 22, 30, then 38 and three zeros. White: a load at or past n4, replaced by "
         "make_int4(0, 0, 0, 0). In each row a warp reads consecutive int4s.\n"
         "Real values (08_grid_stride_int4.cu): kThreads = 256, kUnroll = 4, gridDim.x = SMs × 8 = 1,056 on an H100 "
         "(fewer if n/4 needs fewer blocks); stride = 270,336 int4s (4.125 MiB), one iteration covers 1,081,344 int4s "
         "(16.5 MiB), and each thread asks for 4 × 16 B = 64 B per iteration (its SASS, unrolled 4 times, issues 3 of "
         "those loads, 48 B, before the first add: cuobjdump -sass). At n = 2^28 each thread runs 62 or 63 iterations "
         "and there is no tail (n % 4 = 0); --n 1000003 has a tail of 3. The input must be 16-byte aligned: launch() "
         "throws otherwise (cudaMalloc gives 256), there is no misaligned-start path.", fs=8)
    return fig


@figure("reduction/img/fig_last_warp_race.png")
def fig_last_warp_race():
    """The post's last warp, vmem[tid] += vmem[tid + 32]; vmem[tid] += vmem[tid + 16]; ..., followed
    for two lanes of warp 0 and the one slot between them, vmem[16] (x0..x63: the 64 values left). Lane
    0 needs x16 + x48, which lane 16 stores at the +32 line. In lockstep it gets it; without volatile
    lane 16 may keep its sum in a register and lane 0 reads a stale x16; with volatile but lanes running
    apart (Volta and later) lane 16 may already have added x32 on top. Step 05's two __syncwarp() per
    pass (warp_reduce_volatile, run by warp 0 once the 512-thread tree is down to 64 values) make the
    first order the only one."""
    G, R = OI["green"], OI["red"]
    panels = [
        ("The post, as it assumes: the warp in lockstep", G,
         "vmem[0] = x0 + x16 + x32 + x48: right, but only because every load of a line\nran before any store of it",
         [("op", "+32  ld x0, ld x32", "x16", "+32  ld x16, ld x48", None),
          ("op", "+32  st vmem[0] = x0+x32", "x16+x48", "+32  st vmem[16] = x16+x48", "st"),
          ("op", "+16  ld vmem[16] → x16+x48  ✓", "x16+x48", "+16  ld vmem[16], ld x32", G),
          ("op", "+16  st vmem[0] = x0+x16+x32+x48", "x16+x32+x48", "+16  st vmem[16] (never reaches vmem[0])", "st")]),
        ("Without volatile: lane 16 keeps its sum in a register", R,
         "x48 is lost: seen from one thread, no other access touches vmem[tid], so the\ncompiler may keep it in "
         "a register and store it once, at the end",
         [("op", "+32  ld x0, ld x32", "x16", "+32  ld x16, ld x48", None),
          ("op", "+32  r = x0+x32   (no store)", "x16", "+32  r = x16+x48   (no store)", None),
          ("op", "+16  ld vmem[16] → x16  ✗ stale", "x16", "+16  ld x32, r += x32", R),
          ("op", "+16  r = x0+x32+x16   (x48 missing)", "x16", "(stores r after the last line)", None)]),
        ("volatile, no __syncwarp: the lanes run apart (Volta and later)", R,
         "x32 counted twice: volatile makes every access a real load or store,\nbut it orders nothing between lanes",
         [("op", "(not yet scheduled)", "x16", "+32  ld x16, ld x48", None),
          ("op", "", "x16+x48", "+32  st vmem[16] = x16+x48", "st"),
          ("op", "", "x16+x48", "+16  ld vmem[16], ld x32", None),
          ("op", "", "x16+x32+x48", "+16  st vmem[16] = x16+x32+x48", "st"),
          ("op", "+32  ld x0, ld x32, st x0+x32", "x16+x32+x48", "", None),
          ("op", "+16  ld vmem[16] → x16+x32+x48  ✗", "x16+x32+x48", "", R),
          ("op", "+16  st vmem[0] = x0+x16+2·x32+x48", "x16+x32+x48", "", None)]),
        ("Step 05: read into a register, __syncwarp, write, __syncwarp", G,
         "right on every GPU: a lane that runs ahead waits at each __syncwarp(), so all\nreads of a pass precede "
         "its writes, and its writes precede the next pass's reads",
         [("op", "sum = x0", "x16", "sum = x16", None),
          ("op", "+32  sum += slice[32] → x0+x32", "x16", "+32  sum += slice[48] → x16+x48", None),
          ("sync", None, None, None, None),
          ("op", "+32  st slice[0] = x0+x32", "x16+x48", "+32  st slice[16] = x16+x48", "st"),
          ("sync", None, None, None, None),
          ("op", "+16  sum += slice[16] → x16+x48  ✓", "x16+x48", "+16  sum += slice[32]", G),
          ("sync", None, None, None, None),
          ("op", "+16  st slice[0] = x0+x16+x32+x48", "x16+x32+x48", "+16  st slice[16]", "st"),
          ("sync", None, None, None, None)]),
    ]
    fig = new_fig(11.6, 8.0, "The last warp: the post's volatile lines against step 05's __syncwarp, lanes 0 and 16")
    rects = [[0.015, 0.50, 0.48, 0.42], [0.51, 0.50, 0.48, 0.42], [0.015, 0.05, 0.48, 0.42], [0.51, 0.05, 0.48, 0.42]]
    for (title, vcol, verdict, rows), rect in zip(panels, rects):
        ax = grid_ax(fig, rect, (-0.1, 11.3), (-1.9, 9.6), equal=False)
        text(ax, 0.0, -1.45, title, fs=9.5, ha="left", fontweight="bold")
        text(ax, 2.3, -0.55, "lane 0", fs=8.5, fontweight="bold")
        text(ax, 5.55, -0.55, "vmem[16]\nin memory", fs=7.5, color=OI["dark"])
        text(ax, 8.8, -0.55, "lane 16", fs=8.5, fontweight="bold")
        ax.annotate("", xy=(-0.05, 7.7), xytext=(-0.05, 0.1),
                    arrowprops=dict(arrowstyle="-|>", color="#999999", lw=0.8))
        text(ax, -0.05, 7.9, "time", fs=6.5, color="#999999", ha="left")
        step = 7.5 / max(len(rows), 5)
        y = 0.1
        for kind, l0, mem, l16, mark in rows:
            if kind == "sync":
                ax.plot([0.2, 11.0], [y + 0.12, y + 0.12], color=OI["blue"], lw=1.4, ls="--")
                text(ax, 5.55, y + 0.12, "__syncwarp()", fs=7, color=OI["blue"],
                     bbox=dict(facecolor="white", edgecolor="none", pad=0.5))
                y += 0.45
                continue
            hgt = min(0.8, step * 0.8)
            if l0:
                box(ax, 0.2, y, 4.2, hgt, fc=OI["sky"] if "(" not in l0[:2] else "white", lw=0.4, text=l0, fs=6.8)
            if l16:
                box(ax, 6.9, y, 4.2, hgt, fc=OI["orange"], lw=0.4, text=l16, fs=6.8)
            box(ax, 4.75, y, 1.6, hgt, fc=OI["lightgrey"], lw=0.4, text=mem, fs=6.8)
            if mark == "st":
                arrow(ax, 6.9, y + hgt / 2, 6.35, y + hgt / 2, lw=1.0, ms=6)
            elif mark:
                arrow(ax, 4.75, y + hgt / 2, 4.4, y + hgt / 2, lw=1.8, ms=8, color=mark)
            y += step
        text(ax, 0.2, 8.9, verdict, fs=8, ha="left", color=vcol, fontweight="bold")
    return fig


# ====================================================================================================
# sgemm
# ====================================================================================================

def _naive_warp(step, n=4096, k=4096, p=3, block=0, warp=0):
    """The (row, col) of C each lane of one warp computes in steps 01/02, and the 32-byte sectors its
    loads of A[row][p], B[p][col] and its store to C touch (the steps' index arithmetic)."""
    tile_m, tile_n = (32, 8) if step == 1 else (8, 32)  # kTileRows, kTileCols; blockDim 32 x 8 / 32 x 8
    tiles_n = -(-n // tile_n)
    t_row, t_col = block // tiles_n * tile_m, block % tiles_n * tile_n  # tile_origin(): blockIdx.x row by row
    lanes = []
    for lane in range(32):
        tid = warp * 32 + lane
        tx, ty = tid % 32, tid // 32  # blockDim.x = 32 in both steps
        lanes.append((t_row + tx, t_col + ty) if step == 1 else (t_row + ty, t_col + tx))
    sec = lambda addrs: sorted({4 * a // 32 for a in addrs})
    return dict(tile_m=tile_m, tile_n=tile_n, t_row=t_row, t_col=t_col, lanes=lanes, p=p, k=k, n=n,
                a=sec(r * k + p for r, c in lanes), b=sec(p * n + c for r, c in lanes),
                c=sec(r * n + c for r, c in lanes))


@figure("sgemm/img/fig_naive_warp.png")
def fig_naive_warp():
    """What one warp of sgemm steps 01 and 02 touches at one step p of its k loop (32 x 8 threads, one
    element of C each; warp 0 of block 0, p = 3, k = n = 4096). Step 01 puts the row on threadIdx.x: the
    warp's 32 results run down a column of C, its 32 reads of A[row][p] are k floats apart (32 sectors
    for one request) and B[p][col] is one address (1 sector). Step 02 puts the column on threadIdx.x: the
    results run along a row, A[row][p] is one address and B[p][col..col+31] one 128-byte line (4
    sectors). Look at the black outlines: the sectors each load request fetches."""
    fig = new_fig(11, 7.9, "Who reads what: one warp, one step p of the k loop (sgemm steps 01 and 02)")
    light_a, light_b = "#D5EAF7", "#F7E3B5"
    KW = 16  # k columns of A / rows of B drawn
    for col_i, step in enumerate((1, 2)):
        W = _naive_warp(step)
        p, lanes = W["p"], W["lanes"]
        r0, c0 = W["t_row"], W["t_col"]
        ax = grid_ax(fig, [0.01 + 0.5 * col_i, 0.2, 0.47, 0.72], (-10, 53), (-9, 63))
        ox = oy = 19  # C's corner
        title = ("step 01: row = t.row + threadIdx.x,  col = t.col + threadIdx.y" if step == 1 else
                 "step 02: row = t.row + threadIdx.y,  col = t.col + threadIdx.x")
        text(ax, 21.5, -7.5, title, fs=9.5, fontweight="bold")
        # C: 32 x 32 window, block tiles outlined, block 0 shaded, warp 0 in green.
        for r in range(32):
            for c in range(32):
                mine = (r0 + r, c0 + c) in lanes
                inblock = r < W["tile_m"] and c < W["tile_n"]
                box(ax, ox + c, oy + r, 1, 1, fc=OI["green"] if mine else ("#D8EFE6" if inblock else "white"),
                    ec="#BBBBBB", lw=0.25)
        for t in range(0, 32, W["tile_m"]):
            for u in range(0, 32, W["tile_n"]):
                box(ax, ox + u, oy + t, W["tile_n"], W["tile_m"], ec=OI["dark"], lw=0.9)
        box(ax, ox, oy, W["tile_n"], W["tile_m"], ec="black", lw=1.8, zorder=4)
        tiles_n = -(-W["n"] // W["tile_n"])
        for t in range(0, 32, W["tile_m"]):
            for u in range(0, 32, W["tile_n"]):
                blk = (r0 + t) // W["tile_m"] * tiles_n + (c0 + u) // W["tile_n"]
                text(ax, ox + u + W["tile_n"] / 2 + (0.5 if step == 1 else 0), oy + t + W["tile_m"] / 2 + (0 if step == 1 else 0.5),
                     f"block {blk}", fs=7.5, rotation=90 if step == 1 else 0, color="#444444", zorder=5)
        # A: rows r0..r0+31, k 0..15.
        a_rows = {r for r, c in lanes}
        for r in range(32):
            for q in range(KW):
                used = q == p and (r0 + r) in a_rows
                fetched = any((r0 + r) * W["k"] + q in range(8 * s, 8 * s + 8) for s in W["a"])
                box(ax, q, oy + r, 1, 1, fc=OI["sky"] if used else (light_a if fetched else "white"),
                    ec="#BBBBBB", lw=0.25)
        for s in W["a"]:
            r, q = divmod(8 * s, W["k"])
            if 0 <= r - r0 < 32 and q < KW:
                box(ax, q, oy + r - r0, 8, 1, ec="black", lw=1.1, zorder=4)
        # B: k rows 0..15, columns c0..c0+31.
        b_cols = {c for r, c in lanes}
        for q in range(KW):
            for c in range(32):
                used = q == p and (c0 + c) in b_cols
                fetched = any(q * W["n"] + c0 + c in range(8 * s, 8 * s + 8) for s in W["b"])
                box(ax, ox + c, q, 1, 1, fc=OI["orange"] if used else (light_b if fetched else "white"),
                    ec="#BBBBBB", lw=0.25)
        for s in W["b"]:
            q, c = divmod(8 * s, W["n"])
            box(ax, ox + c - c0, q, 8, 1, ec="black", lw=1.1, zorder=4)
        # Labels.
        text(ax, KW / 2, oy - 1.0, f"A, rows {r0}–{r0 + 31}", fs=8)
        text(ax, p + 0.5, oy - 2.6, f"p = {p}", fs=7.5, color=OI["blue"])
        text(ax, ox + 16, -1.2, f"B, columns {c0}–{c0 + 31}", fs=8)
        text(ax, ox - 0.6, p + 0.5, f"p = {p}", fs=7.5, ha="right", color=OI["red"])
        text(ax, -0.6, oy + 16, "rows k floats (16 KiB) apart", fs=7, rotation=90, ha="right", color="#555555")
        text(ax, ox + 16, oy + 33.0, "C: block 0's tile (black); green: warp 0's 32 results",
             fs=7.5, va="top")
        na, nb, nc = len(W["a"]), len(W["b"]), len(W["c"])
        if step == 1:
            text(ax, 8, 8, "warp 0 = threadIdx.y 0:\n32 rows, 1 column\n(lane = row)", fs=8)
            lines = [(f"A[row][{p}]: 32 addresses k floats apart → {na} sectors", OI["blue"]),
                     (f"B[{p}][col]: one address, a broadcast → {nb} sector", OI["red"]),
                     (f"mean per load request ({na} + {nb}) / 2 = {(na + nb) / 2:g} sectors", "black"),
                     (f"store to C: a column → {nc} sectors", OI["green"])]
        else:
            text(ax, 8, 8, "warp 0 = threadIdx.y 0:\n1 row, 32 columns\n(lane = column)", fs=8)
            lines = [(f"A[row][{p}]: one address, a broadcast → {na} sector", OI["blue"]),
                     (f"B[{p}][col]: 32 consecutive floats, one line → {nb} sectors", OI["red"]),
                     (f"mean per load request ({na} + {nb}) / 2 = {(na + nb) / 2:g} sectors", "black"),
                     (f"store to C: part of a row, one line → {nc} sectors", OI["green"])]
        for i, (s, colr) in enumerate(lines):
            text(ax, -9, 55.5 + 2.2 * i, s, fs=8.5, ha="left", color=colr,
                 fontweight="bold" if i == 2 else "normal")
    legend_patches(fig.add_axes([0.0, 0.115, 1, 0.001]), [
        ("A: read by the warp at this p", OI["sky"], None), ("B: read by the warp at this p", OI["orange"], None),
        ("A: fetched with it (same 32-B sector)", light_a, None), ("B: fetched with it (same sector)", light_b, None),
        ("warp 0's results", OI["green"], None), ("the rest of block 0", "#D8EFE6", None)],
        loc="lower center", ncol=3, fs=7.5, bbox_to_anchor=(0.5, 0.0)).axes.axis("off")
    note(fig, 0.02, 0.075,
         "01_naive_uncoalesced.cu: blocks of 32 × 8 threads (blockDim.x = 32 rows, blockDim.y = 8 columns), "
         "tile 32 × 8 of C; 02_naive.cu: the same 256 threads as 8 rows × 32 columns (blockDim.x = 32 columns). "
         "Both: acc += A[row·k + p] · B[p·n + col] for p = 0..k−1; a warp is 32 consecutive threadIdx.x. "
         "Black outlines: 32-byte sectors (8 floats). Each A sector of 01 holds p = 0..7 of its row: while it "
         "stays in the L1 cache, the requests for the other 7 values of p hit there.", fs=8)
    return fig


@figure("sgemm/img/fig_shared_tiles.png")
def fig_shared_tiles():
    """Step 03's shared tiles (kTile = 32, blocks of 32 x 32 threads): the block that owns one 32 x 32
    tile of C walks k one k tile at a time (k0 = 0, 32, 64, ...); per k tile its 1,024 threads copy a
    32 x 32 tile of A and one of B into As and Bs (thread (ty, tx) copies element [ty][tx] of each), then
    thread (ty, tx) reads row ty of As and column tx of Bs for its 32 multiply-adds. Look at the bands
    in the C tile: the 32 threads that read the same As element (warp ty, a broadcast) and the same Bs
    element (one thread per warp), so each element copied once is used 32 times."""
    T = 32                 # kTile = BM = BN = BK
    ty, tx, p = 5, 20, 9   # the thread and the step p of its inner loop drawn
    bi, bj, kt = 2, 2, 1   # the block's tile of C, the k tile being multiplied
    U, G = 10, 4           # drawing units per tile in the global view, gap
    fig = new_fig(11, 6.9, "Shared tiles (step 03): a 32 × 32 tile of C, k walked 32 at a time")
    ax = grid_ax(fig, [0.01, 0.17, 0.98, 0.75], (-9, 161), (-4, 77))
    # ---- Global view: 3 x 3 tiles of A, B, C; the block's strips; k tiles 0..2.
    ay, bx = 3 * U + G, 3 * U + G  # A below B's height, B right of A's width
    light_a, light_b, done = "#D5EAF7", "#F7E3B5", "#F2F2F2"
    for i in range(3):
        for q in range(3):
            on = i == bi
            box(ax, q * U, ay + i * U, U, U, fc=(OI["sky"] if q == kt else light_a if q < kt else "white") if on else done,
                hatch="///" if on and q < kt else None, lw=0.6)
            on = i == bj
            box(ax, bx + i * U, q * U, U, U, fc=(OI["orange"] if q == kt else light_b if q < kt else "white") if on else done,
                hatch="///" if on and q < kt else None, lw=0.6)
    for i in range(3):
        for j in range(3):
            box(ax, bx + j * U, ay + i * U, U, U, fc=OI["green"] if (i, j) == (bi, bj) else done, lw=0.6)
    text(ax, bx + (bj + 0.5) * U, ay + (bi + 0.5) * U, "block's\ntile of C\n32 × 32", fs=7.5, color="white",
         fontweight="bold")
    box(ax, 0, ay + bi * U, 3 * U, U, ec="black", lw=1.4, zorder=4)
    box(ax, bx + bj * U, 0, U, 3 * U, ec="black", lw=1.4, zorder=4)
    box(ax, kt * U, ay + bi * U, U, U, ec=OI["red"], lw=2.2, zorder=5)
    box(ax, bx + bj * U, kt * U, U, U, ec=OI["red"], lw=2.2, zorder=5)
    for q in range(3):
        text(ax, (q + 0.5) * U, ay - 0.6, f"k0 = {q * T}", fs=7.5, va="bottom",
             color=OI["red"] if q == kt else "black")
        text(ax, bx - 0.6, (q + 0.5) * U, f"k0 = {q * T}", fs=7.5, ha="right",
             color=OI["red"] if q == kt else "black")
    text(ax, 1.5 * U, ay - 3.2, "A (k →)", fs=8, va="bottom")
    text(ax, bx + 1.5 * U, -1.0, "B (k ↓)", fs=8, va="bottom")
    text(ax, -6, 12, "one square: a 32 × 32 tile\n\nouter loop over k tiles:\nk0 = 0, 32, 64, ... k − 32\n(3 of k / 32 drawn)\n\n"
         "hatched: done\nred outline: now (k0 = 32)\nwhite: next", fs=7.5, ha="left", va="center")
    # ---- Shared view: As, Bs (32 x 32 each) and the C tile, one cell per element.
    X0 = 2 * (3 * U + G) + 6
    sx, sy = X0 + T + 3, T + 3  # the C tile's corner; As at (X0, sy), Bs at (sx, 0)
    for r in range(T):
        for c in range(T):
            box(ax, X0 + c, sy + r, 1, 1, fc=OI["sky"] if (r, c) == (ty, p) else light_a if r == ty else "white",
                ec="#BBBBBB", lw=0.25)
            box(ax, sx + c, r, 1, 1, fc=OI["orange"] if (r, c) == (p, tx) else light_b if c == tx else "white",
                ec="#BBBBBB", lw=0.25)
            fc = (OI["green"] if (r, c) == (ty, tx) else "#9FD3EE" if r == ty else "#F3C77A" if c == tx else "white")
            box(ax, sx + c, sy + r, 1, 1, fc=fc, ec="#BBBBBB", lw=0.25)
    for x0, y0 in ((X0, sy), (sx, 0), (sx, sy)):
        box(ax, x0, y0, T, T, ec="black", lw=1.2, zorder=4)
    text(ax, X0 + T / 2, sy - 1.0, "As[32][32] (shared): A[row][k0 + tx] → As[ty][tx]", fs=7.5, va="bottom")
    text(ax, sx + T / 2, -1.0, "Bs[32][32] (shared): B[k0 + ty][col] → Bs[ty][tx]", fs=7.5, va="bottom")
    text(ax, X0 - 0.5, sy + ty + 0.5, f"ty = {ty}", fs=7, ha="right", color=OI["blue"])
    text(ax, X0 + p + 0.5, sy + T + 0.4, f"p = {p}", fs=7, va="top", color=OI["blue"])
    text(ax, sx - 0.5, p + 0.5, f"p = {p}", fs=7, ha="right", color=OI["red"])
    text(ax, sx + tx + 0.5, sy + T + 0.4, f"tx = {tx}", fs=7, va="top", color=OI["red"])
    text(ax, sx + T + 0.6, sy + ty + 0.5, f"warp {ty}: 32 threads\nread As[{ty}][{p}] (one\naddress, a broadcast)",
         fs=7, ha="left", color=OI["blue"])
    text(ax, sx + T + 0.6, sy + T - 3, f"column {tx}: 32 threads,\none per warp, read\nBs[{p}][{tx}]", fs=7,
         ha="left", color=OI["red"])
    text(ax, sx + T / 2, sy + T + 2.6, f"C tile: thread (tx = {tx}, ty = {ty}) (green) sums As[{ty}][p] · Bs[p][{tx}], p = 0..31",
         fs=7.5, va="top")
    # ---- The copies.
    yl = ay + 3 * U + 4  # the A arrow runs under C
    ax.plot([(kt + 0.5) * U, (kt + 0.5) * U, X0 + 4], [ay + (bi + 1) * U, yl, yl], color=OI["blue"], lw=1.4)
    arrow(ax, X0 + 4, yl, X0 + 4, sy + T + 0.1, color=OI["blue"], lw=1.4, ms=11)
    arrow(ax, bx + (bj + 1) * U + 0.3, (kt + 0.5) * U, sx - 5.5, (kt + 0.5) * U, color=OI["red"], lw=1.4, ms=11)
    text(ax, (bx + 3 * U + sx - 5.5) / 2, (kt + 0.5) * U - 1, "copy, then __syncthreads()", fs=7.5,
         fontweight="bold", va="bottom")
    text(ax, (kt + 0.5) * U + 1, yl - 0.5, "copy, then __syncthreads()", fs=7.5, fontweight="bold", va="bottom",
         ha="left")
    note(fig, 0.02, 0.125,
         "03_shared_tiled.cu: kTile = 32; block (32, 32) = 1,024 threads = 32 warps, warp ty = threadIdx.y = one row "
         "of the C tile. Per k tile: As[ty][tx] = A[row][k0 + tx] and Bs[ty][tx] = B[k0 + ty][col] (warp ty copies one "
         "row of each, a 128-byte line of A and of B), __syncthreads(), then acc += As[ty][p] · Bs[p][tx] for p = 0..31, "
         "__syncthreads(). A value of A or B is read from global memory once per block and from shared memory by 32 "
         "threads: the global traffic of step 02 divided by 32.", fs=8)
    return fig


@figure("sgemm/img/fig_1d_blocktiling.png")
def fig_1d_blocktiling():
    """Step 04's 1-D register tiling (BM = BN = 64, BK = 8, TM = 8, 512 threads): thread tid owns rows
    8·(tid / 64) .. +7 of column tid % 64 of the block's 64 x 64 tile of C (a few threads coloured). At
    each p of a k tile it loads Bs[p][col] once into a register and multiplies it with the 8 values
    As[8·row + i][p], i = 0..7: 8 multiply-adds for 9 shared-memory loads (step 03: 2 per multiply-add).
    Look at the selected thread (green) and its reads in As and Bs."""
    BM, BN, BK, TM = 64, 64, 8, 8          # kBM, kBN, kBK, kTM of 04_1d_blocktiling.cu
    threads = BM // TM * BN                # kThreads = 512
    own = lambda tid: (tid // BN, tid % BN)  # (thread_row, thread_col)
    sel, p = 232, 5                        # the thread and the step p drawn
    sr, sc = own(sel)
    few = {0: OI["orange"], 1: OI["sky"], 2: OI["purple"], 63: OI["yellow"], 64: OI["blue"], 1 + 3 * BN: OI["red"]}
    fig = new_fig(11, 7.4, "1-D register tiling (step 04): a column of TM = 8 results per thread")
    ax = grid_ax(fig, [0.01, 0.16, 0.98, 0.77], (-10, 140), (-4, 79))
    ox, oy = BK + 3, BK + 3
    light_a, light_b = "#D5EAF7", "#F7E3B5"
    cell = {}
    for tid in range(threads):
        r, c = own(tid)
        for i in range(TM):
            cell[(r * TM + i, c)] = tid
    for r in range(BM):
        for c in range(BN):
            tid = cell[(r, c)]
            fc = OI["green"] if tid == sel else few.get(tid, "white" if (r // TM) % 2 == 0 else "#F2F2F2")
            box(ax, ox + c, oy + r, 1, 1, fc=fc, ec="#CCCCCC", lw=0.2)
    for s_ in range(BM // TM):
        for w in range(BN // 32):
            box(ax, ox + 32 * w, oy + s_ * TM, 32, TM, ec=OI["dark"], lw=0.8)
            warp = (s_ * BN + 32 * w) // 32
            text(ax, ox + 32 * w + 16, oy + s_ * TM + 2.3, f"warp {warp}", fs=7, color="#555555")
        text(ax, ox + BN + 0.8, oy + s_ * TM + TM / 2, f"{s_}: tid {s_ * BN}–{s_ * BN + BN - 1}",
             fs=7, ha="left")
    text(ax, ox + BN + 0.8, oy - 0.8, "thread_row:", fs=7, ha="left", va="bottom")
    box(ax, ox, oy, BN, BM, ec="black", lw=1.4, zorder=4)
    for t_ in sorted(few) + [sel]:
        r, c = own(t_)
        if t_ in (1, 2):
            continue
        lab = "tid 0, 1, 2" if t_ == 0 else f"tid {t_}"
        right = c < BN - 8
        text(ax, ox + c + (3.5 if t_ == 0 else 1.5) if right else ox + c - 0.5, oy + r * TM + 5.6,
             ("← " + lab) if right else (lab + " →"), fs=6.8, ha="left" if right else "right",
             color=OI["green"] if t_ == sel else "black")
    for r in range(BM):
        for q in range(BK):
            mine = r // TM == sr
            box(ax, q, oy + r, 1, 1, fc=OI["sky"] if mine and q == p else light_a if mine else "white",
                ec="#CCCCCC", lw=0.2)
    for q in range(BK):
        for c in range(BN):
            box(ax, ox + c, q, 1, 1, fc=OI["orange"] if c == sc and q == p else light_b if c == sc else "white",
                ec="#CCCCCC", lw=0.2)
    box(ax, 0, oy, BK, BM, ec="black", lw=1.2, zorder=4)
    box(ax, ox, 0, BN, BK, ec="black", lw=1.2, zorder=4)
    text(ax, BK / 2, oy - 0.8, f"As[{BM}][{BK}]", fs=7.5, va="bottom")
    text(ax, p + 0.5, oy + BM + 0.5, f"p = {p}", fs=7, va="top", color=OI["blue"])
    text(ax, -0.6, oy + BM / 2, "shared: rows of the block's A strip", fs=7, rotation=90, ha="right")
    text(ax, ox + BN / 2, -0.8, f"Bs[{BK}][{BN}] (shared)", fs=7.5, va="bottom")
    text(ax, ox - 0.6, p + 0.5, f"p = {p}", fs=7, ha="right", color=OI["red"])
    text(ax, ox + sc + 0.5, oy + BM + 0.5, f"col {sc}", fs=7, va="top", color=OI["green"])
    text(ax, ox + BN / 2, oy + BM + 2.6, f"C tile {BM} × {BN}: coloured, the 8-row columns of threads "
         + ", ".join(str(t) for t in sorted(few)) + f"; green: thread {sel}", fs=7.5, va="top")
    # ---- Zoom: the selected thread at one p.
    X1, Y1, Z = 97, 17, 4.0
    text(ax, X1 + 17, Y1 - 12.5, f"thread {sel} (thread_row {sr}, thread_col {sc}), one p = {p}", fs=8.5,
         fontweight="bold")
    xb = X1 + 17  # where b meets the rows
    for i in range(TM):
        yc = Y1 + (i + 0.5) * Z
        box(ax, X1, Y1 + i * Z, 10, Z - 0.4, fc=OI["sky"], text=f"As[{sr * TM + i}][{p}]", fs=7.5)
        box(ax, X1 + 25, Y1 + i * Z, 9, Z - 0.4, fc=OI["green"], text=f"acc[{i}]", fs=7.5)
        arrow(ax, X1 + 10.2, yc - 0.2, X1 + 24.8, yc - 0.2, lw=0.8, ms=7)
        text(ax, xb, yc - 0.2, "×", fs=10, color=OI["red"], fontweight="bold",
             bbox=dict(facecolor="white", edgecolor="none", pad=0.3))
    box(ax, xb - 5, Y1 - 8, 10, Z, fc=OI["orange"], text=f"Bs[{p}][{sc}]", fs=7.5)
    ax.plot([xb, xb], [Y1 - 8 + Z, Y1 + (TM - 0.5) * Z], color=OI["red"], lw=1.4, zorder=2)
    text(ax, xb - 5.5, Y1 - 6, "loaded once\ninto register b", fs=7, ha="right")
    text(ax, X1 + 29.5, Y1 - 0.8, "acc[i] += As · b\n(registers)", fs=7, va="bottom")
    text(ax, X1 - 1, Y1 + TM * Z + 1.5,
         f"per p: 1 load of Bs (into b) + {TM} loads of As\n→ {TM} multiply-adds: {TM + 1}/{TM} loads per multiply-add\n"
         f"(step 03: 2). Per k tile: {BK} p's, {BK * TM} multiply-adds.\n\n"
         f"Warp {sel // 32} = tid {sel // 32 * 32}–{sel // 32 * 32 + 31}: all share thread_row {sr},\n"
         f"so As[{sr * TM} + i][p] is one address (a broadcast)\nand Bs[p][32..63] one row of 32 banks (no conflict).",
         fs=8, va="top", ha="left")
    note(fig, 0.02, 0.12,
         f"04_1d_blocktiling.cu: kBM = kBN = {BM}, kBK = {BK}, kTM = {TM}, kThreads = {threads} in one flat block; "
         "thread_row = tid / 64 (the 8-row strip), thread_col = tid % 64 (the column): consecutive threads take "
         "consecutive columns, so a warp is half a strip. Per k tile each thread also copies one element of each tile: "
         "As[tid / 8][tid % 8] and Bs[tid / 64][tid % 64]; then for p = 0..7: b = Bs[p][thread_col]; "
         "acc[i] += As[thread_row·8 + i][p] · b, i = 0..7. Light colours: the thread's reads over the whole k tile.",
         fs=8)
    return fig


def _warptile(BM=128, BN=128, BK=8, WM=64, WN=32, TM=8, TN=8):
    """08_warptiling.cu's WarpTile arithmetic."""
    WARPS_N = BN // WN
    WARPS = (BM // WM) * WARPS_N
    RM, RN = TM // 4, TN // 4
    WSUB_M, WSUB_N = WM // RM, WN // RN
    LANES_M, LANES_N = WSUB_M // 4, WSUB_N // 4
    assert LANES_M * LANES_N == 32

    def rows_cols(warp, lane):
        lm, ln = lane // LANES_N, lane % LANES_N
        a_off = warp // WARPS_N * WM + lm * 4
        b_off = warp % WARPS_N * WN + ln * 4
        rows = [a_off + i * WSUB_M + r for i in range(RM) for r in range(4)]
        cols = [b_off + j * WSUB_N + c for j in range(RN) for c in range(4)]
        return rows, cols
    return dict(WARPS=WARPS, WARPS_N=WARPS_N, RM=RM, RN=RN, WSUB_M=WSUB_M, WSUB_N=WSUB_N, LANES_M=LANES_M,
                LANES_N=LANES_N, rows_cols=rows_cols, BM=BM, BN=BN, BK=BK, WM=WM, WN=WN, TM=TM, TN=TN)


@figure("sgemm/img/fig_tiling_hierarchy.png")
def fig_tiling_hierarchy():
    """The three levels of sgemm steps 05-08: a block computes a 128 x 128 tile of C from a 128 x 8 slice
    of A and an 8 x 128 slice of B staged in shared memory (BK = 8); in step 08 the tile is 8 warp tiles
    of 64 x 32, and each lane owns an 8 x 8 thread tile made of 2 x 2 sub-tiles of 4 x 4 spread over its
    warp tile (lane 0's in green), kept in registers as the outer product of 8 values of A and 8 of B
    per k."""
    W = _warptile()
    BM, BN, BK, WM, WN = W["BM"], W["BN"], W["BK"], W["WM"], W["WN"]
    warp_sel, lane_sel = 5, 0
    fig = new_fig(9, 6.4, "sgemm tiling: block tile → warp tile → thread tile (steps 05 and 08)")
    # Panel 1: block tile with As / Bs.
    sc = 1 / 8  # drawing units per element
    ax = grid_ax(fig, [0.01, 0.27, 0.38, 0.62], (-5.5, BN * sc + 0.5), (-4.5, BM * sc + 1.2))
    ax.set_title("block tile of C: 128 × 128, 256 threads", fontsize=9)
    box(ax, -2.2, 0, BK * sc * 2, BM * sc, fc=OI["sky"], lw=0.8)
    text(ax, -2.5, BM * sc / 2, "As: 128 × 8 (shared)", fs=7.5, rotation=90, ha="right")
    box(ax, 0, -2.2, BN * sc, BK * sc * 2, fc=OI["orange"], lw=0.8)
    text(ax, BN * sc / 2, -2.5, "Bs: 8 × 128 (shared)", fs=7.5, va="bottom")
    for w in range(W["WARPS"]):
        r0, c0 = w // W["WARPS_N"] * WM, w % W["WARPS_N"] * WN
        sel = w == warp_sel
        box(ax, c0 * sc, r0 * sc, WN * sc, WM * sc, fc=OI["green"] if sel else "#F4F4F4", lw=0.8,
            text=f"warp {w}\n64 × 32", fs=7.5, bold=sel)
        if sel:
            box(ax, -2.2, r0 * sc, BK * sc * 2, WM * sc, ec=OI["red"], lw=2)
            box(ax, c0 * sc, -2.2, WN * sc, BK * sc * 2, ec=OI["red"], lw=2)
    text(ax, BN * sc / 2, BM * sc + 0.3, "per k step: BK = 8 columns of A, 8 rows of B", fs=7.5, va="top")

    # Panel 2: warp tile 64 x 32, lanes' 4 x 4 patches.
    r_base = warp_sel // W["WARPS_N"] * WM
    c_base = warp_sel % W["WARPS_N"] * WN
    ax2 = grid_ax(fig, [0.41, 0.19, 0.24, 0.66], (-1.5, WN + 1.5), (-2.5, WM + 0.5))
    ax2.set_title(f"warp {warp_sel}'s tile (C rows {r_base}–{r_base + WM - 1},\ncolumns {c_base}–{c_base + WN - 1}): "
                  "lane numbers", fontsize=9)
    for lane in range(32):
        rows, cols = W["rows_cols"](warp_sel, lane)
        for i in range(W["RM"]):
            for j in range(W["RN"]):
                r = rows[4 * i] - r_base
                c = cols[4 * j] - c_base
                sel = lane == lane_sel
                box(ax2, c, r, 4, 4, fc=OI["green"] if sel else ["#FFFFFF", "#EEEEEE"][(i + j) % 2], lw=0.4,
                    text=str(lane), fs=6.3, bold=sel)
    for i in range(W["RM"]):
        for j in range(W["RN"]):
            box(ax2, j * W["WSUB_N"], i * W["WSUB_M"], W["WSUB_N"], W["WSUB_M"], ec="black", lw=1.3)
    text(ax2, WN / 2, -1.2, f"2 × 2 sub-tiles of {W['WSUB_M']} × {W['WSUB_N']}; cell = 4 × 4 elements", fs=7)
    # Panel 3: thread tile = outer product.
    rows, cols = W["rows_cols"](warp_sel, lane_sel)
    ax3 = grid_ax(fig, [0.67, 0.33, 0.31, 0.52], (-5.0, 9.5), (-4.2, 9.2))
    ax3.set_title(f"lane {lane_sel}'s thread tile: acc[8][8] (registers)", fontsize=9)
    for i in range(8):
        box(ax3, -1.4, i, 1, 1, fc=OI["sky"], text=f"a{i}", fs=6.5)
        box(ax3, i, -1.4, 1, 1, fc=OI["orange"], text=f"b{i}", fs=6.5)
        for j in range(8):
            box(ax3, j, i, 1, 1, fc=OI["green"], lw=0.4)
    for h in (0, 1):
        text(ax3, -1.6, 4 * h + 2, f"C rows\n{rows[4 * h]}–{rows[4 * h] + 3}", fs=6.5, ha="right")
        text(ax3, 4 * h + 2, -1.6, f"cols {cols[4 * h]}–{cols[4 * h] + 3}", fs=6.5, va="bottom")
    box(ax3, 0, 0, 8, 8, ec="black", lw=1.0)
    ax3.plot([4, 4], [0, 8], color="white", lw=2)
    ax3.plot([0, 8], [4, 4], color="white", lw=2)
    text(ax3, 4, 8.5, "per k (p = 0..7): acc[i][j] += a[i]·b[j]\n64 FFMA from 2 + 2 LDS.128:\n"
         "a = As[p][4 rows] × 2, b = Bs[p][4 cols] × 2", fs=7.2, va="top")
    note(fig, 0.02, 0.165,
         "05_2d_blocktiling.cu: Tiling<BM = 128, BN = 128, BK = 8, TM = 8, TN = 8>, 256 threads in a 16 × 16 grid; "
         "thread (row, col) owns the contiguous 8 × 8 patch at rows 8·row, columns 8·col.\n"
         "08_warptiling.cu: WarpTile<128, 128, 8, 64, 32, 8, 8>: 8 warps of 64 × 32 (2 × 4); lane (lm, ln) = "
         "(lane / 4, lane % 4) owns rows i·32 + 4·lm + 0..3 and columns j·16 + 4·ln + 0..3 (i, j ∈ {0, 1}) of its warp "
         "tile, so each LDS.128 of a warp reads 8 distinct float4 of As (128 contiguous bytes) or 4 of Bs "
         "(64 bytes), the other lanes getting broadcasts: no bank conflicts. As is stored transposed and padded, As[k][BM + 4]; Bs[k][BN]. Red: the slices warp 5 reads.",
         fs=7.9)
    return fig


@figure("sgemm/img/fig_cp_async_ring.png")
def fig_cp_async_ring():
    """Step 09's ring of S = 3 shared-memory stages over 8 k tiles: tile j is requested by cp.async two
    iterations before it is multiplied (in flight, hatched) into the stage that tile j - 3 left, so while
    the FFMAs run on one stage the next two tiles are on their way. Look at the vertical lines:
    cp.async.wait_group(S - 2) and one __syncthreads per k tile; the last two iterations issue empty
    groups."""
    S, ktiles = 3, 8
    fig = new_fig(9, 4.3, "cp.async pipeline (step 09): S = 3 stages, S − 1 = 2 tiles in flight")
    ax = fig.add_axes([0.10, 0.31, 0.87, 0.52])
    issue = {j: (-1.0 + 0.25 * j if j < S - 1 else j - (S - 1)) for j in range(ktiles)}
    for j in range(ktiles):
        s = j % S
        ax.barh(s, j - issue[j], left=issue[j], height=0.6, color=OI["sky"], edgecolor=OI["dark"], hatch="///",
                lw=0.5)
        ax.text((issue[j] + j) / 2, s, f"tile {j} in flight", ha="center", va="center", fontsize=7.5,
                bbox=dict(facecolor="white", edgecolor="none", pad=0.5, alpha=0.85))
        ax.barh(s, 1, left=j, height=0.6, color=OI["orange"], edgecolor=OI["dark"], lw=0.5)
        ax.text(j + 0.5, s, f"FFMA\ntile {j}", ha="center", va="center", fontsize=7)
    for kt in range(ktiles):
        ax.axvline(kt + 1, color=OI["red"], lw=0.9, ls="--")
        ax.text(kt + 0.5, -0.75, f"kt = {kt}", ha="center", fontsize=8)
        issued = kt + S - 1
        ax.text(kt + 0.04, S - 0.35, f"issue {issued}" if issued < ktiles else "empty\ngroup", ha="left",
                va="bottom", fontsize=6.5, color=OI["blue"])
    ax.axvline(0, color=OI["red"], lw=0.9, ls="--")
    ax.text(-0.5, -0.75, "prologue", ha="center", fontsize=8)
    ax.set_yticks(range(S))
    ax.set_yticklabels([f"stage {s}" for s in range(S)])
    ax.set_ylim(S - 0.2, -1.1)
    ax.set_xlim(-1.1, ktiles + 0.1)
    ax.set_xticks([])
    ax.set_xlabel("time →  (one column = one k tile of BK = 8 or 32: BK FFMA rounds)")
    ax.spines[["top", "right", "left"]].set_visible(False)
    from matplotlib.patches import Patch
    from matplotlib.lines import Line2D
    ax.legend(handles=[Patch(facecolor=OI["sky"], edgecolor=OI["dark"], hatch="///",
                             label="cp.async copies in flight (global → shared, LDGSTS)"),
                       Patch(facecolor=OI["orange"], edgecolor=OI["dark"], label="FFMAs reading the stage"),
                       Line2D([0], [0], color=OI["red"], ls="--", lw=0.9, label="wait_group(1) + __syncthreads()")],
              loc="upper center", ncol=3, bbox_to_anchor=(0.5, 1.22), fontsize=8, frameon=False)
    note(fig, 0.03, 0.2,
         "09_pipelined.cu, pipelined_tile<T, Stages = 3>: the prologue commits tiles 0 and 1; iteration kt issues tile "
         "kt + 2 into stage ws = (kt + 2) % 3 at p = 0 and commits a group (empty once past\n"
         "the last tile), and at p = BK − 1 waits with cp.async.wait_group(1) + __syncthreads(): tile kt + 1 has landed and "
         "every warp is done with tile kt − 1's stage (red dashed lines).\n"
         "S = 3 in the default tilings 128x128x8_8x8_w64x32_s3 (3 × 8.1 KB of shared memory) and, at 4096³ on an H100, "
         "128x256x32_8x16_w64x64_s3 (3 × 48.5 KB = 145.5 KB).", fs=7.9)
    return fig


@figure("sgemm/img/fig_split_k.png")
def fig_split_k():
    """Split-K as step 10 runs it at 1024 x 1024 x 8192 on an H100: 32 tiles of 128 x 256 cannot fill 132
    SMs, so k is cut into 4 slices of 2048; block (tile, s) runs step 09's tile loop on slice s and writes
    a partial tile to slice s of a workspace, and a second kernel adds the 4 partials of each element in
    slice order (no atomics: deterministic)."""
    m, n, k = 1024, 1024, 8192
    bm, bn, bk, per_sm, sms, min_slice = 128, 256, 32, 1, 132, 256  # 128x256x32_8x16_w64x64_s3, kMinSlice
    slots = sms * per_sm
    tiles_m, tiles_n = -(-m // bm), -(-n // bn)
    tiles = tiles_m * tiles_n
    slices = min(slots // tiles, k // min_slice)
    k_slice = (-(-k // slices) + bk - 1) // bk * bk
    slices = -(-k // k_slice)
    fig = new_fig(9, 5.9, f"Split-K (step 10): {m} × {n} × {k}, {slices} slices of k = {k_slice}")
    ax = grid_ax(fig, [0.01, 0.2, 0.50, 0.72], (-0.3, 11.2), (-0.9, 12.2))
    kl, mh = 6.0, 4.0  # k drawn 6 units long, m = n drawn 4 units (not to scale)
    scol = [OI["sky"], OI["orange"], OI["green"], OI["purple"]]
    sel_i, sel_j = 2, 1
    tw, th = mh / tiles_n, mh / tiles_m
    # B above C: k x n, slices stacked down k
    bx0 = kl + 0.6
    for s_ in range(slices):
        box(ax, bx0, s_ * kl / slices, mh, kl / slices, fc=scol[s_], lw=0.5, alpha=0.85)
        text(ax, bx0 + 3 * tw, (s_ + 0.5) * kl / slices, f"s = {s_}", fs=7.5)
    text(ax, bx0 + mh / 2, -0.45, f"B ({k} × {n})", fs=8)
    # A left of C: m x k, slices side by side along k
    ay0 = kl + 0.6
    for s_ in range(slices):
        box(ax, s_ * kl / slices, ay0, kl / slices, mh, fc=scol[s_], lw=0.5, alpha=0.85, text=f"s = {s_}", fs=7.5)
        text(ax, (s_ + 0.5) * kl / slices, ay0 + mh + 0.35, f"k {s_ * k_slice}–\n{(s_ + 1) * k_slice - 1}", fs=6.3,
             va="top")
    text(ax, kl / 2, ay0 + mh + 1.35, f"A ({m} × {k}); k not to scale", fs=8, va="top")
    for i in range(tiles_m):
        for j in range(tiles_n):
            box(ax, bx0 + j * tw, ay0 + i * th, tw, th, fc=OI["red"] if (i, j) == (sel_i, sel_j) else "white", lw=0.4)
    text(ax, bx0 + mh / 2, ay0 + mh + 0.35, f"C: {tiles_m} × {tiles_n} = {tiles}\ntiles of {bm} × {bn}", fs=7.5, va="top")
    box(ax, 0, ay0 + sel_i * th, kl, th, ec=OI["red"], lw=1.6, zorder=4)
    box(ax, bx0 + sel_j * tw, 0, tw, kl, ec=OI["red"], lw=1.6, zorder=4)
    # Right: the partials and the sum
    ax2 = grid_ax(fig, [0.52, 0.2, 0.47, 0.72], (-0.2, 12.5), (-0.9, 12.2))
    text(ax2, 2.8, -0.45, "workspace: slice s = m × n floats", fs=7.5)
    for s_ in range(slices):
        y0 = 0.3 + s_ * 2.6
        box(ax2, 0.2, y0, 5.2, 1.9, fc=scol[s_], lw=0.8,
            text=f"P{s_} = block (tile, {s_})\nA·B over k ∈ [{s_ * k_slice}, {(s_ + 1) * k_slice})", fs=7)
        arrow(ax2, 5.5, y0 + 0.95, 7.0, 5.55, lw=1.0, ms=8)
    box(ax2, 7.1, 4.6, 5.2, 1.9, fc=OI["red"], lw=0.8, text="C tile\n= P0 + P1 + P2 + P3", fs=7.5, tc="white")
    text(ax2, 9.7, 7.1, "sum_slices kernel:\nin slice order, float4\nat a time (deterministic)", fs=7.5, va="top")
    note(fig, 0.02, 0.15,
         f"10_split_k.cu at {m} × {n} × {k} on an H100: the split tiling is the largest block tile that fits, "
         f"128x256x32_8x16_w64x64_s3 ({per_sm} block per SM → {slots} slots).\n"
         f"{tiles} tiles < {slots} slots, so S = min(slots / tiles, k / kMinSlice) = min({slots // tiles}, {k // min_slice}) = "
         f"{slices}, k_slice = {k_slice} (a multiple of BK = {bk}); grid ({tiles}, {slices}) = {tiles * slices} blocks.\n"
         f"Workspace {slices} × {m} × {n} × 4 B = {slices * m * n * 4 // 2**20} MiB, written once and read once by "
         "sum_slices. Each block runs step 09's pipelined_tile unchanged on A + k0 and B + k0·n.", fs=8)
    return fig


@figure("sgemm/img/fig_tf32_tiles.png")
def fig_tf32_tiles():
    """tf32_04's one design, 256 × 128 tiles of C with one block per SM, at three shapes on an H100
    (132 SMs), to scale: at 8 × 4096 × 4096 each of the 32 tiles has 8 real rows of 256 (3%; one tile
    magnified below the strip); at 64 × 64 × 65536 C is one tile, an eighth of it real, so one SM
    walks all of k while 131 wait; at 4096³ the 512 tiles are all real, about four per SM. tf32_05
    sends the first two to other kernels."""
    tm, tn, sms = 256, 128, 132  # tf32_04_wgmma_specialized.cu: TM, TN; an H100 SXM's SMs
    real_c, pad_c = OI["blue"], OI["lightgrey"]
    fig = new_fig(11, 5.2, "What tf32_04's 256 × 128 tiles hold at three shapes of C (H100, 132 SMs)")

    def draw_tiles(ax, m, n, x0=0.0, y0=0.0, scale=1.0, lw=0.5):
        tiles_m, tiles_n = -(-m // tm), -(-n // tn)
        box(ax, x0, y0, tiles_n * tn * scale, tiles_m * tm * scale, fc=pad_c, lw=0.0)
        box(ax, x0, y0, n * scale, m * scale, fc=real_c, lw=0.0)
        for i in range(tiles_m):
            for j in range(tiles_n):
                box(ax, x0 + j * tn * scale, y0 + i * tm * scale, tn * scale, tm * scale, lw=lw)

    def stats(m, n):
        tiles_m, tiles_n = -(-m // tm), -(-n // tn)
        tiles, real = tiles_m * tiles_n, m * n / (tiles_m * tm * tiles_n * tn)
        per_sm = f", {tiles / sms:.1f} tiles per SM" if tiles > sms else ""
        return (f"{tiles} tile{'s' if tiles > 1 else ''}, {100 * real:.1f}% of each real; "
                f"{min(tiles, sms)} of {sms} SMs busy{per_sm}.")

    # m = 8: the strip of C, then its first tile magnified 2.5x
    m, n, mag = 8, 4096, 2.5
    ax = grid_ax(fig, [0.02, 0.18, 0.40, 0.62], (-60, 4160), (-60, 256 + 60 + tm * mag + 40))
    draw_tiles(ax, m, n, lw=0.3)
    zy = 256 + 60
    draw_tiles(ax, m, tn, x0=0, y0=zy, scale=mag, lw=0.8)
    ax.plot([0, 0], [256, zy], color=OI["dark"], lw=0.6)
    ax.plot([tn, tn * mag], [256, zy], color=OI["dark"], lw=0.6)
    text(ax, tn * mag + 80, zy + 0.5 * m * mag, "← 8 real rows of 256", fs=8, ha="left")
    text(ax, tn * mag + 80, zy + 0.5 * tm * mag, "one tile, magnified:\nthe other 248 rows\nare padding", fs=8, ha="left")
    fig.text(0.02, 0.86, "8 × 4096 × 4096 (m = 8)", fontsize=10, fontweight="bold")
    note(fig, 0.02, 0.16, stats(m, n) + "\n\ntf32_05: B streamed once (fp32, step 11's gemm_stream_b).",
         fs=8, width=0.38)

    def panel(rect, m, n, k, lw, tail):
        w, h = -(-n // tn) * tn, -(-m // tm) * tm
        pad = 0.08 * max(w, h)
        draw_tiles(grid_ax(fig, rect, (-pad, w + pad), (-pad, h + pad)), m, n, lw=lw)
        fig.text(rect[0] - 0.02, 0.86, f"{m} × {n} × {k}", fontsize=10, fontweight="bold")
        note(fig, rect[0] - 0.02, 0.27, stats(m, n) + tail, fs=8, width=rect[2] + 0.04)

    panel([0.47, 0.3, 0.16, 0.5], 64, 64, 65536, 0.8,
          " One SM walks all 65536 of k.\n\ntf32_05: k sliced across every SM.")
    panel([0.71, 0.3, 0.27, 0.5], 4096, 4096, 4096, 0.3, "\n\ntf32_05: step 04 itself.")

    lax = fig.add_axes([0.45, 0.02, 0.5, 0.06])
    lax.axis("off")
    legend_patches(lax, [("real elements of C", real_c, None), ("padding inside a tile", pad_c, None)],
                   loc="center left", ncol=2)
    return fig


def _mma_maps():
    """Element -> (lane, register) maps of mma.m16n8k8 .tf32 (common/mma.cuh, PTX ISA)."""
    A, B, C = {}, {}, {}
    for lane in range(32):
        g, t = lane // 4, lane % 4
        for reg, (r, c) in enumerate([(g, t), (g + 8, t), (g, t + 4), (g + 8, t + 4)]):
            assert (r, c) not in A
            A[(r, c)] = (lane, reg)
        for reg, (r, c) in enumerate([(t, g), (t + 4, g)]):
            assert (r, c) not in B
            B[(r, c)] = (lane, reg)
        for reg, (r, c) in enumerate([(g, 2 * t), (g, 2 * t + 1), (g + 8, 2 * t), (g + 8, 2 * t + 1)]):
            assert (r, c) not in C
            C[(r, c)] = (lane, reg)
    assert len(A) == 128 and len(B) == 64 and len(C) == 128
    return A, B, C


@figure("sgemm/img/fig_mma_fragment.png")
def fig_mma_fragment():
    """Who holds what in mma.sync.m16n8k8 TF32 (tf32_02), lane = 4g + t (g = lane / 4, t = lane % 4):
    A (16 x 8) a0 = A[g][t], a1 = A[g+8][t], a2 = A[g][t+4], a3 = A[g+8][t+4]; B (8 x 8) b0 = B[t][g],
    b1 = B[t+4][g]; C (16 x 8) c0 = C[g][2t], c1 = C[g][2t+1], c2 = C[g+8][2t], c3 = C[g+8][2t+1]. Each
    cell names its lane (T) and register; colour = register."""
    A, B, C = _mma_maps()
    regc = [OI["sky"], OI["orange"], OI["green"], OI["purple"]]
    fig = new_fig(9, 6.6, "mma.sync.m16n8k8 TF32 fragments: lane = 4g + t, g = lane / 4, t = lane % 4")
    specs = [("A  (16 × 8: m × k, row)", A, 16, 8, "a", [0.04, 0.04, 0.30, 0.84]),
             ("B  (8 × 8: k × n, col)", B, 8, 8, "b", [0.365, 0.50, 0.30, 0.40]),
             ("C / D  (16 × 8: m × n, fp32)", C, 16, 8, "c", [0.69, 0.04, 0.30, 0.84])]
    for title, M, nr, nc, rn, rect in specs:
        ax = grid_ax(fig, rect, (-2.2, nc + 0.2), (-1.6, nr + 0.3))
        ax.set_title(title, fontsize=9.5)
        for (r, c), (lane, reg) in M.items():
            box(ax, c, r, 1, 1, fc=regc[reg], lw=0.4, text=f"T{lane}\n{rn}{reg}", fs=6.2)
        for c in range(nc):
            text(ax, c + 0.5, -0.25, str(c), fs=6.5, color="#555555")
        for r in range(nr):
            text(ax, -0.15, r + 0.5, str(r), fs=6.5, ha="right", color="#555555")
        if rn == "a":
            brace_h(ax, 0, 4, -0.55, "k = t", below=False, fs=7.5)
            brace_h(ax, 4, 8, -0.55, "k = t + 4", below=False, fs=7.5)
            brace_v(ax, 0, 8, -1.0, "g", right=False, fs=8)
            brace_v(ax, 8, 16, -1.0, "g + 8", right=False, fs=8)
        elif rn == "b":
            brace_h(ax, 0, 8, -0.55, "n = g", below=False, fs=7.5)
            brace_v(ax, 0, 4, -1.0, "k = t", right=False, fs=8)
            brace_v(ax, 4, 8, -1.0, "t + 4", right=False, fs=8)
        else:
            brace_h(ax, 0, 8, -0.55, "n = 2t (even), 2t + 1 (odd)", below=False, fs=7.5)
            brace_v(ax, 0, 8, -1.0, "g", right=False, fs=8)
            brace_v(ax, 8, 16, -1.0, "g + 8", right=False, fs=8)
    note(fig, 0.385, 0.47,
         "D = A·B + C, one warp, 4 + 2 + 4\nregisters per lane.\n\n"
         "Lane 5 (g = 1, t = 1) holds\n  A[1][1], A[9][1], A[1][5], A[9][5],\n  B[1][1], B[5][1],\n"
         "  C[1][2], C[1][3], C[9][2], C[9][3].\n\n"
         "Checked against common/mma.cuh\n(mma_m16n8k8_tf32) and PTX ISA\n\"Matrix Fragments for mma.m16n8k8\"\n(.tf32). "
         "tf32_02_mma_sync.cu loads\na0..a3 with ldmatrix.x4 and b0, b1\nwith two LDS.32 (rows t, t + 4).", fs=8, wrap=False)
    return fig


@figure("sgemm/img/fig_ldmatrix.png")
def fig_ldmatrix():
    """ldmatrix.sync.aligned.m8n8.x4.b16 as tf32_02 uses it for one 16 x 8 TF32 fragment of A: four 8 x 8
    b16 matrices, each 8 rows of 16 bytes (4 TF32 words). Lanes 8q..8q+7 give the row addresses of
    matrix q (arrows on the left and right); word w of row i of matrix q lands in register r[q] of lane
    4i + w — exactly the mma fragment a[q]. One instruction instead of four LDS.32."""
    fig = new_fig(9, 6.4, "ldmatrix.x4 for a 16 × 8 TF32 fragment of A (tf32_02): addresses in, words out")
    qc = [OI["sky"], OI["orange"], OI["green"], OI["purple"]]
    ax = grid_ax(fig, [0.02, 0.06, 0.60, 0.84], (-5.5, 13.5), (-3.0, 17.6))
    A, _, _ = _mma_maps()
    for r in range(16):
        for c in range(8):
            q = (r // 8) + 2 * (c // 4)       # matrix: rows (q & 1)·8.., k chunk (q >> 1)
            i, w = r % 8, c % 4                # row in the matrix, word in the row
            lane = 4 * i + w
            assert A[(r, c)] == (lane, q)      # = the mma.m16n8k8 A fragment
            box(ax, c, r, 1, 1, fc=qc[q], lw=0.4, text=f"T{lane}\nr{q}", fs=6.3)
    for q in range(4):
        rows0 = (q & 1) * 8
        left = q < 2
        for i in range(8):
            lane = 8 * q + i
            y = rows0 + i + 0.5
            if left:
                text(ax, -2.0, y, f"lane {lane}", fs=6.8, ha="right", color=OI["dark"])
                arrow(ax, -1.9, y, -0.05, y, lw=0.6, ms=5, color=OI["dark"])
            else:
                text(ax, 10.0, y, f"lane {lane}", fs=6.8, ha="left", color=OI["dark"])
                arrow(ax, 9.9, y, 8.05, y, lw=0.6, ms=5, color=OI["dark"])
        box(ax, (q >> 1) * 4, rows0, 4, 8, ec="black", lw=1.8)
        ym = -0.6 if q in (0, 2) else 16.3
        text(ax, (q >> 1) * 4 + 2, ym, f"matrix {q}\nrows {rows0}–{rows0 + 7}, k {(q >> 1) * 4}–{(q >> 1) * 4 + 3}",
             fs=7, va="bottom" if q in (0, 2) else "top")
    for c in range(8):
        text(ax, c + 0.5, -0.3, f"k{c}", fs=6.5, color="#555555")
    text(ax, 4, -2.55, "a row of each matrix: 16 bytes = 8 b16 = 4 TF32 words", fs=7.5)
    text(ax, -2.8, 16.4, "row addresses\n(matrices 0, 1)", fs=7, ha="center", va="top")
    text(ax, 10.8, 16.4, "row addresses\n(matrices 2, 3)", fs=7, ha="center", va="top")
    note(fig, 0.64, 0.86,
         "ldmatrix.sync.aligned.m8n8.x4.shared.b16\n{r0, r1, r2, r3}, [addr]\n(common/mma.cuh, ldmatrix_x4)\n\n"
         "Addresses: lane 8q + i gives the start of\nrow i of matrix q (16-byte aligned).\n"
         "tf32_02: row = (lane >> 3 & 1)·8 + (lane & 7),\nk chunk = 2·kk + (lane >> 4), at\n"
         "As + a_swizzled(row, chunk) — the A tile\nstored row by row (K-major), 16-byte\n"
         "chunks XOR-swizzled (next figure).\n\n"
         "Data: word w of row i of matrix q goes to\nregister r[q] of lane 4i + w.\n\n"
         "With matrix q = rows (q & 1)·8 .. +7,\nk (q >> 1)·4 .. +3, r[q] is the mma\nfragment a[q]: A[g][t], A[g+8][t],\n"
         "A[g][t+4], A[g+8][t+4] (g = lane / 4,\nt = lane % 4); cell text: receiving lane\nand register.\n\n"
         "B needs b0 = B[t][g], b1 = B[t+4][g]\nfrom a k × n tile: ldmatrix's .trans\nmoves 16-bit halves, not TF32 words,\n"
         "so tf32_02 loads B with two LDS.32.", fs=8, wrap=False)
    return fig


@figure("sgemm/img/fig_swizzle_128b.png")
def fig_swizzle_128b():
    """The 128-byte swizzle: a tile of 128-byte rows, 8 chunks of 16 B each, chunk c of row r stored at
    chunk c ^ (r % 8). Unswizzled, the same logical chunk of 8 consecutive rows (what one ldmatrix phase
    or a wgmma read takes) sits in the same 4 banks: an 8-way conflict; swizzled, it lands in 8
    different chunk positions, i.e. 8 different bank groups. Colour and number = logical chunk."""
    rows, chunks, col = 8, 8, 2
    fig = new_fig(9, 5.0, "128-byte swizzle: physical chunk = logical chunk XOR (row % 8)")
    for p, swz in enumerate((False, True)):
        ax = grid_ax(fig, [0.03 + p * 0.34, 0.24, 0.31, 0.62], (-2.2, chunks + 0.2), (-2.0, rows + 0.3))
        ax.set_title("no swizzle: chunk c at c" if not swz else "swizzled: chunk c at c ^ (r % 8)", fontsize=9.5)
        for r in range(rows):
            for c in range(chunks):
                pc = c ^ (r % 8) if swz else c
                # tf32_02's formula in floats: r * 32 + ((chunk ^ (r & 7)) << 2)
                if swz:
                    assert (r * 32 + ((c ^ (r & 7)) << 2)) * 4 == r * 128 + pc * 16
                sel = c == col
                box(ax, pc, r, 1, 1, fc=CYCLE8[c], lw=2.0 if sel else 0.4, ec="black" if sel else OI["dark"],
                    text=str(c), fs=8, bold=sel, zorder=3 if sel else 1)
            text(ax, -0.2, r + 0.5, f"row {r}", fs=7.5, ha="right")
        for pc in range(chunks):
            text(ax, pc + 0.5, -0.45, f"{4 * pc}–\n{4 * pc + 3}", fs=6.3, color="#555555")
        text(ax, chunks / 2, -1.35, "banks of the physical chunk (16 B = 4 banks)", fs=7)
    # bank-group histogram
    axh = fig.add_axes([0.76, 0.36, 0.22, 0.45])
    for swz, off, color, label in ((False, -0.2, OI["red"], "no swizzle"), (True, 0.2, OI["blue"], "swizzled")):
        hits = [0] * 8
        for r in range(rows):
            hits[(col ^ (r % 8)) if swz else col] += 1
        axh.bar([g + off for g in range(8)], hits, width=0.4, color=color, label=label, edgecolor=OI["dark"], lw=0.4)
    axh.set_xticks(range(8))
    axh.set_xticklabels([f"{4 * g}-{4 * g + 3}" for g in range(8)], rotation=60, fontsize=7)
    axh.set_xlabel("bank group", fontsize=8)
    axh.set_ylabel(f"rows 0-7 of chunk {col}", fontsize=8)
    axh.set_title(f"chunk {col} of 8 rows:\n8-way conflict vs none", fontsize=9)
    axh.legend(fontsize=7.5, frameon=False)
    axh.spines[["top", "right"]].set_visible(False)
    note(fig, 0.03, 0.2,
         "A row is 128 bytes = 32 floats = 32 banks, so without a swizzle every row starts in bank 0. Outlined: logical chunk "
         f"{col} of rows 0-7 — the 8 row\npieces one ldmatrix 8 × 16-B matrix reads (tf32_02: As with a_swizzled(r, chunk) = "
         "r·32 + ((chunk ^ (r & 7)) << 2) floats).\nTMA's CU_TENSOR_MAP_SWIZZLE_128B writes the same pattern (tf32_03/04, "
         "tiles 1024-byte aligned; the wgmma descriptor's layout type 1 = 128-byte\nswizzle reads it back): the pattern "
         "repeats every 8 rows = 1024 bytes.", fs=8)
    return fig


@figure("sgemm/img/fig_tma_pipeline.png")
def fig_tma_pipeline():
    """tf32_04's producer/consumer pipeline over 4 stages: one producer thread waits until stage s is
    empty, arms full[s] with expect_tx (48 KB) and issues the TMA boxes; both consumer warp groups wait
    for full[s], run 4 wgmma m64n256k8 on it and arrive on empty[s] (one arrival per warp, 8 in all).
    Each barrier's phase parity flips every time the ring wraps; a fresh empty barrier lets the first
    round through. An idealised schedule (TMA latency 2.5 units, one k step of wgmmas 1 unit)."""
    S, ksteps, L, Cc = 4, 12, 2.5, 1.0
    I, F, St, R = {}, {}, {}, {}
    prod = 0.0
    for kt in range(ksteps):
        ready = R[kt - S] if kt >= S else 0.0  # empty[s] phase of round kt//S - 1 completed
        I[kt] = max(prod, ready)
        prod = I[kt] + 0.3
        F[kt] = I[kt] + L
        St[kt] = max(F[kt], R[kt - 1] if kt else 0.0)
        R[kt] = St[kt] + Cc
    fig = new_fig(9, 6.3, "TMA + mbarrier pipeline (tf32_04): 1 producer, 4 stages, 2 consumer warp groups")
    ax = fig.add_axes([0.16, 0.27, 0.82, 0.62])
    ylab = (["producer\n(WG 0, 1 thread)"] + [f"stage {s}" for s in range(S)] +
            ["consumer WG 1\n(tile n 0–63)", "consumer WG 2\n(tile n 64–127)"])
    for kt in range(ksteps):
        s, rnd = kt % S, kt // S
        par = rnd & 1
        # producer: wait empty (parity par ^ 1), expect_tx, TMA
        ax.plot([I[kt]], [0], marker="v", color=OI["blue"], ms=7)
        ax.text(I[kt], -0.28, f"{kt}", ha="center", fontsize=7, color=OI["blue"])
        # stage row: filling, full/waiting, being read
        y = 1 + s
        ax.barh(y, F[kt] - I[kt], left=I[kt], height=0.55, color=OI["sky"], hatch="///", edgecolor=OI["dark"], lw=0.4)
        ax.text((I[kt] + F[kt]) / 2, y, f"TMA kt {kt}", ha="center", va="center", fontsize=6.5,
                bbox=dict(facecolor="white", edgecolor="none", pad=0.3, alpha=0.8))
        if St[kt] > F[kt]:
            ax.barh(y, St[kt] - F[kt], left=F[kt], height=0.55, color=OI["lightgrey"], edgecolor=OI["dark"], lw=0.4)
        ax.barh(y, R[kt] - St[kt], left=St[kt], height=0.55, color=OI["orange"], edgecolor=OI["dark"], lw=0.4)
        # full[s] completes (TMA bytes + producer arrival): phase `rnd` done, consumers wait parity par
        ax.plot([F[kt]], [y - 0.36], marker="v", color=OI["green"], ms=6)
        ax.text(F[kt], y - 0.52, f"F{par}", ha="center", fontsize=6.3, color=OI["green"])
        # empty[s] completes (8 consumer warps arrived)
        ax.plot([R[kt]], [y + 0.36], marker="^", color=OI["red"], ms=6)
        ax.text(R[kt], y + 0.62, f"E{par}", ha="center", fontsize=6.3, color=OI["red"])
        for c in (5, 6):
            ax.barh(c, R[kt] - St[kt], left=St[kt], height=0.55, color=OI["orange"], edgecolor=OI["dark"], lw=0.4)
            ax.text((St[kt] + R[kt]) / 2, c, f"kt {kt}\ns{s}", ha="center", va="center", fontsize=6.2)
    for s in range(S):
        ax.annotate("", xy=(I[s + S], 0.12), xytext=(R[s], 1 + s - 0.3),
                    arrowprops=dict(arrowstyle="->", color=OI["red"], lw=0.7, ls=":"))
    ax.set_yticks(range(len(ylab)))
    ax.set_yticklabels(ylab, fontsize=8)
    ax.set_ylim(len(ylab) - 0.4, -0.7)
    ax.set_xlim(-0.3, R[ksteps - 1] + 0.3)
    ax.set_xticks([])
    ax.set_xlabel("time →")
    ax.spines[["top", "right"]].set_visible(False)
    legend_patches(ax, [("TMA writing the stage", OI["sky"], "///"), ("full, not yet read", OI["lightgrey"], None),
                        ("wgmma reading it", OI["orange"], None)], loc="upper center", ncol=3,
                   bbox_to_anchor=(0.5, 1.09), fs=8)
    note(fig, 0.02, 0.21,
         "tf32_04_wgmma_specialized.cu, 256x128x32_s4: stage = A box 256 × 32 + 4 B boxes 32 × 32 = 48 KB. "
         "Producer (blue ▼ kt): mbarrier_wait(empty[s], phase ^ 1) — round 0 waits for parity 1,\n"
         "which a fresh barrier counts as done — then arrive_expect_tx(full[s], 48 KB) and 5 TMA loads. full[s] "
         "(init count 1) completes when the bytes have landed (green ▼ F0/F1 = phase parity);\n"
         "consumers mbarrier_wait(full[s], phase), load B's fragments (LDS.32), 4 × wgmma m64n256k8, wait_group 0, then "
         "lane 0 of each of the 8 consumer warps arrives on empty[s]\n(init count 8; red ▲ E0/E1); the dotted "
         "arrows: that completion lets the producer refill the stage with kt + 4. s and phase advance together: "
         "phase ^= 1 when s wraps to 0.", fs=7.8)
    return fig


@figure("sgemm/img/fig_warpgroup_wgmma.png")
def fig_warpgroup_wgmma():
    """A warp group is 4 consecutive warps (128 threads) that issue one wgmma.m64nNk8 together: the 64 x N
    fp32 accumulator is split 16 rows per warp, and inside a warp's 16 rows lane 4g + t holds, for every
    8 columns j, D[16w + g][8j + 2t, +1] and D[16w + g + 8][8j + 2t, +1]. B always comes from shared
    memory through a descriptor; A from shared memory too (tf32_03) or from registers (tf32_04)."""
    N = 128
    fig = new_fig(9, 7.0, "wgmma.m64nNk8 (Hopper): one warp group, 64 × N accumulators in 128 threads' registers")
    wc = [OI["sky"], OI["orange"], OI["green"], OI["purple"]]
    ax = grid_ax(fig, [0.01, 0.30, 0.52, 0.62], (-15, 66), (-13, 67))
    sc_n = 64 / N  # N columns drawn in 64 units
    box(ax, 0, -10, 64, 8, fc=OI["lightgrey"], lw=0.8, text="B: 8 × N — shared memory, via descriptor\n"
        "(K-major rows of 128 B, 128-byte swizzle)", fs=7.5)
    for w in range(4):
        box(ax, -10, 16 * w, 8, 16, fc=wc[w], lw=0.6, alpha=0.6, text="16 × 8", fs=6.5)
    text(ax, -11, 32, "A: 64 × 8 — shared memory (tf32_03)\nor registers (tf32_04: warp w holds rows 16w…16w+15)",
         fs=7, rotation=90, ha="right")
    for w in range(4):
        box(ax, 0, 16 * w, 64, 16, fc=wc[w], lw=0.8, alpha=0.75)
        for j in range(0, N // 8):
            box(ax, j * 8 * sc_n, 16 * w, 8 * sc_n, 16, ec="white", lw=0.3)
        text(ax, 32, 16 * w + 8, f"warp {w} of the group (threads {32 * w}–{32 * w + 31})\nD rows {16 * w}–{16 * w + 15}",
             fs=7.8, bbox=dict(facecolor="white", edgecolor="none", alpha=0.7, pad=1))
    box(ax, 0, 16, 8 * sc_n, 16, ec="black", lw=2.0, zorder=5)
    text(ax, 32, 64.8, f"D: 64 × N fp32; one column block = 8 columns (j)\nN = {N} in tf32_03: 64 registers a thread; "
         "N = 256 in tf32_04: 128", fs=7.5, va="top")
    # zoom: warp 1, columns 0..7
    ax2 = grid_ax(fig, [0.57, 0.30, 0.41, 0.53], (-2.4, 8.1), (-1.9, 16.1), equal=False)
    ax2.set_title("zoom: warp w = 1, columns 0–7 (j = 0); cell: lane T, register\n"
                  "D[16w + g][8j + 2t + e] = d[4j + e]\nD[16w + g + 8][8j + 2t + e] = d[4j + 2 + e]\n"
                  "g = lane / 4, t = lane % 4, e = 0, 1  (common/wgmma.cuh)", fontsize=8)
    for lane in range(32):
        g, t = lane // 4, lane % 4
        for reg, (r, c) in enumerate([(g, 2 * t), (g, 2 * t + 1), (g + 8, 2 * t), (g + 8, 2 * t + 1)]):
            box(ax2, c, r, 1, 1, fc=wc[1], lw=0.3, text=f"T{lane} d{reg}", fs=6.5)
    brace_v(ax2, 0, 8, -0.6, "g\n(rows 16–23)", right=False, fs=7.5)
    brace_v(ax2, 8, 16, -0.6, "g + 8\n(rows 24–31)", right=False, fs=7.5)
    for c in range(8):
        text(ax2, c + 0.5, -0.4, f"{c}", fs=7, color="#555555")
    text(ax2, 4, -1.2, "column 8j + 2t + e", fs=7.5)
    note(fig, 0.02, 0.255,
         "tf32_03_wgmma_tma.cu: 2 warp groups per 128 × 128 tile, 64 rows each; wgmma m64n128k8, A and Bᵀ both from "
         "shared memory (K-major, 128-byte-swizzle descriptors, +32 B per k8 slice).\n\n"
         "tf32_04_wgmma_specialized.cu: WG 0 produces (TMA), WG 1 and WG 2 consume; wgmma m64n256k8 with A from "
         "registers, computing Cᵀ: wgmma-A = 64 n-rows of B (4 LDS.32 per k8, the m16n8k8 a-fragment layout in each "
         "warp), wgmma-B = A's 256 × 32 tile in shared memory (descriptor).\n\n"
         "The four warps are consecutive, the first warp index a multiple of 4 (warps 4–7 form the second group). The "
         "instruction is asynchronous: wgmma.fence before the first, commit_group after the batch, wait_group before the "
         "accumulators are read or the shared tiles overwritten. TF32 wgmma reads only K-major operands from shared "
         "memory: tf32_03 transposes B first, tf32_04 swaps the operands (registers can be filled from any layout).",
         fs=7.9)
    return fig


# ====================================================================================================
# avg_matvec
# ====================================================================================================

@figure("avg_matvec/img/fig_block_per_batch.png")
def fig_block_per_batch():
    """Who computes what in step 01 (<<<1, L>>>: thread j of the one block averages row j of batch k,
    for k = 0, 1, ..., N - 1 in turn) and step 02 (<<<N, L>>>: block k = blockIdx.x takes batch k,
    its thread j row j), and what the SMs do over time on a toy GPU of 8 SMs with N = 20 batches:
    in step 01 one SM works through the 20 batches while the other 7 idle (a grid of one block, 0 full
    waves), in step 02 the 20 blocks go through the 8 SMs in 2.5 waves. The chapter's run: 132 SMs
    (H100), N = 1,024 blocks of L = 512 threads at the default. Look at how long each SM is busy. An
    idealised picture: every batch takes the same time, and an SM runs one block at a time."""
    sms, N = 8, 20                      # the toy GPU and grid
    real_sms, real_N, real_L = 132, 1024, 512
    smem = real_L * 8                   # L doubles of shared memory a block (the launch's a.L * sizeof(double))
    rows = ["0", "1", "⋮", "j", "⋮", "L−1"]
    jrow = rows.index("j")
    shown = ["0", "1", "2", None, "N−1"]  # batches drawn (None: the ellipsis)

    fig = new_fig(10.5, 8.0, "avg_matvec 01 → 02: who computes what, and what the SMs do")

    def block_column(ax, x, y0, colour, label):
        for r, name in enumerate(rows):
            box(ax, x, y0 + r, 1.0, 1.0, fc=colour, text=name, fs=6.5, lw=0.5 if r != jrow else 1.4,
                ec=OI["dark"] if r != jrow else "black")
        text(ax, x + 0.5, y0 - 0.45, label, fs=7.5)

    def batch(ax, x, y0, colour, k):
        for r in range(len(rows)):
            box(ax, x, y0 + r, 2.6, 1.0, fc=colour, lw=0.4 if r != jrow else 1.4,
                ec=OI["dark"] if r != jrow else "black", alpha=1.0)
        text(ax, x + 1.3, y0 + len(rows) + 0.45, f"batch {k}", fs=7.5)

    # (a) left: step 01, one block, the batches in a loop.
    y0 = 1.0
    ax = grid_ax(fig, [0.02, 0.63, 0.47, 0.28], (-0.4, 24.4), (-2.2, 10.4), equal=False)
    text(ax, -0.3, -1.9, "step 01  <<<1, L>>>: one block, the N batches in a loop", fs=9.5, ha="left",
         fontweight="bold")
    block_column(ax, 0, y0, OI["orange"], "block 0")
    xs = [2.0, 6.6, 11.2, 15.3, 18.8]
    for x, k in zip(xs, shown):
        if k is None:
            text(ax, x + 0.6, y0 + 3, "…", fs=14)
            continue
        batch(ax, x, y0, OI["orange"], k)
    for r in range(len(rows)):
        arrow(ax, 1.0, y0 + r + 0.5, xs[0], y0 + r + 0.5, lw=0.6, ms=5)
    loop_y = y0 + len(rows) + 1.4
    arrow(ax, xs[0] + 1.3, loop_y, xs[-1] + 1.3, loop_y, lw=1.0, ms=8, color=OI["red"])
    text(ax, (xs[0] + xs[-1]) / 2 + 1.3, loop_y + 0.75,
         "for (k = 0; k < N; ++k): one batch after another, all by block 0", fs=7.5, color=OI["red"])

    # (a) right: step 02, block k takes batch k.
    ax2 = grid_ax(fig, [0.51, 0.63, 0.47, 0.28], (-0.4, 24.4), (-2.2, 10.4), equal=False)
    text(ax2, -0.3, -1.9, "step 02  <<<N, L>>>: block k = blockIdx.x takes batch k", fs=9.5, ha="left",
         fontweight="bold")
    xs2 = [0.0, 4.9, 9.8, 14.9, 19.2]
    for x, k in zip(xs2, shown):
        if k is None:
            text(ax2, x + 0.6, y0 + 3, "…", fs=14)
            continue
        block_column(ax2, x, y0, OI["sky"], f"block {k}")
        batch(ax2, x + 1.9, y0, OI["sky"], k)
        for r in range(len(rows)):
            arrow(ax2, x + 1.0, y0 + r + 0.5, x + 1.9, y0 + r + 0.5, lw=0.6, ms=4)
    text(ax2, 12.0, loop_y + 0.4, "N blocks, all launched at once; no loop over k", fs=7.5, color=OI["blue"])

    note(fig, 0.03, 0.615,
         "In both steps thread j (outlined) averages row j of its batch, M consecutive doubles, into v[j]; then "
         "the block computes the batch's column of out, W · v, one element after another with a shared-memory "
         "sweep. Step 02 keeps the loop body as it was and takes the loop apart.", fs=8, width=0.94)

    # (b) the SMs over time: the toy GPU, both steps on one time axis.
    idle = OI["lightgrey"]
    rows01 = [(f"SM {s}", [(str(k), k, 1, OI["orange"]) for k in range(N)] if s == 0 else
               [("idle", 0, N, idle)], s) for s in range(sms)]
    rows02 = []
    for s in range(sms):
        bars = [(str(b), b // sms, 1, OI["sky"]) for b in range(s, N, sms)]
        end = len(bars)
        waves = math.ceil(N / sms)
        if end < waves:
            bars.append(("idle", end, waves - end, idle))
        rows02.append((f"SM {s}", bars, s))
    waves = N / sms
    ax3 = fig.add_axes([0.09, 0.345, 0.88, 0.18])
    timeline_rows(ax3, rows01, (sms - 0.4, -0.6), (0, N + 0.3), "")
    ax3.set_title(f"step 01 on a toy GPU of {sms} SMs, N = {N}: SM 0 runs block 0 through batches 0 … {N - 1}; "
                  f"the other {sms - 1} idle (a grid of 1 block: 0 full waves)", fontsize=9, loc="left")
    ax3.set_xticks(range(0, N + 1, 2))
    ax4 = fig.add_axes([0.09, 0.075, 0.88, 0.18])
    timeline_rows(ax4, rows02, (sms - 0.4, -0.6), (0, N + 0.3), "time, in batches of one block (idealised: "
                  "every batch takes the same time, an SM runs one block at a time)")
    ax4.set_title(f"step 02, same GPU and N: each block to the next free SM; {N} blocks on {sms} SMs are "
                  f"{waves:g} waves", fontsize=9, loc="left")
    ax4.set_xticks(range(0, N + 1, 2))
    full = N // sms
    ax4.set_ylim(sms - 0.4, -1.5)
    for w in range(math.ceil(waves)):
        ax4.text(w + 0.5, -1.0, f"wave {w + 1}", ha="center", va="center", fontsize=7)
    ax4.axvline(math.ceil(waves), color=OI["dark"], ls="--", lw=0.8)
    left = 0.09 + 0.88 * (math.ceil(waves) + 0.4) / (N + 0.3)
    note(fig, left, 0.235,
         f"All {N} batches are done after {math.ceil(waves)} batch times: {full} full waves and a last one of "
         f"{N - full * sms} blocks, with {sms - (N - full * sms)} SMs idle. Step 01 takes {N}.\n\n"
         f"The chapter's run: the H100's {real_sms} SMs and N = {real_N:,} batches (the default). Step 01 keeps one "
         f"SM busy and {real_sms - 1} idle for the whole run (Nsight Compute: \"0.0 full waves\"). Step 02 "
         f"launches {real_N:,} blocks of L = {real_L} threads and L doubles ({smem:,} bytes) of shared memory, "
         f"about {real_N / real_sms:.1f} per SM; a real SM runs several blocks at once (as many as its threads, "
         "registers and shared memory allow, and the registers are the compiler's choice), so the real waves "
         "are several blocks deep, and blocks sharing an SM share its time and the memory bandwidth.",
         fs=8, width=0.96 - left)
    assert N % sms != 0 and full == 2
    return fig


@figure("avg_matvec/img/fig_row_access.png")
def fig_row_access():
    """One warp-wide load of the averaging in step 02 (thread j reads row j, element i, rows M = 512
    doubles apart) against step 03 (lane l reads element l of one row). Step 02's request touches 32
    sectors, one per row, and uses 8 bytes of each; but each sector also holds the row's next three
    doubles, which the thread reads at i + 1, i + 2 and i + 3, from L1 if the sector is still there.
    Step 03's request touches 8 sectors and uses all of them. Look at the sectors per request (32 against
    8) and at the bytes that leave L2 (about the same): why fixing the coalescing bought 4%."""
    M, lanes, dbl, sector = 512, 32, 8, 32       # the default M; a warp; bytes per double and sector
    per_sector = sector // dbl                   # 4 doubles
    i = 0                                        # the iteration drawn (i % 4 == 0: a sector's first double)
    step02 = [(j * M + i) * dbl for j in range(lanes)]   # byte offsets of warp 0's load, batch 0
    step03 = [(0 * M + l) * dbl for l in range(lanes)]
    s02, s03 = {a // sector for a in step02}, {a // sector for a in step03}
    assert len(s02) == 32 and len(s03) == 8
    shown = 12  # doubles of each row drawn

    fig = new_fig(9.6, 6.2, "avg_matvec: the sectors one warp-wide load of the averaging touches")

    # Step 02: 32 rows, element i of each.
    ax = grid_ax(fig, [0.02, 0.30, 0.50, 0.60], (-3.2, shown + 0.6), (-1.6, lanes + 1.8), equal=False)
    text(ax, -3.0, -1.0, "step 02: thread j reads row j, element i", fs=9.5, ha="left", fontweight="bold")
    for j in range(lanes):
        text(ax, -0.3, j + 0.5, f"row {j}" if j % 4 == 0 or j == lanes - 1 else "", fs=6.5, ha="right")
        for e in range(shown):
            used = e == i
            later = i < e < i + per_sector
            box(ax, e, j + 0.08, 1, 0.84, fc=OI["orange"] if used else (OI["yellow"] if later else "white"),
                lw=0.3)
        for s0 in range(0, shown, per_sector):
            box(ax, s0, j + 0.08, per_sector, 0.84, ec="black", lw=0.9 if s0 == 0 else 0.4)
    brace_h(ax, 0, per_sector, lanes + 0.1, "32 sectors,\none per row", fs=7.5)
    text(ax, shown + 0.5, lanes + 0.9, f"rows of M = {M} doubles ({M * dbl:,} B);\nthe first {shown} drawn", fs=7,
         ha="right", color=OI["dark"])

    # Step 03: one row, 32 consecutive doubles.
    ax2 = grid_ax(fig, [0.55, 0.62, 0.43, 0.24], (-0.6, lanes + 0.6), (-1.8, 3.6), equal=False)
    text(ax2, -0.5, -1.2, "step 03: lane l reads element l of one row", fs=9.5, ha="left", fontweight="bold")
    for l in range(lanes):
        box(ax2, l, 0.2, 1, 1.0, fc=OI["orange"], lw=0.3)
    for s0 in range(0, lanes, per_sector):
        box(ax2, s0, 0.2, per_sector, 1.0, ec="black", lw=1.0)
    brace_h(ax2, 0, lanes, 1.4, "8 sectors, every byte used", fs=7.5)

    # Per request: fetched and used bytes.
    axb = fig.add_axes([0.62, 0.12, 0.30, 0.36])
    fetched = [sector * len(s02), sector * len(s03)]
    used = [lanes * dbl, lanes * dbl]
    axb.bar([0, 1], used, color=OI["orange"], edgecolor=OI["dark"], label="used by this load")
    axb.bar([0], [fetched[0] - used[0]], bottom=[used[0]], color=OI["yellow"], edgecolor=OI["dark"],
            label="rest of the sectors:\nread at i + 1 .. i + 3,\nfrom L1 if still there")
    for x, (f_, n) in enumerate(zip(fetched, [len(s02), len(s03)])):
        axb.text(x, f_ + 30, f"{n} sectors, {f_:,} B", ha="center", fontsize=8)
    axb.set_xticks([0, 1])
    axb.set_xticklabels(["step 02", "step 03"])
    axb.set_ylabel("bytes fetched per warp-wide load")
    axb.set_ylim(0, 1250)
    axb.legend(fontsize=7.5, frameon=False, loc="upper right", bbox_to_anchor=(1.05, 1.0))
    axb.spines[["top", "right"]].set_visible(False)

    note(fig, 0.03, 0.25,
         "Orange: the double each thread loads now. Yellow: the rest of its sector, which step 02's thread "
         "loads in the next three iterations. Nsight Compute counts step 02's requests at 20 sectors on "
         "average (its loads of W, consecutive doubles, take 8), step 03's at 8; yet the sectors read from "
         "L2 by the SMs are practically equal (5.39 M and 5.43 M at N = 64): step 02's yellow doubles mostly "
         "come from L1. Uncoalesced loads here cost L1 work and longer waits per load, not more bytes from "
         "L2 or DRAM.", fs=8, width=0.55)
    return fig



@figure("avg_matvec/img/fig_matvecs_as_gemm.png")
def fig_matvecs_as_gemm():
    """Step 04 against step 05 at the default sizes (L = 512, N = 1024). Step 04: block k multiplies
    all of W by its own mean vector v_k, so W (2 MiB) is loaded once per batch, 1,024 times, 2 GiB in
    all, as many bytes as the input. Step 05: the N mean vectors are the columns of one L x N matrix
    Vt, and the N mat-vecs are one matrix product, out = W Vt, which cuBLAS computes in tiles kept on
    chip: each element of W is loaded once per band of many columns of Vt, not once per column. Look
    at how often each step loads W."""
    L, N, M, dbl = 512, 1024, 512, 8
    w_bytes = L * L * dbl
    fig = new_fig(9.6, 4.2, "avg_matvec: N mat-vecs with one W are one matrix product")

    # Left: step 04, a few blocks each with the whole W and one vector.
    ax = grid_ax(fig, [0.02, 0.26, 0.46, 0.62], (-0.5, 15.5), (-1.6, 7.6))
    text(ax, -0.4, -1.0, "step 04: block k computes W · v_k", fs=9.5, ha="left", fontweight="bold")
    for b, x0 in enumerate([0, 5, 11]):
        label = ["k = 0", "k = 1", "k = N − 1"][b]
        box(ax, x0, 0.5, 3, 3, fc=OI["sky"], text="W", fs=9)
        box(ax, x0 + 3.3, 0.5, 0.5, 3, fc=OI["orange"])
        text(ax, x0 + 3.55, 3.9, "v", fs=8)
        text(ax, x0 + 1.9, 4.6, f"block {label}", fs=8)
    text(ax, 9.4, 2.0, "…", fs=14)
    text(ax, 7.5, 6.6, f"W ({w_bytes / 2**20:.0f} MiB) loaded {N:,} times: {N * w_bytes / 2**30:.0f} GiB\n(the input is "
         f"{N * L * M * dbl / 2**30:.0f} GiB)", fs=8.5, color=OI["red"])

    # Right: step 05, one GEMM.
    ax2 = grid_ax(fig, [0.52, 0.26, 0.46, 0.62], (-0.5, 15.5), (-1.6, 7.6))
    text(ax2, -0.4, -1.0, "step 05: out = W · Vᵀ, one DGEMM", fs=9.5, ha="left", fontweight="bold")
    box(ax2, 0, 0.5, 4, 4, fc=OI["sky"], text="W\nL × L", fs=9)
    text(ax2, 4.6, 2.5, "·", fs=16)
    for k in range(6):
        box(ax2, 5.2 + 0.5 * k, 0.5, 0.5, 4, fc=OI["orange"], lw=0.4)
    text(ax2, 6.7, 5.3, "Vᵀ: L × N (the N\nmean vectors)", fs=7.5)
    text(ax2, 8.8, 2.5, "=", fs=14)
    box(ax2, 9.4, 0.5, 3, 4, fc=OI["green"], text="out\nL × N", fs=9)
    # a tile of the product
    box(ax2, 9.4, 0.5, 1.0, 1.0, ec="black", lw=1.6, zorder=4)
    box(ax2, 0, 0.5, 4, 1.0, ec="black", lw=1.2, ls="--", zorder=4)
    box(ax2, 5.2, 0.5, 1.0, 4, ec="black", lw=1.2, ls="--", zorder=4)
    text(ax2, 7.5, 6.6, "each element of W loaded once per band of\nmany columns of Vᵀ, reused on chip",
         fs=8.5, color=OI["green"])
    note(fig, 0.03, 0.19,
         "Dashed: the row band of W and the column band of Vᵀ that one output tile (black) needs; a GEMM keeps "
         "such bands in shared memory and registers and uses every loaded element of W for many columns at once. "
         "Step 04 repeats the loads, multiplies and shuffles of W for every batch; in both steps the averaging "
         "streams the 2 GiB input once.", fs=8, width=0.94)
    return fig


def timeline_rows(ax, rows, ylim, xlim, xlabel):
    """Horizontal bars of named spans, one row each: rows are (label, [(name, start, length,
    colour)], y); the avg_matvec timelines."""
    for _, bars, y in rows:
        for name, start, dur, colour in bars:
            ax.barh(y, dur, left=start, height=0.6, color=colour, edgecolor=OI["dark"], lw=0.5)
            ax.text(start + dur / 2, y, name, ha="center", va="center", fontsize=7.5,
                    color="white" if colour in (OI["purple"], OI["red"]) else "black")
    ax.set_yticks([y for _, _, y in rows])
    ax.set_yticklabels([r[0] for r in rows], fontsize=8.5)
    ax.set_ylim(*ylim)
    ax.set_xlim(*xlim)
    ax.set_xlabel(xlabel)
    ax.spines[["top", "right"]].set_visible(False)


@figure("sgemm/img/fig_stream_k.png")
def fig_stream_k():
    """Whole tiles against stream-K and against the last wave cut in k, on a toy GPU of 6 SMs with 9
    tiles of 8 k steps each (1.5 waves; step 04 at 8192³ has 2,048 tiles on 132 SMs, 15.5 waves).
    Whole tiles: the second wave keeps 3 SMs busy and 3 idle, and at any moment every SM is at the
    same k step of its tile, so the tiles in work read the same k slice of A and B and L2 serves it
    once. Stream-K: the 72 k steps are cut into 6 ranges of 12; a range starts inside one tile and
    ends inside another, and the SM holding a split tile's first k steps adds the other piece's
    partial sums (arrows) before storing C. No SM idles, but at any moment the SMs are at different
    k steps of their tiles. The last wave cut in k (_tail): the first wave whole, then the 3 leftover
    tiles in halves on neighbouring SMs, each first half adding the second's sums: no SM idles, and
    the SMs stand at two k positions. A schematic in k steps, not a measurement."""
    sms, tiles, K = 6, 9, 8
    colours = [OI["orange"], OI["sky"], OI["green"], OI["yellow"], OI["blue"], OI["red"], OI["purple"],
               "#999999", OI["lightgrey"]]

    def piece(tile, k0, k1, t0):
        return (f"tile {tile}, k {k0}-{k1 - 1}" if k1 - k0 < K else f"tile {tile}", t0, k1 - k0, colours[tile])

    whole = [[] for _ in range(sms)]
    for tile in range(tiles):
        whole[tile % sms].append(piece(tile, 0, K, (tile // sms) * K))
    share = tiles * K // sms
    streamk = [[] for _ in range(sms)]
    sk_splits = []  # (sm holding the later piece, its end time, sm holding the first k steps, its end time)
    for sm in range(sms):
        pos, t = sm * share, 0
        while pos < (sm + 1) * share:
            tile, k0 = divmod(pos, K)
            k1 = min(K, k0 + (sm + 1) * share - pos)
            streamk[sm].append(piece(tile, k0, k1, t))
            if k0 > 0:
                sk_splits.append((sm, t + k1 - k0, sm - 1, share))
            t += k1 - k0
            pos += k1 - k0
    parts = 2  # tail_parts_of(9, 6, 8): halves end the 3 leftover tiles in one round of 1/2
    tail = [[] for _ in range(sms)]
    tail_splits = []
    for tile in range(sms):
        tail[tile].append(piece(tile, 0, K, 0))
    for p in range((tiles - sms) * parts):
        tile, part = sms + p // parts, p % parts
        k0, k1 = part * K // parts, (part + 1) * K // parts
        tail[p % sms].append(piece(tile, k0, k1, K + (p // sms) * (K // parts)))
        if part > 0:
            tail_splits.append((p % sms, K + K // parts, p % sms - part, K + K // parts))
    fig = new_fig(10.5, 9.0, "The last wave: 9 tiles of 8 k steps on 6 SMs")
    panels = [("whole tiles (step 04's default)", whole, 2 * K, [], 3),
              ("stream-K (the _sk variant)", streamk, share, sk_splits, 3),
              ("the last wave's tiles cut in k (the _tail variant)", tail, K + K // parts, tail_splits, 9)]
    for i, (title, rows_of, end, splits, at) in enumerate(panels):
        ax = fig.add_axes([0.1, 0.73 - 0.255 * i, 0.86, 0.19])
        rows = [(f"SM {sm}", rows_of[sm], sm) for sm in range(sms)]
        timeline_rows(ax, rows, (sms - 0.4, -0.6), (0, 2 * K + 0.3), "time, in k steps of one SM")
        ax.set_title(title, fontsize=9.5, loc="left")
        ax.axvline(at + 0.5, color=OI["dark"], ls="--", lw=0.8)
        ks = []
        for sm in range(sms):
            for name, t0, dur, _ in rows_of[sm]:
                if t0 <= at < t0 + dur:
                    k0 = int(name.split("k ")[1].split("-")[0]) if "k " in name else 0
                    ks.append(k0 + at - t0)
        ax.text(at + 0.7, -0.5, "k steps now: " + ", ".join(str(k) for k in ks), fontsize=8, va="center")
        if end < 2 * K:
            ax.axvspan(end, 2 * K, color=OI["lightgrey"], alpha=0.5, lw=0)
            ax.text(end + 0.2, sms - 1, f"done at {end}", fontsize=8, va="center")
        else:
            ax.text(K + 0.2, sms - 1.5, "3 SMs idle", fontsize=8, va="center")
        for later, t_later, first, t_first in splits:
            arrow(ax, t_later - 0.1, later - 0.25, t_first - 0.3, first + 0.25, lw=0.8, ms=6)
    note(fig, 0.03, 0.115,
         "Whole tiles leave half the SMs idle in the last wave, but every SM is at the same k step: the "
         "tiles in work read one k slice of A and B together. Stream-K removes the idle half-wave, and "
         "the SMs then read different k slices: in step 04 at 4096³ the L2 hit rate fell from 83% to "
         "54% and the kernel ran 78% longer. Cutting only the last wave's tiles keeps the whole waves "
         "as they were and puts the SMs at a few k positions in the tail; in step 04 at 8192³ (68 "
         "tiles in thirds) the SMs ended together, the pieces ran slower, and the launch took as many "
         "cycles.", fs=8, width=0.94)
    return fig


@figure("sgemm/img/fig_dynamic_tail.png")
def fig_dynamic_tail():
    """Whole tiles handed out by the hardware against step 12's dynamic tail, on a toy GPU of 6 SMs of
    which two (SMs 2 and 3) run the tile loop 1.35 times slower, with 11 tiles of 8 k steps (one block
    slot per SM: a wave of 6 and a tail of 5). Whole tiles: each SM takes the next tile when it is
    free; the slow SMs take a tile of the last wave late and the launch waits for it. The dynamic
    tail: the first wave whole, then the 5 tail tiles in 4 pieces of 2 k steps each, taken from a
    counter by whichever SM is free: the slow SMs take fewer, and every SM ends within about a piece
    of the others; the last piece of a tile to finish (its number marked +) adds the tile's partials. Step 12 at
    4096³ cuts 116 tiles in 8 pieces for 132 SMs; 4 here keep the picture legible. A schematic in k
    steps of a fast SM, not a measurement."""
    sms, tiles, K, slow, factor, parts = 6, 11, 8, (2, 3), 1.35, 4
    colours = [OI["orange"], OI["sky"], OI["green"], OI["yellow"], OI["blue"], OI["red"], OI["purple"],
               "#999999", OI["lightgrey"], "#8FD0B8", "#F4C27A"]
    speed = [factor if sm in slow else 1.0 for sm in range(sms)]

    def greedy(work):  # work: (tile, k0, k1) in the order handed out; returns rows and the end time
        free = [0.0] * sms
        rows = [[] for _ in range(sms)]
        ends = {}
        for tile, k0, k1 in work:
            sm = min(range(sms), key=lambda i: (free[i], i))
            dur = (k1 - k0) * speed[sm]
            name = f"{tile}"
            rows[sm].append([name, free[sm], dur, colours[tile], tile])
            free[sm] += dur
            ends.setdefault(tile, []).append((free[sm], sm, len(rows[sm]) - 1))
        for tile, pieces in ends.items():  # the piece that finishes last adds the partials
            if len(pieces) > 1:
                _, sm, i = max(pieces)
                rows[sm][i][0] = f"{tile}+"
        return rows, max(free)

    whole, whole_end = greedy([(t, 0, K) for t in range(tiles)])
    full = tiles - tiles % sms
    step = K // parts
    cut_work = [(t, 0, K) for t in range(full)]
    cut_work += [(t, p * step, (p + 1) * step) for t in range(full, tiles) for p in range(parts)]
    cut, cut_end = greedy(cut_work)
    fig = new_fig(10.5, 6.6, "The last wave when some SMs are slower: whole tiles against pieces")
    xmax = max(whole_end, cut_end) + 1.5
    panels = [("whole tiles, each to the next free SM (step 09's kernel)", whole, whole_end),
              (f"step 12: the first wave whole, the last {tiles - full} tiles in {parts} pieces of k from a "
               "counter", cut, cut_end)]
    for i, (title, rows_of, end) in enumerate(panels):
        ax = fig.add_axes([0.1, 0.6 - 0.37 * i, 0.86, 0.28])
        rows = [(f"SM {sm}" + (" (slow)" if sm in slow else ""), [tuple(b[:4]) for b in rows_of[sm]], sm)
                for sm in range(sms)]
        timeline_rows(ax, rows, (sms - 0.4, -0.6), (0, xmax), "time, in k steps of a fast SM")
        ax.set_title(title, fontsize=9.5, loc="left")
        ax.axvline(end, color=OI["dark"], ls="--", lw=0.8)
        ax.text(end + 0.2, -0.3, f"ends at {end:.1f}", fontsize=8, va="center")
    note(fig, 0.03, 0.085,
         f"Whole tiles: the launch ends when the slow SM that took the last tile finishes it, {whole_end:.1f} "
         f"k steps in; pieces: at {cut_end:.1f}, the slow SMs having taken fewer of them. Each piece carries "
         "its tile's number; a + marks the piece that finishes its tile last and adds the tile's partials "
         "in slice order.",
         fs=8, width=0.94)
    return fig


@figure("avg_matvec/img/fig_launch_timeline.png")
def fig_launch_timeline():
    """An idealised timeline of one call of step 06 against one of step 07 at a launch-bound size: the
    host thread above, the GPU's stream below. call_ms runs from the start event to the end event on
    the GPU; kernel_ms is only the time the kernels run. In 06 the GPU waits for each launch: the host
    enqueues the averaging kernel, then cuBLAS checks its arguments, picks a DGEMM and enqueues it,
    and the first kernel is long done. In 07 the host makes one cudaGraphLaunch, and both kernels
    arrive together. A schematic, not a measurement: the durations are in arbitrary units."""
    launch, cublas, graph = 2.0, 5.0, 2.0   # host work: one launch, cuBLAS's call, one graph launch
    latency, k1, k2, gap = 1.5, 1.5, 2.5, 0.3  # launch to GPU start; averaging; DGEMM; graph's gap
    # step 06
    h06 = [("launch averaging kernel", 0.0, launch, OI["sky"]),
           ("cuBLAS: check, pick, launch DGEMM", launch, cublas, OI["purple"])]
    k1_06 = launch + latency
    k2_06 = max(k1_06 + k1, launch + cublas + latency)
    g06 = [("averaging", k1_06, k1, OI["orange"]), ("DGEMM", k2_06, k2, OI["red"])]
    end06 = k2_06 + k2
    # step 07
    h07 = [("cudaGraphLaunch", 0.0, graph, OI["green"])]
    k1_07 = graph + latency
    g07 = [("averaging", k1_07, k1, OI["orange"]), ("DGEMM", k1_07 + k1 + gap, k2, OI["red"])]
    end07 = k1_07 + k1 + gap + k2

    fig = new_fig(10.0, 4.8, "avg_matvec 07: what a caller waits for (call_ms) and what the kernels take (kernel_ms)")
    ax = fig.add_axes([0.17, 0.30, 0.80, 0.58])
    rows = [("step 06: host", h06, 0), ("step 06: GPU", g06, 1), ("step 07: host", h07, 2.6), ("step 07: GPU", g07, 3.6)]
    timeline_rows(ax, rows, (4.6, -0.6), (-0.3, end06 + 0.5), "time (arbitrary units, not to scale)")
    for y, end, label in [(1, end06, "06"), (3.6, end07, "07")]:
        ax.plot([0, 0], [y - 0.42, y + 0.42], color=OI["dark"], lw=1.6)
        ax.plot([end, end], [y - 0.42, y + 0.42], color=OI["dark"], lw=1.6)
        ax.annotate("", xy=(end, y + 0.55), xytext=(0, y + 0.55),
                    arrowprops=dict(arrowstyle="<->", color=OI["dark"], lw=0.9))
        ax.text(end / 2, y + 0.72, f"call_ms of step {label}: start event to end event", fontsize=7.5,
                ha="center", va="top")
    note(fig, 0.03, 0.15,
         "kernel_ms counts only the orange and red bars, the same in both steps. In step 06 the GPU is idle "
         "between the start event and the first kernel (the launch's trip), and again between the two kernels "
         "while the host is still in cuBLAS; in step 07 one launch brings both kernels. The copy call the "
         "chapter compares with is one bar on each line: cudaMemcpyAsync and the copy.", fs=8, width=0.94)
    assert end07 < end06 and k1 + k2 < end07
    return fig


@figure("avg_matvec/img/fig_one_kernel.png")
def fig_one_kernel():
    """Step 07's graph against step 08's one kernel, on the GPU, at a launch-bound size. Step 07's
    graph runs three kernels one after another (step 06's averaging, cuBLAS's DGEMM, the kernel that
    adds the DGEMM's split-K pieces): each starts only when the one before has ended, and the GPU
    needs a moment between them. Step 08 is one kernel in four phases: every block averages its rows,
    a grid-wide barrier, then each block loads its 8 rows of W and the means into shared memory and
    multiplies them on the FP64 tensor cores, and adds its warps' sums. Step 08's phase lengths are those of one instrumented run on the H100
    (globaltimer stamps, the chapter's appendix), in µs. Step 07's follow its trace in the chapter
    (the averaging 3.5 µs, the kernels 0.29 µs apart, 10.2 µs from the first start to the last end);
    how the rest divides between the DGEMM and the add is a schematic."""
    gap = 0.29
    g07 = [("averaging", 0.0, 3.5, OI["orange"]), ("DGEMM (split K)", 3.5 + gap, 4.6, OI["red"]),
           ("add", 3.5 + gap + 4.6 + gap, 1.5, OI["purple"])]
    end07 = g07[-1][1] + g07[-1][2]
    phases = [("average rows", 2.0, OI["orange"]), ("barrier", 1.1, OI["grey"]),
              ("W's rows, means → shared", 2.8, OI["sky"]), ("mma", 0.95, OI["red"]), ("sum", 0.3, OI["purple"])]
    g08, t = [], 0.0
    for name, dur, colour in phases:
        g08.append((name, t, dur, colour))
        t += dur
    end08 = t
    fig = new_fig(10.0, 3.9, "avg_matvec 08: three kernels back to back against one kernel in phases (GPU only)")
    ax = fig.add_axes([0.17, 0.34, 0.80, 0.50])
    rows = [("step 07: three kernels", g07, 0), ("step 08: one kernel", g08, 1.3)]
    timeline_rows(ax, rows, (1.95, -0.55), (-0.2, max(end07, end08) + 0.4),
                  "µs (step 08: one instrumented run on the H100; step 07: its trace's averaging and gaps, "
                  "the DGEMM/add split a schematic)")
    note(fig, 0.03, 0.16,
         "Step 07's DGEMM cannot start before the averaging kernel has ended, and the GPU takes a moment "
         "to start each kernel. In step 08 nothing waits for a kernel to end and the next to start: the "
         "only wait is the barrier, where every block waits for the slowest. Reading W's rows and the "
         "means into shared memory, after the barrier, is now the longest phase.",
         fs=8, width=0.94)
    assert end08 < end07
    return fig


# ====================================================================================================
# separable_conv
# ====================================================================================================

@figure("separable_conv/img/fig_halo_apron.png")
def fig_halo_apron():
    """The apron (halo) of step 04's shared-memory tiles at K = 17 (R = (K - 1) / 2 = 8): a block of 28 x
    28 threads computes 28 x 28 outputs; the row pass stages 28 rows of 28 + 16 = 44 pixels (8 on each
    side), the column pass 28 columns of 44 rows (8 above and below). Output pixels are blue, apron
    pixels orange; the red bracket is the 17-tap window of one output. The two passes never read the
    corners (a fused pass, step 09, does)."""
    B, K = 28, 17  # kBlockX = kBlockY = 28 in 04_shared_tiles.cu; default --taps 17
    R = (K - 1) // 2
    span = B + K - 1
    fig = new_fig(9, 5.0, f"Tiles and their apron (step 04): 28 × 28 outputs, K = {K}, R = {R}")
    lim = ((-3, span + 3), (-4, span + 3))
    ty, tx = 20, 3  # the output whose window is drawn (tile coordinates)
    # Row pass: 28 rows of span pixels.
    ax = grid_ax(fig, [0.005, 0.2, 0.33, 0.68], *lim)
    ax.set_title(f"row pass: {B} rows × {span} pixels", fontsize=9)
    for y in range(B):
        for x in range(span):
            halo = x < R or x >= R + B
            box(ax, x, y + R, 1, 1, fc=OI["orange"] if halo else OI["sky"], ec="white", lw=0.2)
    box(ax, tx + R, ty + R, 1, 1, fc=OI["blue"], ec="black", lw=1.0, zorder=4)
    box(ax, tx, ty + R, K, 1, ec=OI["red"], lw=1.8, zorder=5)
    brace_h(ax, 0, R, R - 0.2, "R", below=False, fs=7.5)
    brace_h(ax, R, R + B, R - 0.2, f"tile: {B}", below=False, fs=7.5)
    brace_h(ax, R + B, span, R - 0.2, "R", below=False, fs=7.5)
    text(ax, span / 2, R + B + 1.2, f"red: the {K} taps of one output,\nx − {R} .. x + {R}", fs=7.5, color=OI["red"],
         va="top")
    # Column pass: span rows of 28 pixels.
    ax2 = grid_ax(fig, [0.335, 0.2, 0.33, 0.68], *lim)
    ax2.set_title(f"column pass: {span} rows × {B} pixels", fontsize=9)
    for y in range(span):
        for x in range(B):
            halo = y < R or y >= R + B
            box(ax2, x + R, y, 1, 1, fc=OI["orange"] if halo else OI["sky"], ec="white", lw=0.2)
    box(ax2, tx + R, ty + R, 1, 1, fc=OI["blue"], ec="black", lw=1.0, zorder=4)
    box(ax2, tx + R, ty, 1, K, ec=OI["red"], lw=1.8, zorder=5)
    brace_v(ax2, 0, R, R + B + 0.2, "R", fs=7.5)
    brace_v(ax2, R, R + B, R + B + 0.2, f"tile:\n{B}", fs=7.5)
    brace_v(ax2, R + B, span, R + B + 0.2, "R", fs=7.5)
    # Both aprons around one tile (Podlozhnyuk's picture).
    ax3 = grid_ax(fig, [0.665, 0.2, 0.33, 0.68], *lim)
    ax3.set_title("both aprons around the tile", fontsize=9)
    for y in range(span):
        for x in range(span):
            inx, iny = R <= x < R + B, R <= y < R + B
            if inx and iny:
                fc = OI["sky"]
            elif inx or iny:
                fc = OI["orange"]
            else:
                fc = "white"
            box(ax3, x, y, 1, 1, fc=fc, ec="white" if fc != "white" else OI["lightgrey"], lw=0.2)
    for (x0, y0) in ((0, 0), (R + B, 0), (0, R + B), (R + B, R + B)):
        text(ax3, x0 + R / 2, y0 + R / 2, "corner:\nfused pass\nonly", fs=6.3, color="#666666")
    box(ax3, tx + R, ty + R, 1, 1, fc=OI["blue"], ec="black", lw=1.0, zorder=4)
    box(ax3, tx, ty + R, K, 1, ec=OI["red"], lw=1.5, zorder=5)
    box(ax3, tx + R, ty, 1, K, ec=OI["red"], lw=1.5, zorder=5)
    from matplotlib.patches import Patch
    fig.legend(handles=[Patch(facecolor=OI["sky"], label=f"output tile ({B} × {B})"),
                        Patch(facecolor=OI["orange"], label=f"apron / halo (R = (K − 1) / 2 = {R})"),
                        Patch(facecolor=OI["blue"], edgecolor="black", label=f"output ({ty}, {tx})")],
               loc="lower center", ncol=3, fontsize=8, frameon=False, bbox_to_anchor=(0.5, 0.15))
    pitch5 = 60  # padded_pitch(44, 28) in 05_padded.cu
    note(fig, 0.03, 0.15,
         f"04_shared_tiles.cu: 28 × 28 threads (the post's block), one output each. Row pass: block row y stages in[y][x0 − {R} "
         f".. x0 + {B + R - 1}] (pitch {span} floats;\nstep 05 pads it to {pitch5} to end the bank "
         f"conflicts), {B} × {span} × 4 B = {B * span * 4:,} B. Column pass: rows y0 − {R} .. y0 + {B + R - 1} of {B} "
         f"columns, {span} × {B} × 4 B = {span * B * 4:,} B.\nEach staged pixel is read from global memory once per block "
         f"instead of once per tap; the apron is read again by the neighbouring blocks ({span}/{B} = {span / B:.2f}× the "
         "tile's pixels). The two passes never read the corners; step 09's fused pass must, since it row-filters the "
         "halo rows too. (The picture of Podlozhnyuk, \"Image Convolution with CUDA\", NVIDIA 2007.)", fs=8)
    return fig


@figure("separable_conv/img/fig_two_pass_vs_fused.png")
def fig_two_pass_vs_fused():
    """DRAM traffic per pixel: two passes (steps 01-08) read the input, write the intermediate image,
    read it back and write the output, 16 B per pixel; the fused pass (steps 09-13) keeps the row results
    in shared memory, 8 B per pixel — the floor the chapter measures against. The price of step 09 is
    on chip: its staged halo rows are row-filtered again by the next tile (1.6x the row-pass work at
    K = 17, TH = 32), which step 10 removes."""
    K, TH = 17, 32
    col_len = (K + 3) // 4 * 4
    redo = (TH + col_len - 1) / TH
    fig = new_fig(9, 5.2, "Two passes through DRAM vs one fused pass")
    ax = grid_ax(fig, [0.02, 0.22, 0.70, 0.68], (0, 30), (0, 13), equal=False)

    def dram(x, y, label):
        box(ax, x, y, 3.4, 1.6, fc=OI["lightgrey"], lw=0.8, text=label, fs=8)

    def kernel(x, y, w, label, fc=OI["sky"]):
        box(ax, x, y, w, 1.6, fc=fc, lw=0.8, text=label, fs=8)

    text(ax, 0.2, 0.5, "steps 01–08: two kernels", fs=9.5, ha="left", fontweight="bold")
    dram(0.2, 1.4, "in\n(DRAM)")
    kernel(5.6, 1.4, 4.0, "row pass")
    dram(11.8, 1.4, "tmp\n(DRAM)")
    kernel(17.2, 1.4, 4.0, "column pass")
    dram(23.4, 1.4, "out\n(DRAM)")
    for x0, x1, lab in ((3.6, 5.6, "read 4 B"), (9.6, 11.8, "write 4 B"), (15.2, 17.2, "read 4 B"),
                        (21.2, 23.4, "write 4 B")):
        arrow(ax, x0, 2.2, x1, 2.2, lw=1.4, ms=10)
        text(ax, (x0 + x1) / 2, 3.45, lab, fs=7.5)
    text(ax, 27.2, 2.2, "= 16 B\n/ pixel", fs=9, ha="left", fontweight="bold", color=OI["red"])

    text(ax, 0.2, 5.6, "steps 09–13: one kernel", fs=9.5, ha="left", fontweight="bold")
    dram(0.2, 7.0, "in\n(DRAM)")
    box(ax, 6.0, 6.4, 15.2, 4.4, fc="#F7F7F7", lw=0.8, ls="--")
    text(ax, 13.4, 10.45, "one block, on chip", fs=7.5, color="#555555")
    kernel(6.3, 7.0, 3.7, "row pass")
    box(ax, 11.2, 7.0, 4.4, 1.6, fc=OI["yellow"], lw=0.8, text="row results\n(shared memory)", fs=7.5)
    kernel(16.8, 7.0, 4.0, "column pass")
    dram(23.4, 7.0, "out\n(DRAM)")
    arrow(ax, 3.6, 7.8, 6.3, 7.8, lw=1.4, ms=10)
    text(ax, 4.75, 9.05, "read 4 B", fs=7.5)
    arrow(ax, 10.0, 7.8, 11.2, 7.8, lw=1.0, ms=8, color="#777777")
    arrow(ax, 15.6, 7.8, 16.8, 7.8, lw=1.0, ms=8, color="#777777")
    arrow(ax, 20.8, 7.8, 23.4, 7.8, lw=1.4, ms=10)
    text(ax, 22.1, 9.05, "write 4 B", fs=7.5)
    text(ax, 27.2, 7.8, "= 8 B\n/ pixel", fs=9, ha="left", fontweight="bold", color=OI["green"])

    axb = fig.add_axes([0.78, 0.30, 0.19, 0.55])
    px = 8192 * 8192
    axb.bar([0, 1], [16, 8], color=[OI["red"], OI["green"]], edgecolor=OI["dark"])
    axb.set_xticks([0, 1])
    axb.set_xticklabels(["two\npasses", "fused"])
    axb.set_ylabel("DRAM bytes per pixel")
    for i, b in enumerate((16, 8)):
        axb.text(i, b + 0.4, f"{b} B\n{b * px / 1e9:.2f} GB", ha="center", fontsize=8)
    axb.set_ylim(0, 20)
    axb.spines[["top", "right"]].set_visible(False)
    axb.set_title("8192² image", fontsize=9)
    note(fig, 0.03, 0.17,
         "Minimum traffic (separable_conv.cuh, min_bytes): each input pixel read once, each output pixel written once, "
         "8 B per pixel — the single-pass floor. A perfect\npair of two-pass kernels reaches 50% of it. Step 09 (09_fused.cu) "
         f"stages TH + K′ − 1 = {TH} + {col_len} − 1 = {TH + col_len - 1} input rows per {TH}-row tile and row-filters all "
         f"of them ({redo:.1f}× the row\npass at K = {K}); step 10 (10_strip_pipeline.cu) walks a strip and keeps the "
         "K − 1 shared rows' results, so each input row is filtered once.", fs=8)
    return fig


@figure("separable_conv/img/fig_register_blocking.png")
def fig_register_blocking():
    """Step 08's column pass with its default 128x32_p4 tile at K = 17: each thread computes P = 4 outputs
    down 4 adjacent columns (one float4), sliding a window of P + 3 = 7 float4 registers down the staged
    tile: per chunk of 4 taps it loads 4 new rows and keeps 3, so its 4 x 4 outputs cost 23 float4
    loads from shared memory, where one output per thread (steps 04-07) costs 17 loads each. Right:
    which staged row (and tap) feeds which of the 4 outputs."""
    K, P, warps, lanes = 17, 4, 8, 32  # 128x32_p4: Pass<kVec, 8 warps, P = 4, 4 blocks>
    col_len = (K + 3) // 4 * 4           # taps padded to whole chunks of 4 (zeros)
    chunks = col_len // 4
    TH = warps * P
    rows = TH + col_len - 1
    w_sel, l_sel = 2, 5
    row0 = w_sel * P
    fig = new_fig(9, 6.4, f"Register blocking (step 08 column pass): P = {P} outputs per thread, window of {P + 3} float4")
    # Left: the staged tile, coarse (one cell = one lane's 4 columns). Staged row i = image row y0 - R + i.
    R = (K - 1) // 2
    ax = grid_ax(fig, [0.04, 0.16, 0.36, 0.72], (-7, lanes + 1), (-2, rows + 1), equal=False)
    ax.set_title(f"shared tile: {rows} rows × 128 columns\n(image rows y0 − {R} … y0 + {rows - R - 1};\n"
                 "cell = one lane's 4 columns)", fontsize=8.5)
    for r in range(rows):
        t = r - R
        for l in range(lanes):
            if 0 <= t < TH:
                fc, alpha, hatch = CYCLE8[t // P], 0.6, None
            elif r < R + TH + R:
                fc, alpha, hatch = OI["lightgrey"], 1.0, None
            else:
                fc, alpha, hatch = "white", 1.0, "////"
            box(ax, l, r, 1, 1, fc=fc, ec="white" if hatch is None else OI["grey"], lw=0.15, alpha=alpha, hatch=hatch)
    box(ax, l_sel, R + row0, 1, P, fc="black", ec="black", lw=1.2, zorder=4)
    box(ax, l_sel, row0, 1, P + col_len - 1, ec=OI["red"], lw=1.6, zorder=5)
    for w in range(warps):
        text(ax, -0.4, R + w * P + P / 2, f"warp {w} outputs", fs=6.3, ha="right")
    text(ax, -0.4, R / 2, f"halo: {R} rows", fs=6.3, ha="right")
    text(ax, -0.4, R + TH + R / 2, f"halo: {R} rows", fs=6.3, ha="right")
    text(ax, -0.4, 2 * R + TH + (col_len - K) / 2, f"{col_len - K} rows for\nthe zero taps", fs=6.3, ha="right")
    text(ax, l_sel + 0.5, rows + 0.7, f"lane {l_sel}", fs=7, color=OI["red"])
    # Right: rows x outputs matrix.
    nread = P + col_len - 1
    ax2 = grid_ax(fig, [0.44, 0.16, 0.54, 0.74], (-7, P + 6.5), (-2.2, nread + 0.5), equal=False)
    ax2.set_title(f"warp {w_sel}, lane {l_sel}: rows read → outputs acc[p] (number = tap j)", fontsize=9)
    ccol = [OI["sky"], OI["orange"], OI["green"], OI["purple"], OI["yellow"], OI["blue"]]
    for i in range(nread):
        chunk = -1 if i < P - 1 else (i - (P - 1)) // 4
        label = "preload" if chunk < 0 else f"chunk {chunk}"
        box(ax2, -6.5, i, 3.2, 1, fc=OI["lightgrey"] if chunk < 0 else ccol[chunk], lw=0.3,
            text=f"y0+{row0 + i - R}: {label}", fs=6.3)
        for p in range(P):
            j = i - p
            if 0 <= j < col_len:
                zero = j >= K
                box(ax2, p, i, 1, 1, fc="white" if zero else CYCLE8[w_sel], lw=0.3, hatch="////" if zero else None,
                    text=str(j), fs=6.3, alpha=1.0)
            else:
                box(ax2, p, i, 1, 1, fc="white", ec=OI["lightgrey"], lw=0.3)
    for p in range(P):
        text(ax2, p + 0.5, -0.6, f"p={p}\ny0+{row0 + p}", fs=6.3)
    text(ax2, -4.9, -0.6, "row read (LDS.128)\nand when", fs=6.8)
    loads = P - 1 + 4 * chunks
    text(ax2, P + 0.6, 1.0,
         f"Per chunk c of 4 taps:\n  w[{P - 1}..{P + 2}] ← 4 new rows\n  acc[p] += t[4c+i]·w[p+i]\n  "
         f"  (16·P = {16 * P} FMA)\n  w[0..{P - 2}] ← w[4..{P + 2}]\n\n"
         f"{loads} float4 loads for\n{P} × 4 outputs;\n"
         f"one output per thread\n(steps 04–07): {K} loads\neach, {K * P * 4} for the same\n16 outputs.\n\n"
         f"Hatched: taps {K}..{col_len - 1} are\nzeros (K padded to\nwhole chunks of 4).",
         fs=7.5, ha="left", va="top")
    note(fig, 0.02, 0.11,
         f"08_register_blocked.cu, column_pass_blocked with the default tile 128x32_p4 ({warps} warps × P = {P}: "
         f"128 × {TH} outputs per block), K = {K} → col_len = {col_len}, {chunks} chunks;\n"
         f"the block stages {TH} + {col_len} − 1 = {rows} rows of 128 columns. Lane l owns columns 4l..4l+3 (float4, "
         "when width % 4 == 0). The row pass does the same along a row: each lane 4 adjacent\noutputs from a float4 window "
         "that slides one float4 per chunk of taps.", fs=8)
    return fig


@figure("separable_conv/img/fig_strips.png")
def fig_strips():
    """Step 10's strips at 8192 x 8192, K = 17 on an H100: the image is cut into 64 strips of 128 columns
    and each strip into 6 segments, one block each, all 384 resident at once; a block walks its segment
    top to bottom in 32-row tiles. Input rows arrive by cp.async in groups of 32; after a tile's column
    pass its last K - 1 = 16 rows of row results move to the top of the buffer and serve the next tile, so
    no row is filtered twice inside a segment."""
    W = H = 8192
    K, TH, G, tile_w = 17, 32, 32, 128  # default 128x32_p4: 8 warps x P = 4, kGroupRows = 32
    per_sm, sms = 3, 132                # 62.6 KB per block at K = 17: 3 blocks per SM on an H100
    strips = -(-W // tile_w)
    tiles = -(-H // TH)
    per_strip = max(1, min(per_sm * sms // strips, min(tiles, 65535)))
    seg_rows = -(-tiles // per_strip) * TH
    count = -(-H // seg_rows)
    lead = (K - 1) % G or G
    mid_rows = TH + K - 1
    taps_len, pitch, stages = 4 * (K // 4 + 1), 4 * ((K + 130 + 3) // 4), 2  # layout(k), kStages of 128x32_p4
    smem = 4 * (2 * taps_len + mid_rows * tile_w + stages * G * pitch)
    fig = new_fig(9, 6.6, f"Strip pipeline (step 10): {strips} strips × {count} segments, one block each, walked top to bottom")
    # Left: the image.
    ax = grid_ax(fig, [0.01, 0.14, 0.33, 0.74], (-1.5, 17.5), (-1.5, 17.5))
    ax.set_title(f"image {W} × {H}: strips of {tile_w} columns,\nsegments of {seg_rows} rows", fontsize=9)
    scale = 16 / W
    sw = tile_w * scale
    for g in range(count):
        y0 = g * seg_rows * scale
        h = min(seg_rows, H - g * seg_rows) * scale
        box(ax, 0, y0, 16, h, fc=CYCLE8[g % 8], lw=0.5, alpha=0.55)
    for st in range(1, strips):
        ax.plot([st * sw, st * sw], [0, 16], color="white", lw=0.35)
    s_sel, g_sel = 12, 1
    y0 = g_sel * seg_rows * scale
    box(ax, s_sel * sw, y0, sw, seg_rows * scale, fc="black", ec="black", lw=1.0, zorder=5)
    arrow(ax, s_sel * sw + 1.2, y0 + 0.2, s_sel * sw + 1.2, y0 + seg_rows * scale - 0.2, lw=1.2, ms=8, color="black",
          zorder=6)
    text(ax, s_sel * sw + 1.5, y0 + seg_rows * scale / 2, "one block\nwalks down", fs=7, ha="left")
    text(ax, 8, 16.6, f"{strips} strips (white lines) × {count} segments (colours)", fs=7, va="top")
    for g in range(count):
        text(ax, -0.2, (g + 0.5) * seg_rows * scale, f"seg {g}", fs=6.5, ha="right")
    # Middle: one segment's first input rows, groups and tile windows.
    nt = 4
    nrows = nt * TH + K - 1
    ax2 = grid_ax(fig, [0.36, 0.14, 0.30, 0.74], (-12, 24), (-10, nrows + 6), equal=False)
    ax2.set_title("one block's segment: input rows u\n(image row = segment start − R + u)", fontsize=9)
    g_first = [0] + [lead + i * G for i in range(nrows // G + 1)]
    for gi in range(len(g_first) - 1):
        a, b = g_first[gi], min(g_first[gi + 1], nrows)
        if a >= nrows:
            break
        box(ax2, 0, a, 6, b - a, fc=[OI["lightgrey"], "white"][gi % 2], lw=0.6,
            text=f"group {gi}\nu {a}–{b - 1}", fs=6.8)
    text(ax2, 3, -3, "cp.async\ngroups", fs=7.5)
    for t in range(nt):
        a, b = t * TH, t * TH + TH + K - 1
        x = 8 + 3.3 * t
        box(ax2, x, a, 2.6, b - a, fc=CYCLE8[t], lw=0.6, alpha=0.5)
        box(ax2, x, b - (K - 1), 2.6, K - 1, ec="black", lw=1.0, hatch="////", fc="none")
        text(ax2, x + 1.3, a - 1.5, f"tile {t}", fs=7)
        text(ax2, x + 1.3, (a + b - (K - 1)) / 2, f"u {a}–{b - 1}", fs=5.8, rotation=90)
    text(ax2, 15, nrows + 3.5, f"each tile needs {TH} + K − 1 = {TH + K - 1} input rows; hatched:\nthe {K - 1} rows "
         "the next tile shares", fs=7, va="center")
    # Right: the mid buffer for tiles 0, 1, 2.
    ax3 = grid_ax(fig, [0.68, 0.14, 0.31, 0.74], (-1, 14), (-10, nrows + 6), equal=False)
    ax3.set_title(f"row results in shared memory:\nmid buffer of {mid_rows} rows", fontsize=9)
    for t in range(3):
        x = 0.5 + 4.4 * t
        top = 8 + 0
        kept = 0 if t == 0 else K - 1
        if kept:
            box(ax3, x, top, 3.4, kept, fc=CYCLE8[t - 1], lw=0.6, alpha=0.5, hatch="////",
                text=f"kept:\nu {t * TH}–{t * TH + K - 2}", fs=6.3)
        box(ax3, x, top + kept, 3.4, mid_rows - kept, fc=CYCLE8[t], lw=0.6, alpha=0.5,
            text=f"new:\nu {t * TH + kept}–\n{t * TH + TH + K - 2}", fs=6.3)
        text(ax3, x + 1.7, top - 2.5, f"tile {t}", fs=7.5, fontweight="bold")
        text(ax3, x + 1.7, top + mid_rows + 3, "→ 32 rows\nof out", fs=6.3)
        if t < 2:
            arrow(ax3, x + 3.45, top + mid_rows - (K - 1) / 2, x + 4.35, top + (K - 1) / 2, lw=0.8, ms=6,
                  color=OI["dark"])
    text(ax3, 6.5, top + mid_rows + 13, f"after each tile: the last K − 1 = {K - 1} rows\nmove to the top (float4 copy, "
         "no re-filter)", fs=7, va="center")
    note(fig, 0.02, 0.11,
         f"10_strip_pipeline.cu, default 128x32_p4 (8 warps, P = 4, 2 cp.async stages) at K = {K}: shared memory "
         f"{smem:,} B per block → {per_sm} blocks per SM × {sms} SMs = {per_sm * sms} slots;\n"
         f"{strips} strips, segments(): {per_sm * sms} // {strips} = {per_strip} per strip, ⌈{tiles} / {per_strip}⌉ × {TH} = "
         f"{seg_rows} rows → {count} segments, {strips * count} blocks in one wave. Group 0 holds (K − 1) mod 32 = {lead} "
         f"rows, the others 32,\nso a tile's last input row always ends a group; while group g is row-filtered, group g + 1 "
         f"is in flight. Each segment re-reads the K − 1 rows across its top and bottom edges.", fs=7.9)
    return fig


@figure("separable_conv/img/fig_slots.png")
def fig_slots():
    """Step 12's row results at K = 63: three slots of 32 rows (ceil((32 + K - 1) / 32) = 3). Groups 0-2
    of 32 input rows fill the slots in order; from group 3 on, every thread moves its rows down one slot
    (the oldest group is no longer needed) and the new group is row-filtered into the last slot. After
    each group from the third on, the column pass reads slot rows 0 .. K + 30 = 93 and writes one tile of
    32 output rows: tile t needs input rows 32t .. 32t + 93 (u counts from the segment's first input row,
    R = 31 rows above its first output row)."""
    K, G = 63, 32
    slots = -(-(G + K - 1) // G)
    rows = slots * G
    used = G + K - 1
    steps = [2, 3, 4]  # after group g has been row-filtered
    fig = new_fig(9, 5.6, f"Slots of row results (step 12): K = {K}, {slots} slots of {G} rows, one new group per tile")
    ax = grid_ax(fig, [0.02, 0.16, 0.96, 0.72], (-4, 4 + 15 * len(steps)), (-12, rows + 8), equal=False)
    for i, g in enumerate(steps):
        x = 4 + 15 * i
        text(ax, x + 3, -9, f"after group {g}", fs=9, fontweight="bold")
        for sl in range(slots):
            grp = g - (slots - 1) + sl
            fresh = sl == slots - 1
            box(ax, x, sl * G, 6, G, fc=CYCLE8[grp % 8], lw=0.7, alpha=0.45 if not fresh else 0.8,
                text=f"slot {sl}\ngroup {grp}\nu {grp * G}–{grp * G + G - 1}", fs=7)
        t = g - (slots - 1)
        ax.plot([x + 7, x + 7.6, x + 7.6, x + 7], [0, 0, used, used], color="black", lw=1.0)
        text(ax, x + 8.1, used / 2, f"column pass\nof tile {t}:\nslot rows 0–{used - 1}\n(u {t * G}–{t * G + used - 1})\n"
             f"→ out rows\n{t * G}–{t * G + G - 1}", fs=6.8, ha="left")
        if i + 1 < len(steps):
            for sl in range(1, slots):
                arrow(ax, x + 6.1, sl * G + G / 2, x + 14.9, (sl - 1) * G + G / 2, lw=0.7, ms=6, color=OI["dark"],
                      ls="--", alpha=0.7)
    note(fig, 0.02, 0.13,
         f"12_long_filters.cu at K = {K}: slots_of(K) = ⌈({G} + K − 1) / {G}⌉ = {slots}; {rows} rows × 128 floats of row "
         f"results ({rows * 128 * 4:,} B) plus one cp.async stage of {G} input rows. Dashed: the move before the next "
         f"group, each thread its own rows and columns (no barrier). Rows {used}–{rows - 1} of the last slot are filtered "
         f"but read only after the move.", fs=7.9)
    return fig


@figure("separable_conv/img/fig_sliding_window.png")
def fig_sliding_window():
    """Who computes what in one group of 32 rows x 128 columns, K = 31. Step 11's row pass: a warp a
    row, a lane 4 outputs from its own window of K + 3 floats (lane l's window overlaps lane l + 1's in
    all but 4 floats). Step 13's row pass: a lane a row (lane i: row i), a warp 16 columns; one lane's
    window is 16 + K - 1 floats for 16 outputs. Step 13's column pass: a thread a column of 16 outputs
    (lane l of warp w: column 32 (w % 4) + l, rows 16 (w / 4) ..), reading 16 + K - 1 rows. Bytes loaded
    from shared memory per output at K = 31 under each panel."""
    K, W, H = 31, 128, 32
    fig = new_fig(11, 5.4, f"Sliding windows (step 13): who computes what in a group of {H} rows × {W} columns, K = {K}")
    panels = [0.02, 0.35, 0.68]
    # Step 11's row pass: one row, the windows of lanes 0-2
    ax = grid_ax(fig, [panels[0], 0.22, 0.30, 0.66], (-6, W + 6), (-20, H + 12), equal=False)
    text(ax, W / 2, -15, "step 11, row pass:\na warp a row, a lane 4 outputs", fs=9, fontweight="bold")
    for r in range(H):
        box(ax, 0, r, W, 1, fc=OI["lightgrey"] if r != 5 else OI["grey"], lw=0.15)
    for lane in range(32):
        box(ax, 4 * lane, 5, 4, 1, fc=CYCLE8[lane % 8], lw=0.3)
    for i, lane in enumerate([0, 1, 2]):
        y = 9 + 3 * i
        box(ax, 4 * lane, y, 4 + K - 1, 1.6, fc=CYCLE8[lane % 8], lw=0.5, alpha=0.8)
        text(ax, 4 * lane + 4 + K + 1, y + 0.8, f"lane {lane}: {4 + K - 1} floats → 4 outputs", fs=6.8, ha="left")
    text(ax, W / 2, H + 6, f"≈ {((3 + K + 2) // 4 + 1) * 16 / 4:.0f} B loaded per output (9–10 float4s for 4)", fs=8)
    # Step 13's row pass
    ax = grid_ax(fig, [panels[1], 0.22, 0.30, 0.66], (-6, W + 6), (-20, H + 12), equal=False)
    text(ax, W / 2, -15, "step 13, row pass:\na lane a row, a warp 16 columns", fs=9, fontweight="bold")
    for w in range(8):
        box(ax, 16 * w, 0, 16, H, fc=CYCLE8[w], lw=0.4, alpha=0.35, text=f"warp {w}", fs=6.5)
    for r in range(0, H, 4):
        text(ax, -3, r + 0.5, f"{r}", fs=5.5)
    text(ax, -3, -2, "lane", fs=5.5)
    box(ax, 32, 5, 16, 1, fc=CYCLE8[2], lw=0.6)
    box(ax, 32, 5, 16 + K - 1, 1, fc="none", ec=OI["black"], lw=1.0)
    text(ax, 32 + 16 + K + 1, 5.5, f"warp 2, lane 5:\n{16 + K - 1} floats → 16", fs=6.8, ha="left")
    text(ax, W / 2, H + 6, f"≈ {((16 + K - 2) // 4 + 1) * 16 / 16:.0f} B loaded per output ({(16 + K - 2) // 4 + 1} float4s for 16)", fs=8)
    # Step 13's column pass
    ax = grid_ax(fig, [panels[2], 0.22, 0.30, 0.66], (-6, W + 6), (-20, H + 12), equal=False)
    text(ax, W / 2, -15, "step 13, column pass:\na thread a column of 16 outputs", fs=9, fontweight="bold")
    for w in range(8):
        box(ax, 32 * (w % 4), 16 * (w // 4), 32, 16, fc=CYCLE8[w], lw=0.4, alpha=0.35)
        text(ax, 32 * (w % 4) + 1.5, 16 * (w // 4) + 2.5, f"warp {w}", fs=6.5, ha="left")
    box(ax, 32 + 7, 16, 1, 16, fc=CYCLE8[5], lw=0.8)
    text(ax, 32 + 10, 25, "warp 5, lane 7:\ncolumn 39, rows 16–31;\nreads rows 16–61\nof the row results", fs=6.8, ha="left")
    text(ax, W / 2, H + 6, f"≈ {(16 + K - 1) * 4 / 16:.1f} B loaded per output (step 11: {(4 + K - 1) * 16 / 16:.0f})", fs=8)
    note(fig, 0.02, 0.13,
         "13_sliding_window.cu: each value a thread loads from shared memory meets every tap that reaches one of "
         "its 16 outputs, so the loads per output shrink from (K + 3) / 4 to (K + 15) / 16. A quarter-warp's "
         "16-byte loads in the row pass read one column of 8 consecutive rows: the rows are padded to 4 × an odd "
         "number of floats (164 staged, 132 row results), which puts those 8 loads in 8 different groups of "
         "4 banks.", fs=7.9)
    return fig


# ====================================================================================================
# docs (suite-wide)
# ====================================================================================================

@figure("docs/img/fig_roofline_explained.png")
def fig_roofline_explained():
    """A roofline with the H100's spec numbers (3.35 TB/s HBM3, 67 TFLOP/s FP32 without tensor cores):
    a kernel of arithmetic intensity I (FLOP per DRAM byte) can reach at most min(67 TFLOP/s, I x 3.35
    TB/s). Left of the ridge point (20 FLOP/B) a kernel is memory-bound, right of it compute-bound;
    vector_add (1/12 FLOP/B) and the fused separable convolution (8.5) sit on the slope, a 4096^3 sgemm
    (683) on the flat roof."""
    import numpy as np
    bw, peak = 3.35e3, 67e3  # GB/s, GFLOP/s
    ridge = peak / bw
    fig = new_fig(9, 5.6, "The roofline: attainable GFLOP/s = min(peak, intensity × bandwidth)")
    ax = fig.add_axes([0.10, 0.22, 0.86, 0.66])
    x = np.logspace(-2, 4, 400)
    roof = np.minimum(peak, x * bw)
    ax.fill_between(x, 1, roof, where=x <= ridge, color=OI["sky"], alpha=0.18, lw=0)
    ax.fill_between(x, 1, roof, where=x >= ridge, color=OI["orange"], alpha=0.18, lw=0)
    ax.loglog(x, roof, color=OI["black"], lw=2.2)
    ax.axvline(ridge, color=OI["dark"], ls=":", lw=1)
    ax.plot([ridge], [peak], "o", color=OI["black"], ms=6)
    ax.annotate(f"ridge point\n{ridge:.0f} FLOP/B", (ridge, peak), xytext=(ridge * 0.13, peak * 2.2), fontsize=8.5,
                arrowprops=dict(arrowstyle="->", lw=0.8))
    ax.set_xlim(1e-2, 1e4)
    ax.set_ylim(1, 3e5)
    p0, p1 = ax.transData.transform((0.3, 0.3 * bw)), ax.transData.transform((3.0, 3.0 * bw))
    angle = math.degrees(math.atan2(p1[1] - p0[1], p1[0] - p0[0]))
    ax.text(0.12, 0.12 * bw * 1.5, "bandwidth slope: 3.35 TB/s (spec, HBM3)", rotation=angle, fontsize=8.5,
            rotation_mode="anchor", ha="left", va="bottom")
    ax.text(9000, peak * 1.3, "compute roof: 67 TFLOP/s FP32 (spec)", fontsize=8.5, ha="right")
    ax.text(0.25, 3, "memory-bound", fontsize=10, color=OI["blue"], fontweight="bold")
    ax.text(300, 3, "compute-bound", fontsize=10, color=OI["red"], fontweight="bold", ha="center")
    kernels = [("vector_add\n1 FLOP / 12 B", 1 / 12, OI["blue"]),
               ("separable_conv fused, K = 17\n4K FLOP / 8 B", 4 * 17 / 8, OI["green"]),
               ("sgemm 4096³\n2mnk / 4(mk + kn + mn)", 2 * 4096 / 12, OI["red"])]
    for label, ai, c in kernels:
        y = min(peak, ai * bw)
        ax.plot([ai, ai], [1, y], color=c, ls="--", lw=1)
        ax.plot([ai], [y], "D", color=c, ms=7, zorder=5)
        bound = f"≤ {y / 1e3:.3g} TFLOP/s" if y >= 1e3 else f"≤ {y:.3g} GFLOP/s"
        ax.annotate(f"{label}\n{bound}", (ai, y), xytext=(ai * 1.4, y * (0.06 if ai < 1 else 0.22 if ai < 100 else 0.12)),
                    fontsize=8, color=c)
    ax.set_xlim(1e-2, 1e4)
    ax.set_ylim(1, 3e5)
    ax.set_xlabel("arithmetic intensity (FLOP per byte of DRAM traffic, log scale)")
    ax.set_ylabel("attainable GFLOP/s (log scale)")
    ax.grid(which="major", alpha=0.3)
    ax.spines[["top", "right"]].set_visible(False)
    note(fig, 0.03, 0.11,
         "Spec numbers of an H100 SXM (not measured here): HBM3 3.35 TB/s, FP32 67 TFLOP/s on the CUDA cores (TF32 tensor "
         "cores go far higher: another roof). The diamonds are\nwhere each problem's best possible kernel sits: its minimum "
         "traffic (every input read once, every output written once) at that bandwidth. A real kernel sits below its\n"
         "point; the ladders measure the distance against a measured ceiling (e.g. the copy bandwidth), not against these "
         "spec lines.", fs=8)
    return fig


# ====================================================================================================

def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--list", action="store_true", help="list the figures with their captions")
    ap.add_argument("--only", metavar="NAME", help="draw one figure (fig_name or folder/img/fig_name.png)")
    args = ap.parse_args(argv)

    if args.list:
        for name, rel, fn in FIGURES:
            print(f"{rel}: {caption(fn)}")
        return 0
    chosen = FIGURES
    if args.only:
        key = args.only
        chosen = [f for f in FIGURES if key in (f[0], f[1], f[0] + ".png", f[1].replace("/img/", "/"))]
        if not chosen:
            print(f"figures.py: no figure named {key!r}; --list shows them", file=sys.stderr)
            return 2
    try:
        setup_matplotlib()
    except ImportError:
        print("figures.py: matplotlib is not installed (pip install matplotlib); no figures drawn")
        return 0
    for name, rel, fn in chosen:
        fig = fn()
        path = save(fig, rel)
        print(os.path.relpath(path, ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
