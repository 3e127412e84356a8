#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# apps/cloverleaf/compare_summary.sh REFERENCE DRIVER DECK [ARGS...]: runs the driver on the
# deck and compares its field summary rows (lines starting " step:") with the reference's,
# character by character (every printed digit at every printed step). Exit 0 when they are
# the same and there is at least one; the differing rows otherwise.
ref=$1; shift
drv=$1; shift
out=$("$drv" "$@") || { echo "driver failed (exit $?)"; exit 1; }
want=$(grep '^ step:' "$ref")
got=$(printf '%s\n' "$out" | grep '^ step:')
[ -n "$want" ] || { echo "no summary rows in $ref"; exit 1; }
if [ "$want" = "$got" ]; then
  echo "summary rows identical: $(printf '%s\n' "$want" | wc -l) rows"
  exit 0
fi
echo "summary rows differ:"
printf '%s\n' "$want" > /tmp/cmp_want.$$; printf '%s\n' "$got" > /tmp/cmp_got.$$
diff /tmp/cmp_want.$$ /tmp/cmp_got.$$; rm -f /tmp/cmp_want.$$ /tmp/cmp_got.$$
exit 1
