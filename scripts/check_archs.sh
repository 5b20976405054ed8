#!/usr/bin/env bash
# Compile the device code of every CUDA file of the project (common/, each folder's harness and
# steps) for every GPU architecture a learner may have, one architecture at a time: a step whose
# technique needs a newer GPU must still build for the older ones (it exits 2 there at run time).
#
#   scripts/check_archs.sh                    sm_70 75 80 86 89 90 120, and sm_90a for the files that
#                                             use Hopper-only instructions (wgmma, setmaxnreg)
#   scripts/check_archs.sh --archs "75 90"    other architectures
#   scripts/check_archs.sh --folders sgemm    one folder (and common/)
#   scripts/check_archs.sh --file F.cu         one file (the script's own test uses this)
#
# Each file is compiled with `nvcc -cubin -arch=sm_XX` (device code only: ptxas runs, which is where
# "Feature 'cp.async' requires .target sm_80 or higher" is reported; no host object, no link), so
# the check costs a fraction of a fat-binary build. Architectures the toolkit no longer knows
# (CUDA 13 dropped sm_70) are skipped and named; scripts/build_cuda12.sh's toolkit covers sm_70
# (NVCC=~/.cache/ladder-cuda12/toolkit/bin/nvcc scripts/check_archs.sh --archs 70).
# Prints one line per architecture and exits non-zero if any file failed, with its errors.
# Environment: NVCC (default nvcc on PATH), JOBS (default nproc).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
nvcc=${NVCC:-nvcc}
jobs=${JOBS:-$(nproc)}
archs="70 75 80 86 89 90 120"
folders=""
single=""

usage() { sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --help|-h) usage; exit 0 ;;
    --archs) [ $# -ge 2 ] || { echo "error: --archs needs a list" >&2; exit 2; }; archs=$2; shift 2 ;;
    --folders) [ $# -ge 2 ] || { echo "error: --folders needs a list" >&2; exit 2; }; folders=$2; shift 2 ;;
    --file) [ $# -ge 2 ] && [ -f "$2" ] || { echo "error: --file needs a file" >&2; exit 2; }
            single=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift 2 ;;
    *) echo "error: unknown option '$1'" >&2; usage >&2; exit 2 ;;
  esac
done
command -v "$nvcc" >/dev/null || { echo "error: $nvcc not found" >&2; exit 2; }
if [ -z "$folders" ]; then
  folders=$(sed -n 's/^set(LADDER_FOLDERS "\([^"]*\)".*/\1/p' "$root/CMakeLists.txt" | tr ';' ' ')
fi

files=("$root"/common/*.cu)
for f in $folders; do
  [ -d "$root/$f" ] || { echo "error: no folder '$f'" >&2; exit 2; }
  files+=("$root/$f"/*.cu)
done
[ -n "$single" ] && files=("$single")

known=$("$nvcc" --list-gpu-arch 2>/dev/null | sed -n 's/^compute_//p' | tr '\n' ' ')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One compile: ARCH FILE -> $work/<arch>/<name>.log, and a .fail marker when it failed.
compile_one() {
  local arch=$1 file=$2
  local name=${file#"$root"/}
  name=${name//\//_}
  local target=(-arch=sm_$arch)
  [ "$arch" = 90a ] && target=(-gencode=arch=compute_90a,code=sm_90a)
  mkdir -p "$work/$arch"
  if ! "$nvcc" -std=c++17 -I"$root" --expt-relaxed-constexpr "${target[@]}" -cubin \
        -o "$work/$arch/$name.cubin" "$file" >"$work/$arch/$name.log" 2>&1; then
    echo "${file#"$root"/}" >"$work/$arch/$name.fail"
  fi
  rm -f "$work/$arch/$name.cubin"
}
export -f compile_one
export nvcc root work

checked=()
skipped=()
for arch in $archs; do
  if [[ " $known " == *" $arch "* ]]; then checked+=("$arch"); else skipped+=("$arch"); fi
done
# sm_90a: the files that use Hopper-only instructions, where sm_90 is checked.
hopper=()
if [[ " ${checked[*]} " == *" 90 "* ]]; then
  for f in "${files[@]}"; do grep -qE 'wgmma|setmaxnreg' "$f" && hopper+=("$f"); done
fi

{
  for arch in "${checked[@]}"; do
    for f in "${files[@]}"; do echo "$arch $f"; done
  done
  for f in "${hopper[@]}"; do echo "90a $f"; done
} | xargs -P "$jobs" -n 2 bash -c 'compile_one "$0" "$1"'

status=0
echo "nvcc: $("$nvcc" --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'); ${#files[@]} files"
for arch in "${checked[@]}" ${hopper:+90a}; do
  count=${#files[@]}
  [ "$arch" = 90a ] && count=${#hopper[@]}
  fails=$(cat "$work/$arch"/*.fail 2>/dev/null | wc -l)
  if [ "$fails" -eq 0 ]; then
    echo "sm_$arch: $count files compiled"
  else
    status=1
    echo "sm_$arch: $fails of $count files FAILED"
    for m in "$work/$arch"/*.fail; do
      log=${m%.fail}.log
      echo "--- $(cat "$m") (sm_$arch)"
      grep -E 'error|fatal' "$log" | head -5
    done
  fi
done
for arch in "${skipped[@]}"; do echo "sm_$arch: skipped (this nvcc does not support it)"; done
exit $status
