#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# tests/plot_bench_test.sh SCRIPT SAMPLE OUTDIR — runs scripts/plot-bench.py on SAMPLE and
# checks that ldlt_vs_peers.png, pf_vs_peers.png and task_overhead.png are PNG files.
# Prints "stardiff-test-skipped:" (ctest: skipped) when no python3 has matplotlib.
script="$1" sample="$2" out="$3"
for py in /usr/bin/python3 python3; do
  if "$py" -c 'import matplotlib' 2>/dev/null; then
    rm -rf "$out"
    "$py" "$script" -o "$out" "$sample" || exit 1
    for f in ldlt_vs_peers pf_vs_peers task_overhead; do
      "$py" -c 'import sys; sys.exit(open(sys.argv[1], "rb").read(8) != b"\x89PNG\r\n\x1a\n")' "$out/$f.png" \
        || { echo "plot_bench: $out/$f.png is not a PNG"; exit 1; }
    done
    echo "plot_bench: charts written by $py"
    exit 0
  fi
done
echo "stardiff-test-skipped: no python3 with matplotlib (Debian: python3-matplotlib)"
