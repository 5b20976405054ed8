#!/usr/bin/env bash
# Show what one step changes from another: the two files' code, their explanatory header comments
# left out, as a unified diff.
#   scripts/diff_steps.sh transpose 03 04        (folder, two step numbers)
#   scripts/diff_steps.sh sgemm aat_02 aat_03    (side-ladder steps by prefix)
#   scripts/diff_steps.sh --help
# The kernel of a step is named after its technique, so its name (and the namespace) change with
# the lesson; everything else a step does not change is kept byte-identical where the language allows.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
if [ "${1:-}" = --help ] || [ $# -ne 3 ]; then sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; [ "${1:-}" = --help ]; exit; fi
find_step() {
  local matches=("$root/$1/$2"_*.cu)
  [ -f "${matches[0]}" ] || { echo "error: no step $2 in $1/" >&2; exit 2; }
  echo "${matches[0]}"
}
a=$(find_step "$1" "$2")
b=$(find_step "$1" "$3")
body() { sed -n '/^[^/]/,$p' "$1"; }  # from the first line that is not a // comment
diff -u --label "$(basename "$a")" --label "$(basename "$b")" <(body "$a") <(body "$b") || true
