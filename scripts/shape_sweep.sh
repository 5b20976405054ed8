#!/usr/bin/env bash
# Run some steps of one folder over some shapes and print a Markdown table of % of the ceiling that
# each run measured in its own process (rows: shapes, columns: steps).
#
#   scripts/shape_sweep.sh FOLDER --steps S1,S2,... --shapes AxB,CxD,... [options] [-- step flags]
#     --steps LIST    steps by name (05_multi_element) or id (transpose/05_multi_element)
#     --shapes LIST   one value per size flag of the folder, in their declared order, joined by 'x':
#                     8191x8193 is --rows 8191 --cols 8193 for transpose
#     --repeat N      run each step and shape N times and show the median (default 1)
#     --out DIR       keep every JSON record and log in DIR (default: a temporary directory, printed)
#     --help          this text
#   Step flags go after -- and apply to every run (e.g. -- --reps 30).
#
# Each run is `step --json <size flags> [step flags]`: verified, timed, against its own ceiling. A
# cell reads "95.4" (% of ceiling); "FAIL (exit N)" or "NOT VERIFIED" where a run did not verify.
# The table ends with each shape's ceiling range and the device. Exits non-zero if any run failed.
# Environment: BUILD_DIR (default build/); the steps must be built.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}

usage() { sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; }
folder=""
steps_arg=""
shapes_arg=""
repeat=1
out=""
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --help|-h) usage; exit 0 ;;
    --steps) [ $# -ge 2 ] || { echo "error: --steps needs a list" >&2; exit 2; }; steps_arg=$2; shift 2 ;;
    --shapes) [ $# -ge 2 ] || { echo "error: --shapes needs a list" >&2; exit 2; }; shapes_arg=$2; shift 2 ;;
    --repeat) [ $# -ge 2 ] && [[ "$2" =~ ^[1-9][0-9]*$ ]] ||
                { echo "error: --repeat needs a count" >&2; exit 2; }
              repeat=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || { echo "error: --out needs a directory" >&2; exit 2; }; out=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -*) echo "error: unknown option '$1' (step flags go after --)" >&2; usage >&2; exit 2 ;;
    *) [ -z "$folder" ] || { echo "error: one folder only ('$folder', '$1')" >&2; exit 2; }
       folder=$1; shift ;;
  esac
done
[ -n "$folder" ] && [ -n "$steps_arg" ] && [ -n "$shapes_arg" ] ||
  { echo "error: name a folder, --steps and --shapes" >&2; usage >&2; exit 2; }
decl="$build/ladder_folders.txt"
[ -f "$decl" ] && [ -f "$build/ladder_steps.txt" ] ||
  { echo "error: no build in $build (build first: scripts/test.sh or cmake --build)" >&2; exit 2; }
