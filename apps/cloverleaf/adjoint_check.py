#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# apps/cloverleaf/adjoint_check.py — checks of stardiff-cloverleaf --adjoint (its JSON).
#   fd DRV DECK ARGS...      --fd-check 1e-6: every state's dobj_dstate density and energy
#                            within 1e-6 (relative, floor 1e-3) of the central differences,
#                            and the recording reproduces the run (recorded_matches_primal).
#   taylor DRV DECK ARGS...  --taylor: the Taylor test passed (remainder order >= 1.8).
#   same DRV DECK [COMMON] -- ARGS1 -- ARGS2 ...: J, dobj_dstate and the gradient hash bitwise equal
#                            for every argument set (Revolve vs save-all, executors); an
#                            argument NAME=VALUE sets that environment variable for its run.
#   differ DRV DECK -- ARGS1 -- ARGS2: the gradients of the two runs differ (> 1e-6 relative
#                            in some state value): e.g. --passive-dt against active dt.
# Prints what it compared; exit 0 pass, 1 fail.
import json
import os
import subprocess
import sys


def run(drv, deck, args):
    env = dict(os.environ)
    for a in [a for a in args if "=" in a and not a.startswith("-")]:
        k, v = a.split("=", 1)
        env[k] = v
    cmd = [drv, deck, "--adjoint", "--json"] + [a for a in args if not ("=" in a and not a.startswith("-"))]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        print("FAILED (exit %d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr))
        sys.exit(1)
    return json.loads(p.stdout)


def split(rest):
    """ARGS before the first -- go to every set."""
    common, sets, cur = [], [], None
    for a in rest:
        if a == "--":
            cur = []
            sets.append(cur)
        elif cur is None:
            common.append(a)
        else:
            cur.append(a)
    return [common + s for s in sets]


def main():
    mode, drv, deck, rest = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    ok = True
    if mode == "fd":
        j = run(drv, deck, ["--fd-check", "1e-6"] + rest)
        if not j["adjoint"]["recorded_matches_primal"]:
            print("recording differs from the run")
            ok = False
        for a, f in zip(j["dobj_dstate"], j["fd_dstate"]):
            for k in ("density", "energy"):
                tol = 1e-6 * max(abs(f[k]), 1e-3)
                good = abs(a[k] - f[k]) <= tol
                ok = ok and good
                print("state %d %s: adjoint %.12e fd %.12e %s" % (a["state"], k, a[k], f[k], "ok" if good else "FAIL"))
    elif mode == "taylor":
        j = run(drv, deck, ["--taylor"] + rest)
        t = j["taylor"]
        print("taylor: rates %s passed %s" % (t["rates"], t["passed"]))
        ok = t["passed"] and t["min_rate"] >= 1.8
    elif mode in ("same", "differ"):
        sets = split(rest)
        res = [run(drv, deck, s) for s in sets]
        key = lambda j: (j["adjoint"]["J"], json.dumps(j["dobj_dstate"]), j["adjoint"]["gradient_hash"])
        for s, j in zip(sets, res):
            print("%s: J %.17g hash %s recomputed %d" % (" ".join(s), j["adjoint"]["J"], j["adjoint"]["gradient_hash"],
                                                         j["adjoint"]["recomputed_steps"]))
        if mode == "same":
            ok = all(key(j) == key(res[0]) for j in res)
        else:
            diff = 0.0
            for a, b in zip(res[0]["dobj_dstate"], res[1]["dobj_dstate"]):
                for k in ("density", "energy"):
                    diff = max(diff, abs(a[k] - b[k]) / max(abs(a[k]), abs(b[k]), 1e-300))
            print("largest relative difference %.3e" % diff)
            ok = diff > 1e-6
    else:
        print("unknown mode " + mode)
        sys.exit(2)
    print("PASSED" if ok else "FAILED")
    sys.exit(0 if ok else 1)


main()
