#!/bin/bash
# run-one.sh FILE NAME SIDFILE: run test_NAME of test file FILE, as
# tests/vm/run.sh starts it: in a session of its own (setsid), whose id it
# writes to SIDFILE so that the runner can kill all that is left of it.
# TEST_TMP, TEST_PORT: see lib/common.sh. It makes TEST_TMP, parents and
# all, first (the runner's SIDFILE is beside it).
set -u
mkdir -p "$TEST_TMP"
read -r -a stat </proc/self/stat
echo "${stat[5]}" >"$3"
lib=${0%/*}
. "$lib/common.sh"
. "$lib/roce.sh"
. "$lib/iwarp.sh"
. "$lib/ulp.sh"
. "$lib/ucx.sh"
. "$lib/fabric.sh"
# shellcheck source=/dev/null
. "$1"
set -e
"test_$2"
