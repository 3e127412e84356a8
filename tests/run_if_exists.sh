#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/run_if_exists.sh FILE COMMAND [ARGS...] — runs COMMAND (exec) when FILE exists;
# otherwise prints "stardiff-test-skipped: FILE is absent" (ctest: skipped) and exits 0.
if [ -e "$1" ]; then
  shift
  exec "$@"
fi
echo "stardiff-test-skipped: $1 is absent"
