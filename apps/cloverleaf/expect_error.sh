#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# apps/cloverleaf/expect_error.sh DRIVER DECK REGEX: the driver must exit 2 on the deck and
# its stderr must match the extended regular expression REGEX.
drv=$1; deck=$2; re=$3
err=$("$drv" "$deck" 2>&1 >/dev/null); rc=$?
echo "exit $rc: $err"
[ "$rc" -eq 2 ] || { echo "expected exit 2"; exit 1; }
printf '%s\n' "$err" | grep -Eq -- "$re" || { echo "message does not match: $re"; exit 1; }
exit 0