read -r -a size_flags <<<"$(grep "^$folder\.size_flags=" "$decl" | head -n 1 | cut -d= -f2-)"
[ ${#size_flags[@]} -gt 0 ] || { echo "error: '$folder' is not a declared folder" >&2; exit 2; }

# Steps -> executables, from the build's list of registered steps.
IFS=',' read -r -a steps <<<"$steps_arg"
exes=()
for s in "${steps[@]}"; do
  id=$s
  [[ "$id" == */* ]] || id="$folder/$s"
  exe=$(grep "^$id=" "$build/ladder_steps.txt" | head -n 1 | cut -d= -f2-)
  [ -n "$exe" ] || { echo "error: no step $id in $build/ladder_steps.txt" >&2; exit 2; }
  [ -x "$exe" ] || { echo "error: $exe is not built" >&2; exit 2; }
  exes+=("$exe")
done
IFS=',' read -r -a shapes <<<"$shapes_arg"
for shape in "${shapes[@]}"; do
  IFS='x' read -r -a vals <<<"$shape"
  [ ${#vals[@]} -eq ${#size_flags[@]} ] ||
    { echo "error: shape '$shape' needs ${#size_flags[@]} values (${size_flags[*]})" >&2; exit 2; }
done

if [ -z "$out" ]; then out=$(mktemp -d); fi
mkdir -p "$out" || exit 2
manifest="$out/manifest.tsv"   # shape, step, run, exit code, record file
: >"$manifest"
failures=0
total=$(( ${#shapes[@]} * ${#steps[@]} * repeat ))
i=0
# Shapes outside, steps inside: the steps of one shape run back to back, on a GPU in the same state.
for shape in "${shapes[@]}"; do
  IFS='x' read -r -a vals <<<"$shape"
  size_args=()
  for k in "${!size_flags[@]}"; do size_args+=("${size_flags[$k]}" "${vals[$k]}"); done
  for rep in $(seq 1 "$repeat"); do
    for k in "${!steps[@]}"; do
      i=$((i + 1))
      base="$out/${folder}_${steps[$k]##*/}_${shape}_$rep"
      printf '[%3d/%d] %-28s %-14s ' "$i" "$total" "${steps[$k]##*/}" "$shape" >&2
      "${exes[$k]}" --json "${size_args[@]}" "${extra[@]}" >"$base.log" 2>&1
      rc=$?
      grep '^{' "$base.log" | tail -n 1 >"$base.json"
      [ $rc -eq 0 ] && [ -s "$base.json" ] || failures=$((failures + 1))
      printf '%s\t%s\t%s\t%s\t%s\n' "$shape" "${steps[$k]##*/}" "$rep" "$rc" "$base.json" >>"$manifest"
      if [ $rc -eq 0 ] && [ -s "$base.json" ]; then
        python3 "$root/scripts/report.py" --one-line "$base.json" >&2
      else
        echo "FAILED (exit $rc; log: $base.log)" >&2
      fi
    done
  done
done

python3 - "$manifest" "${steps[@]##*/}" <<'EOF'
import json, statistics, sys
manifest, steps = sys.argv[1], sys.argv[2:]
cells, shapes, ceilings, devices, runs = {}, [], {}, set(), {}  # runs: one record per device
for line in open(manifest):
    shape, step, rep, rc, path = line.rstrip("\n").split("\t")
    if shape not in shapes:
        shapes.append(shape)
    rec = None
    try:
        with open(path) as f:
            text = f.read().strip()
        rec = json.loads(text) if text else None
    except (OSError, ValueError):
        pass
    key = (shape, step)
    if int(rc) != 0 or rec is None:
        cells.setdefault(key, []).append("no GPU (exit 77)" if rc == "77" else f"FAIL (exit {rc})")
        continue
    devices.add(rec.get("device", "?"))
    runs[rec.get("device", "?")] = rec
    if rec.get("verified") is False:
        cells.setdefault(key, []).append("NOT VERIFIED")
        continue
    pct = rec.get("pct_of_ceiling")
    cells.setdefault(key, []).append(pct if pct is not None else "no ceiling")
    c = rec.get("ceiling")
    if c:
        ceilings.setdefault(shape, []).append((c["value"], c["unit"]))

def cell(values):
    bad = [v for v in values if isinstance(v, str)]
    if bad:
        return bad[0]
    return f"{statistics.median(values):.1f}"

print("| shape | " + " | ".join(steps) + " | ceiling |")
print("| --- | " + " | ".join("---:" for _ in steps) + " | ---: |")
for shape in shapes:
    cs = ceilings.get(shape, [])
    ceil = (f"{min(v for v, _ in cs):.0f}-{max(v for v, _ in cs):.0f} {cs[0][1]}" if cs else "-")
    shown = " × ".join(shape.split("x"))
    print(f"| {shown} | " + " | ".join(cell(cells.get((shape, s), ["-"])) for s in steps) + f" | {ceil} |")
rec = next(iter(runs.values()), None)
if rec:
    name = rec["ceiling"]["name"] if rec.get("ceiling") else "no ceiling"
    reps = max(len(v) for v in cells.values())
    print(f"\nCells: % of the ceiling ({name}) measured in each run's own process"
          + (f", median of {reps} runs" if reps > 1 else "")
          + f". {', '.join(sorted(devices))}, CUDA {rec.get('cuda', '?')}, {rec.get('date', '?')}.")
EOF
echo "records: $out" >&2
[ $failures -eq 0 ]
