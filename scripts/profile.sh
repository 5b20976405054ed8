#!/usr/bin/env bash
# Profile one step, or compare two, and print the few metrics its folder's chapter cites.
#
#   scripts/profile.sh [options] STEP [STEP2] [-- step flags]
#     STEP         vector_add/04_grid_stride, vector_add_04_grid_stride or a path to the executable
#     STEP2        compare mode: both are profiled and their metrics printed side by side
#     --nsys       Nsight Systems timeline (CUDA + NVTX phases) instead of Nsight Compute; where nsys
#                  is not installed, the step's own trace (--trace, from CUPTI: kernels, copies and
#                  phases per stream) as <step>.trace.json for chrome://tracing or ui.perfetto.dev
#     --timeline   Nsight Compute's PM sampling instead: counters read every 1.5 us (H100) through one
#                  launch of each kernel, summarised by scripts/pm_timeline.py (the SM clock, the
#                  tensor and FMA pipes, L2 and DRAM over the launch, then its steady state)
#     --dry-run    print the exact commands and exit 0
#     --help       this text
#   Step flags (sizes: --n 1e6, --rows 4096 ...) go after -- and apply to both steps.
#
# Nsight Compute: the sections and metrics the folder declares (NCU_SECTIONS, NCU_METRICS in its
# CMakeLists.txt), --clock-control none (the GPU's clocks are left alone), source lines through
# -lineinfo. The step runs with --no-ceiling --no-verify --reps 1 --warmup 0: its checked run and one
# timed run, nothing else of ours. The report is saved as results/profiles/<step>.ncu-rep; the summary
# (read back with ncu --import ... --page raw --csv) shows each kernel's last launch, and a
# sectors-per-request ratio wherever a sectors and a requests metric come in a pair.
# Environment: BUILD_DIR (default build/), PROFILE_DIR (default results/profiles).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
out_dir=${PROFILE_DIR:-$root/results/profiles}

usage() { sed -n '2,/^# Environment/p' "$0" | sed 's/^# \{0,1\}//'; }
tool=ncu
dry=0
steps=()
step_args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --help|-h) usage; exit 0 ;;
    --dry-run) dry=1; shift ;;
    --nsys) tool=nsys; shift ;;
    --ncu) tool=ncu; shift ;;
    --timeline) tool=timeline; shift ;;
    --) shift; step_args=("$@"); break ;;
    -*) echo "error: unknown option '$1' (step flags go after --)" >&2; usage >&2; exit 2 ;;
    *) steps+=("$1"); shift ;;
  esac
done
[ ${#steps[@]} -ge 1 ] && [ ${#steps[@]} -le 2 ] || { echo "error: name one step, or two to compare" >&2; usage >&2; exit 2; }
decl="$build/ladder_folders.txt"
[ -f "$decl" ] || { echo "error: no $decl (configure first: scripts/test.sh or cmake -S . -B build)" >&2; exit 2; }

executable() {  # STEP -> path
  if [ -x "$1" ]; then echo "$1"; else echo "$build/bin/${1/\//_}"; fi
}
folder_of() {  # executable -> folder, read from the declarations (folder names contain '_')
  local name f
  name=$(basename "$1")
  for f in $(grep -o '^[a-z_0-9]*\.size_flags' "$decl" | sed 's/\.size_flags$//'); do
    case "$name" in "${f}"_*) echo "$f"; return ;; esac
  done
}
declared() { grep "^$1\.$2=" "$decl" | head -n 1 | cut -d= -f2-; }

run_args=(--no-ceiling --no-verify --reps 1 --warmup 0 "${step_args[@]}")
status=0
for step in "${steps[@]}"; do
  exe=$(executable "$step")
  folder=$(folder_of "$exe")
  [ -n "$folder" ] || { echo "error: $step is not a step of any declared folder" >&2; exit 2; }
  [ -x "$exe" ] || [ $dry -eq 1 ] || { echo "error: no executable $exe (build first)" >&2; exit 2; }
  name=$(basename "$exe")
  if [ "$tool" = ncu ]; then
    cmd=(ncu --clock-control none --import-source yes)
    for s in $(declared "$folder" ncu_sections); do cmd+=(--section "$s"); done
    metrics=$(declared "$folder" ncu_metrics | tr ' ' ',')
    [ -n "$metrics" ] && cmd+=(--metrics "$metrics")
    cmd+=(-f -o "$out_dir/$name" "$exe" "${run_args[@]}")
  elif [ "$tool" = timeline ]; then
    cmd=(ncu --clock-control none --section PmSampling --page raw --csv --print-metric-instances values
         "$exe" "${run_args[@]}")
  elif command -v nsys >/dev/null 2>&1 || [ $dry -eq 1 ]; then
    cmd=(nsys profile --trace=cuda,nvtx,osrt --force-overwrite true -o "$out_dir/$name" "$exe" "${run_args[@]}")
  else
    echo "note: nsys is not installed; writing the step's own trace (--trace) instead" >&2
    tool=trace
    cmd=("$exe" "${run_args[@]}" --trace "$out_dir/$name.trace.json")
  fi
  if [ $dry -eq 1 ]; then
    echo "${cmd[*]}"
    [ "$tool" = timeline ] && echo "python3 $root/scripts/pm_timeline.py $out_dir/$name.log"
    continue
  fi
  [ "$tool" = trace ] || command -v "${cmd[0]}" >/dev/null 2>&1 || {
    echo "error: ${cmd[0]} is not on PATH: install Nsight $([ "${cmd[0]}" = ncu ] && echo Compute || echo Systems)" \
         "(it ships with the CUDA Toolkit) or use the other tool" >&2; exit 127; }
  mkdir -p "$out_dir"
  "${cmd[@]}" >"$out_dir/$name.log" 2>&1 || { tail -n 20 "$out_dir/$name.log" >&2; status=1; continue; }
  if [ "$tool" = timeline ]; then
    python3 "$root/scripts/pm_timeline.py" "$out_dir/$name.log" || status=1
    echo "samples: $out_dir/$name.log (scripts/pm_timeline.py FILE --out PICTURE.png draws them)"
  elif [ "$tool" = trace ]; then
    echo "trace: $out_dir/$name.trace.json (open in chrome://tracing or ui.perfetto.dev)"
  elif [ "$tool" = nsys ]; then
    ls "$out_dir/$name".nsys-rep >/dev/null 2>&1 && echo "report: $out_dir/$name.nsys-rep" ||
      { echo "error: nsys wrote no report (see $out_dir/$name.log)" >&2; status=1; }
  else
    echo "report: $out_dir/$name.ncu-rep (details: ncu --import $out_dir/$name.ncu-rep --page details)"
  fi
done
# The summary: the folder's metrics of each kernel, the two steps side by side in compare mode.
if [ "$tool" = ncu ]; then
  reps=()
  for step in "${steps[@]}"; do reps+=("$out_dir/$(basename "$(executable "$step")").ncu-rep"); done
  summary=(python3 "$root/scripts/ncu_summary.py" --metrics
           "$(declared "$(folder_of "$(executable "${steps[0]}")")" ncu_metrics | tr ' ' ',')" "${reps[@]}")
  if [ $dry -eq 1 ]; then echo "${summary[*]}"; exit 0; fi
  [ $status -eq 0 ] && "${summary[@]}"
fi
exit $status
