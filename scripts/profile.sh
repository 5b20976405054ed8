#!/usr/bin/env bash
# Profile one step.
#   scripts/profile.sh STEP [ncu|nsys] [--dry-run] [step flags...]
#   STEP: vector_add/04_grid_stride, vector_add_04_grid_stride or a path to the executable.
# ncu (default): Nsight Compute with the sections that fit the folder, --clock-control none (leave
#   the GPU's clocks alone), source view through -lineinfo; the report goes to
#   results/profiles/<step>.ncu-rep. The step runs with --no-ceiling --reps 1 --warmup 0 so only
#   its own kernels are profiled: the checked run and one timed run.
# nsys: Nsight Systems timeline with CUDA and NVTX (the harness names every phase), where nsys is
#   installed and can write reports.
# --dry-run prints the exact command and exits 0.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
[ $# -ge 1 ] || { sed -n '2,13p' "$0"; exit 2; }
step=$1; shift
tool=ncu
if [ $# -gt 0 ] && { [ "$1" = ncu ] || [ "$1" = nsys ]; }; then tool=$1; shift; fi
dry=0
if [ $# -gt 0 ] && [ "$1" = --dry-run ]; then dry=1; shift; fi

if [ -x "$step" ]; then exe=$step; else exe="$build/bin/${step/\//_}"; fi
name=$(basename "$exe")
folder=${name%%_[0-9]*}
folder=${folder%_aat}
if [ ! -x "$exe" ] && [ $dry -eq 0 ]; then
  echo "error: no executable $exe (build first: scripts/test.sh or cmake --build build)" >&2; exit 2
fi

# The counters each folder's chapter talks about.
case "$folder" in
  sgemm)          sections="SpeedOfLight ComputeWorkloadAnalysis MemoryWorkloadAnalysis Occupancy LaunchStats WarpStateStats SourceCounters" ;;
  reduction)      sections="SpeedOfLight MemoryWorkloadAnalysis Occupancy LaunchStats WarpStateStats InstructionStats SourceCounters" ;;
  *)              sections="SpeedOfLight MemoryWorkloadAnalysis MemoryWorkloadAnalysis_Tables Occupancy LaunchStats SourceCounters" ;;
esac

out_dir="$root/results/profiles"
step_args=(--no-ceiling --reps 1 --warmup 0 "$@")
if [ "$tool" = ncu ]; then
  cmd=(ncu --clock-control none --import-source yes)
  for s in $sections; do cmd+=(--section "$s"); done
  cmd+=(-f -o "$out_dir/$name" "$exe" "${step_args[@]}")
else
  cmd=(nsys profile --trace=cuda,nvtx,osrt --force-overwrite true -o "$out_dir/$name" "$exe" "${step_args[@]}")
fi

if [ $dry -eq 1 ]; then echo "${cmd[*]}"; exit 0; fi
if ! command -v "$tool" >/dev/null 2>&1; then
  echo "error: $tool is not on PATH. Install Nsight $( [ "$tool" = ncu ] && echo Compute || echo Systems ) or run the other tool." >&2
  exit 127
fi
mkdir -p "$out_dir"
"${cmd[@]}"
echo "report: $out_dir/$name.$( [ "$tool" = ncu ] && echo ncu-rep || echo nsys-rep )"
[ "$tool" = ncu ] && echo "read it: ncu --import $out_dir/$name.ncu-rep --page details" || true
