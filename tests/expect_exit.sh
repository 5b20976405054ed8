#!/usr/bin/env bash
# expect_exit.sh CODE COMMAND [ARGS...]: runs COMMAND, its output passed through, and exits 0 when
# COMMAND exited with CODE; otherwise it ends with the line "unexpected exit code: N (expected CODE)"
# and exits 1. For ctest tests that judge a script by its output (PASS_REGULAR_EXPRESSION), which
# ignores the exit code: with FAIL_REGULAR_EXPRESSION "unexpected exit code" beside it, a test passes
# only when both the output and the exit code are the ones expected.
[ $# -ge 2 ] || { echo "usage: expect_exit.sh CODE COMMAND [ARGS...]" >&2; exit 2; }
expected=$1
shift
"$@"
rc=$?
if [ "$rc" -ne "$expected" ]; then
  echo "unexpected exit code: $rc (expected $expected)"
  exit 1
fi
exit 0
