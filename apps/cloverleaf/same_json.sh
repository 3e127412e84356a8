#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# apps/cloverleaf/same_json.sh DRIVER DECK STEPS: runs the driver with --json on the deck for
# STEPS steps with the sequential executor (1 and 3 tiles) and with StarPU under
# STARPU_SCHED = eager, lws and dmda (default tiles and 5 tiles), and requires the JSON
# objects, less wall_s, executor and tiles, to be byte-identical (every dt and the final
# field summary at %.17g: bitwise agreement).
drv=$1; deck=$2; steps=$3
strip() { sed -E 's/"(wall_s|executor|tiles)":[^,]*,//g'; }
ref=$("$drv" "$deck" --json --end-step "$steps" --executor sequential --tiles 1 | strip) || { echo "sequential run failed"; exit 1; }
[ -n "$ref" ] || { echo "no JSON"; exit 1; }
fail=0
check() {
  got=$("$@" | strip)
  if [ "$got" != "$ref" ]; then echo "DIFFERS: $*"; echo "  want $ref"; echo "  got  $got"; fail=1; else echo "same: $*"; fi
}
check "$drv" "$deck" --json --end-step "$steps" --executor sequential --tiles 3
for s in eager lws dmda; do
  STARPU_SCHED=$s check "$drv" "$deck" --json --end-step "$steps"
  STARPU_SCHED=$s check "$drv" "$deck" --json --end-step "$steps" --tiles 5
done
exit $fail
