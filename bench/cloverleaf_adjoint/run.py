#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# bench/cloverleaf_adjoint/run.py — the table of issue 18's adjoint targets: stardiff-cloverleaf
# --adjoint on a deck (default apps/cloverleaf/decks/clover_bm_short.in) for each snapshot
# count (default 5,10,29,all; "all" = save-all), one run each, printing per run
#   cloverleaf_adjoint deck=D steps=S snapshots=N checkpointing=C primal_s=P forward_s=F
#     adjoint_s=A adjoint_factor=X recomputed_steps=R tape_peak_mb=T snapshot_peak_mb=M
#     peak_rss_mb=Q J=... hash=...
# (adjoint_factor = (forward_s + adjoint_s) / primal_s, the driver's; peak_rss_mb from
# /usr/bin/time when present, else na), then with --disk MB one more run at the first
# snapshot count with STARPU_LIMIT_CPU_MEM=MB and StarPU's disk node on (STARPU_DISK_SWAP in a
# temporary directory, unistd backend), tagged disk=1: its gradient hash must equal the
# in-memory run's. Options: --driver PATH (default build/apps/cloverleaf/stardiff-cloverleaf),
# --end-step N, --snapshots LIST, --disk MB, --tiles T, --passive-dt. Save-all holds every
# step's checkpoints (about 630 MB per step at 960²): choose --end-step to fit memory.
# Exit: 0 done, 1 a run failed or the disk run's gradient differs, 2 bad arguments.
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def die(msg, code=2):
    print("cloverleaf_adjoint: error: " + msg, file=sys.stderr)
    sys.exit(code)


def one(args, snaps, env_extra=None, tag=""):
    cmd = [args.driver, args.deck, "--adjoint", "--json", "--checkpoints", snaps]
    if args.end_step:
        cmd += ["--end-step", str(args.end_step)]
    if args.tiles:
        cmd += ["--tiles", str(args.tiles)]
    if args.passive_dt:
        cmd += ["--passive-dt"]
    env = dict(os.environ)
    env.update(env_extra or {})
    timer = shutil.which("time") or ("/usr/bin/time" if os.path.exists("/usr/bin/time") else None)
    rss_file = None
    if timer:
        fd, rss_file = tempfile.mkstemp(prefix="cl_adj_rss_")
        os.close(fd)
        cmd = [timer, "-f", "%M", "-o", rss_file] + cmd
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        print("cloverleaf_adjoint: run failed (exit %d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr[-2000:]))
        return None
    j = json.loads(p.stdout)
    rss = "na"
    if rss_file:
        with open(rss_file) as f:
            txt = f.read().strip().splitlines()
        os.unlink(rss_file)
        if txt and txt[-1].isdigit():
            rss = "%.0f" % (int(txt[-1]) / 1024.0)
    a = j["adjoint"]
    print("cloverleaf_adjoint deck=%s steps=%d snapshots=%s checkpointing=%s primal_s=%.3f forward_s=%.3f "
          "adjoint_s=%.3f adjoint_factor=%.2f recomputed_steps=%d tape_peak_mb=%.1f snapshot_peak_mb=%.1f "
          "peak_rss_mb=%s J=%.17g hash=%s%s" % (
              os.path.basename(args.deck), j["steps"], snaps, a["checkpointing"].replace(" ", ""), a["primal_s"],
              a["forward_s"], a["adjoint_s"], a["adjoint_factor"], a["recomputed_steps"], a["peak_bytes"] / 1e6,
              a["peak_snapshot_bytes"] / 1e6, rss, a["J"], a["gradient_hash"], tag), flush=True)
    return j


def main():
    ap = argparse.ArgumentParser(description="stardiff-cloverleaf --adjoint: time, recomputations, memory per "
                                             "snapshot count")
    ap.add_argument("--driver", default=os.path.join(ROOT, "build", "apps", "cloverleaf", "stardiff-cloverleaf"))
    ap.add_argument("--deck", default=os.path.join(ROOT, "apps", "cloverleaf", "decks", "clover_bm_short.in"))
    ap.add_argument("--end-step", type=int, default=0)
    ap.add_argument("--snapshots", default="5,10,29,all")
    ap.add_argument("--disk", type=int, default=0, help="STARPU_LIMIT_CPU_MEM (MB) of the disk-node run")
    ap.add_argument("--tiles", type=int, default=0)
    ap.add_argument("--passive-dt", action="store_true")
    args = ap.parse_args()
    if args.end_step < 0:
        die("--end-step must be >= 1")
    if args.disk < 0 or (args.tiles and args.tiles < 1):
        die("--disk and --tiles must be positive")
    snaps = [s.strip() for s in args.snapshots.split(",") if s.strip()]
    if not snaps or any(s != "all" and (not s.isdigit() or int(s) < 1) for s in snaps):
        die("--snapshots needs a comma list of counts >= 1 or 'all'")
    if not os.path.isfile(args.deck):
        die("no deck " + args.deck)
    if not os.access(args.driver, os.X_OK):
        die("no driver " + args.driver + " (build stardiff-cloverleaf)")
    ok = True
    first = None
    for s in snaps:
        j = one(args, s)
        ok = ok and j is not None
        if first is None and j is not None:
            first = (s, j)
    if args.disk and first:
        d = tempfile.mkdtemp(prefix="cl_adj_disk_")
        try:
            env = {"STARPU_LIMIT_CPU_MEM": str(args.disk), "STARPU_DISK_SWAP": d,
                   "STARPU_DISK_SWAP_BACKEND": "unistd", "STARPU_DISK_SWAP_SIZE": "20000"}
            j = one(args, first[0], env, " disk=1 limit_mb=%d" % args.disk)
            if j is None or j["adjoint"]["gradient_hash"] != first[1]["adjoint"]["gradient_hash"]:
                print("cloverleaf_adjoint: the disk-node run's gradient differs from the in-memory run's")
                ok = False
        finally:
            shutil.rmtree(d, ignore_errors=True)
    sys.exit(0 if ok else 1)


main()
