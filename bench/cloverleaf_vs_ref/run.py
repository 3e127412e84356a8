#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# bench/cloverleaf_vs_ref/run.py — the Fortran reference CloverLeaf 1.3 (1 MPI rank x T OpenMP
# threads) against stardiff-cloverleaf (STARPU_NCPU=T) on the same deck, alternating, median of
# N repeats with ranges. Both programs get the same clover.in (the deck, with --end-step and
# --summary-frequency written into it); the reference runs in a fresh temporary directory per
# run, as it reads ./clover.in and writes ./clover.out. Prints each run, a summary, and one line
#   cloverleaf_vs_ref deck=D steps=S ref_s=R stardiff_s=X ref_ke=K stardiff_ke=L ratio=X/R ...
# (times: medians of the process wall clocks; before it, one `flags` line per program: the
# reference's Fortran and C compile flags (from `make -n` of its build directory) and
# stardiff-cloverleaf's and libstardiff's C++ flags (from their build trees' flags.make); *_cpu_s their CPU times; ref_loop_s and
# stardiff_wall_s the programs' own timers; "na" where stardiff-cloverleaf is not built or with
# --ref-only; ratio = stardiff_s / ref_s). The reference comes from
# the cmake target cloverleaf_ref (built here when absent, unless --no-build); where the build
# tree says it cannot be built, prints "cloverleaf_vs_ref: skipped: REASON" and exits 0.
# Exit status: 0 done (or skipped), 1 a run failed, the step counts differ, or the reference did
# not pass its own test_problem check (not applied with --end-step: its KE is the full run's;
# ref_passed=na then), 2 bad arguments.
import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DEFAULT_DECK = os.path.join(ROOT, "..", "shared", "data", "cloverleaf", "CloverLeaf_ref",
                            "InputDecks", "clover_bm_short.in")
CFG_REL = os.path.join("bench", "cloverleaf_vs_ref", "cloverleaf_vs_ref.cfg")
STARDIFF_REL = os.path.join("apps", "cloverleaf", "stardiff-cloverleaf")


def die(msg, code=2):
    print(f"cloverleaf_vs_ref: error: {msg}", file=sys.stderr)
    sys.exit(code)


def positive_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}")
    if v < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1: {text!r}")
    return v


def nonnegative_int(text):
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}")
    if v < 0:
        raise argparse.ArgumentTypeError(f"must be >= 0: {text!r}")
    return v


def parse_args(argv):
    p = argparse.ArgumentParser(
        prog="run.py",
        description="Fortran reference CloverLeaf 1.3 vs stardiff-cloverleaf on one deck.")
    p.add_argument("--build-dir", default=os.path.join(ROOT, "build"),
                   help="stardiff build tree (default: %(default)s)")
    p.add_argument("--deck", default=DEFAULT_DECK, help="CloverLeaf input deck (default: clover_bm_short.in)")
    p.add_argument("--repeats", type=positive_int, default=3, help="runs of each program (default 3)")
    p.add_argument("--threads", type=positive_int, default=2,
                   help="OpenMP threads of the reference and STARPU_NCPU of stardiff (default 2)")
    p.add_argument("--end-step", type=positive_int, help="write end_step=N into the deck")
    p.add_argument("--summary-frequency", type=nonnegative_int,
                   help="write summary_frequency=N into the deck")
    p.add_argument("--ref", help="reference binary (default: from the build tree)")
    p.add_argument("--fullprec", action="store_true",
                   help="use the reference built with 17-digit field summaries (target cloverleaf_ref_fullprec; "
                        "the default build prints 4 digits, so its ke_rel_diff resolves about 1e-4 only)")
    p.add_argument("--stardiff", help="stardiff-cloverleaf binary (default: BUILD/" + STARDIFF_REL + ")")
    p.add_argument("--executor", choices=["starpu", "sequential"], default="starpu",
                   help="stardiff-cloverleaf --executor (default starpu)")
    p.add_argument("--ref-only", action="store_true", help="run the reference only")
    p.add_argument("--mpirun", action="store_true",
                   help="run the reference as `mpirun --allow-run-as-root -np 1 --bind-to none` "
                        "(default: standalone, Open MPI's singleton: also 1 rank)")
    p.add_argument("--no-build", action="store_true", help="never build the reference here")
    p.add_argument("--ref-out", help="copy the last reference run's clover.out to this file")
    p.add_argument("--keep", help="keep every run's directory under this (new or empty) directory")
    a = p.parse_args(argv)
    if not os.path.isfile(a.deck):
        die(f"deck {a.deck} does not exist")
    with open(a.deck, errors="replace") as f:
        text = f.read()
    if not re.search(r"^\s*\*clover\s*$", text, re.M) or not re.search(r"^\s*\*endclover\s*$", text, re.M):
        die(f"deck {a.deck} is not a CloverLeaf deck (no *clover ... *endclover block)")
    if a.keep and os.path.exists(a.keep) and (not os.path.isdir(a.keep) or os.listdir(a.keep)):
        die(f"--keep {a.keep} exists and is not an empty directory")
    if a.ref_out and os.path.isdir(a.ref_out):
        die(f"--ref-out {a.ref_out} is a directory")
    return a


def rewrite_deck(text, end_step, summary_frequency):
    """The deck with end_step / summary_frequency replaced (or added before *endclover)."""
    sets = []
    if end_step is not None:
        sets.append(("end_step", end_step))
    if summary_frequency is not None:
        sets.append(("summary_frequency", summary_frequency))
    if not sets:
        return text
    out = []
    for line in text.splitlines():
        if re.match(r"^\s*\*endclover\s*$", line):
            out.extend(f" {k}={v}" for k, v in sets)
        elif not re.match(r"^\s*state\b", line):
            was = line
            for k, _ in sets:
                line = re.sub(r"(^|\s)" + k + r"(\s*=\s*|\s+)\S+", "", line)
            if line != was and not line.strip():
                continue
        out.append(line)
    return "\n".join(out) + "\n"


def read_cfg(build_dir):
    path = os.path.join(build_dir, CFG_REL)
    cfg = {}
    if os.path.isfile(path):
        with open(path) as f:
            for line in f:
                k, _, v = line.rstrip("\n").partition("=")
                cfg[k] = v
    return path, cfg


def find_reference(a):
    """The reference binary, built if needed; None and a reason where it is unavailable."""
    if a.ref:
        if not os.access(a.ref, os.X_OK):
            die(f"--ref {a.ref} is not an executable")
        return a.ref, None
    path, cfg = read_cfg(a.build_dir)
    if not cfg:
        die(f"{path} not found: configure the build tree first "
            f"(cmake -S {ROOT} -B {a.build_dir}) or pass --build-dir/--ref")
    if "unavailable" in cfg:
        return None, cfg["unavailable"]
    exe = cfg["ref_fullprec" if a.fullprec else "ref"]
    if not os.access(exe, os.X_OK):
        if a.no_build:
            return None, f"{exe} is not built and --no-build was given"
        target = "cloverleaf_ref_fullprec" if a.fullprec else "cloverleaf_ref"
        print(f"cloverleaf_vs_ref: building the reference (cmake --build {a.build_dir} --target {target})",
              file=sys.stderr)
        r = subprocess.run(["cmake", "--build", a.build_dir, "--target", target])
        if r.returncode != 0 or not os.access(exe, os.X_OK):
            die(f"building the reference failed (target {target})", 1)
    return exe, None


def find_stardiff(a):
    if a.ref_only:
        return None, "--ref-only"
    exe = a.stardiff or os.path.join(a.build_dir, STARDIFF_REL)
    if not os.access(exe, os.X_OK):
        if a.stardiff:
            die(f"--stardiff {exe} is not an executable")
        return None, f"{exe} is not built"
    return exe, None


SUMMARY_RE = re.compile(r"^\s*step:\s*(\d+)\s+(.*)$")


def parse_clover_out(text):
    """Last field summary, steps, the reference's own wall clock and its test_problem verdict."""
    last = None
    for line in text.splitlines():
        m = SUMMARY_RE.match(line)
        if m:
            vals = [float(x.replace("D", "E")) for x in m.group(2).split()]
            if len(vals) == 7:
                last = (int(m.group(1)), vals)
    if last is None:
        return None
    walls = re.findall(r"Clover is finishing\s*\n\s*Wall clock\s+(\S+)", text)
    qa = re.search(r"Test problem\s+(\d+) is within\s+(\S+)% of the expected solution", text)
    if "This test is considered PASSED" in text:
        verdict = "PASSED"
    elif "NOT PASSED" in text:
        verdict = "NOT PASSED"
    else:
        verdict = "no test_problem"
    keys = ["volume", "mass", "density", "pressure", "ie", "ke", "te"]
    return {"steps": last[0], "summary": dict(zip(keys, last[1])),
            "loop_s": float(walls[-1]) if walls else None, "verdict": verdict,
            "qa": (int(qa.group(1)), qa.group(2)) if qa else None}


def flag_tokens(line):
    """The options of one compile command line (its '-' tokens but -c and -o)."""
    return " ".join(t for t in line.split()[1:] if t.startswith("-") and t not in ("-c", "-o"))


def reference_flags(exe):
    """Fortran and C compile flags of the reference's build directory (`make -n -B`)."""
    d = os.path.dirname(os.path.abspath(exe))
    if not os.path.isfile(os.path.join(d, "Makefile")):
        return "unknown", "unknown"
    try:
        r = subprocess.run(["make", "-n", "-B", "-C", d, "COMPILER=GNU", "MPI_COMPILER=mpif90",
                            "C_MPI_COMPILER=mpicc"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return "unknown", "unknown"
    fortran = c = "unknown"
    for line in r.stdout.splitlines():
        words = line.split()
        if not words:
            continue
        tool = os.path.basename(words[0])
        if tool == "mpif90" and fortran == "unknown":
            fortran = flag_tokens(line)
        elif tool == "mpicc" and c == "unknown":
            c = flag_tokens(line)
    return fortran, c


def cmake_cxx_flags(flags_make):
    """CXX_FLAGS of a CMake target's flags.make, or 'unknown'."""
    try:
        with open(flags_make) as f:
            for line in f:
                if line.startswith("CXX_FLAGS"):
                    return line.partition("=")[2].strip()
    except OSError:
        pass
    return "unknown"


def stardiff_flags(exe, build_dir):
    """C++ flags of stardiff-cloverleaf (its build tree) and of libstardiff (BUILD)."""
    app = cmake_cxx_flags(os.path.join(os.path.dirname(os.path.abspath(exe)), "CMakeFiles",
                                       "stardiff-cloverleaf.dir", "flags.make"))
    lib = cmake_cxx_flags(os.path.join(build_dir, "CMakeFiles", "stardiff.dir", "flags.make"))
    return app, lib


def child_cpu_s():
    """User + system CPU seconds of the children waited for so far."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_reference(exe, deck_text, a, workdir, mpirun):
    os.makedirs(workdir)
    with open(os.path.join(workdir, "clover.in"), "w") as f:
        f.write(deck_text)
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads))
    cmd = [exe]
    if a.mpirun:
        cmd = [mpirun, "--allow-run-as-root", "-np", "1", "--bind-to", "none",
               "-x", "OMP_NUM_THREADS"] + cmd
    c0, t0 = child_cpu_s(), time.perf_counter()
    with open(os.path.join(workdir, "stdout.txt"), "w") as so, \
         open(os.path.join(workdir, "stderr.txt"), "w") as se:
        r = subprocess.run(cmd, cwd=workdir, env=env, stdout=so, stderr=se)
    wall, cpu = time.perf_counter() - t0, child_cpu_s() - c0
    out_path = os.path.join(workdir, "clover.out")
    if r.returncode != 0 or not os.path.isfile(out_path):
        with open(os.path.join(workdir, "stderr.txt")) as f:
            tail = f.read()[-2000:]
        die(f"the reference exited with {r.returncode} in {workdir} (--keep DIR keeps it):\n{tail}", 1)
    with open(out_path) as f:
        res = parse_clover_out(f.read())
    if res is None:
        die(f"no field summary in {out_path}", 1)
    res["wall_s"], res["cpu_s"] = wall, cpu
    res["out"] = out_path
    return res


def run_stardiff(exe, deck_path, a):
    env = dict(os.environ, STARPU_NCPU=str(a.threads))
    env.setdefault("STARPU_SILENT", "1")
    env.setdefault("STARPU_HOME", os.path.join(a.build_dir, "starpu_home"))
    cmd = [exe, deck_path, "--json", "--executor", a.executor]
    c0, t0 = child_cpu_s(), time.perf_counter()
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall, cpu = time.perf_counter() - t0, child_cpu_s() - c0
    if r.returncode != 0:
        die(f"{' '.join(cmd)} exited with {r.returncode}:\n{r.stderr[-2000:]}", 1)
    try:
        j = json.loads(r.stdout)
        res = {"steps": int(j["steps"]), "summary": {k: float(j["summary"][k]) for k in
                                                      ["volume", "mass", "density", "pressure", "ie", "ke", "te"]},
               "own_s": float(j["wall_s"])}
    except (ValueError, KeyError, TypeError) as e:
        die(f"stardiff-cloverleaf --json printed no usable object ({e}):\n{r.stdout[:2000]}", 1)
    res["wall_s"], res["cpu_s"] = wall, cpu
    return res


def med_range(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return None, None, None
    return statistics.median(xs), min(xs), max(xs)


def fmt(x, spec=".3f"):
    return "na" if x is None else format(x, spec)


def main(argv):
    a = parse_args(argv)
    ref, why_ref = find_reference(a)
    if ref is None:
        print(f"cloverleaf_vs_ref: skipped: the Fortran reference is unavailable: {why_ref}")
        return 0
    sd, why_sd = find_stardiff(a)
    _, cfg = read_cfg(a.build_dir)
    mpirun = cfg.get("mpirun") or shutil.which("mpirun")
    if a.mpirun and not mpirun:
        die("--mpirun: mpirun not found")
    if sd is None:
        print(f"cloverleaf_vs_ref: stardiff-cloverleaf not run ({why_sd}): running the reference only")

    with open(a.deck, errors="replace") as f:
        deck_text = rewrite_deck(f.read(), a.end_step, a.summary_frequency)
    tmp = a.keep or tempfile.mkdtemp(prefix="cloverleaf_vs_ref.")
    os.makedirs(tmp, exist_ok=True)
    deck_path = os.path.join(tmp, "clover.in")
    with open(deck_path, "w") as f:
        f.write(deck_text)

    rf, rc_flags = reference_flags(ref)
    print(f"flags tool=reference fortran='{rf}' c='{rc_flags}'")
    if sd is not None:
        app_flags, lib_flags = stardiff_flags(sd, a.build_dir)
        print(f"flags tool=stardiff stardiff-cloverleaf='{app_flags}' libstardiff='{lib_flags}'")
    refs, sds = [], []
    status = 0
    load_start = os.getloadavg()[0]
    try:
        for i in range(a.repeats):
            order = ["ref", "sd"] if i % 2 == 0 else ["sd", "ref"]
            for who in order:
                if who == "ref":
                    r = run_reference(ref, deck_text, a, os.path.join(tmp, f"ref{i + 1}"), mpirun)
                    refs.append(r)
                    print(f"run tool=reference repeat={i + 1} wall_s={r['wall_s']:.3f} cpu_s={r['cpu_s']:.3f} loop_s={fmt(r['loop_s'])} "
                          f"steps={r['steps']} ke={r['summary']['ke']:.10g} verdict={r['verdict'].replace(' ', '_')}",
                          flush=True)
                elif sd is not None:
                    s = run_stardiff(sd, deck_path, a)
                    sds.append(s)
                    print(f"run tool=stardiff repeat={i + 1} wall_s={s['wall_s']:.3f} cpu_s={s['cpu_s']:.3f} own_s={s['own_s']:.3f} "
                          f"steps={s['steps']} ke={s['summary']['ke']:.10g}", flush=True)
        if a.ref_out:
            shutil.copyfile(refs[-1]["out"], a.ref_out)
            print(f"cloverleaf_vs_ref: copied {refs[-1]['out']} to {a.ref_out}")
    finally:
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)

    load_end = os.getloadavg()[0]
    last = refs[-1]
    rm, rlo, rhi = med_range([r["wall_s"] for r in refs])
    lm, llo, lhi = med_range([r["loop_s"] for r in refs])
    rc, rclo, rchi = med_range([r["cpu_s"] for r in refs])
    verdicts = sorted({r["verdict"] for r in refs})
    qa = f" (test problem {last['qa'][0]}: within {last['qa'][1]}% of the expected KE)" if last["qa"] else ""
    print(f"reference: {os.path.basename(a.deck)}, {last['steps']} steps, {a.threads} OpenMP thread(s), "
          f"1 MPI rank{' (mpirun)' if a.mpirun else ''}: wall {rm:.3f} s [{rlo:.3f}, {rhi:.3f}], "
          f"its own wall clock (hydro loop) {fmt(lm)} s [{fmt(llo)}, {fmt(lhi)}], "
          f"CPU {rc:.3f} s [{rclo:.3f}, {rchi:.3f}], "
          f"KE {last['summary']['ke']:.10g}, {'/'.join(verdicts)}{qa}")
    if any(r["verdict"] == "NOT PASSED" for r in refs):
        if a.end_step is None:
            print("cloverleaf_vs_ref: the reference did NOT pass its own check", file=sys.stderr)
            status = 1
        else:  # test_problem's KE is the full run's: not comparable after --end-step
            print("cloverleaf_vs_ref: the reference's test_problem check does not apply with --end-step",
                  file=sys.stderr)
    if any(r["steps"] != last["steps"] for r in refs):
        print("cloverleaf_vs_ref: the reference's step counts differ between runs", file=sys.stderr)
        status = 1
    sm = s_own = sd_ke = sc = None
    if sds:
        sm, slo, shi = med_range([s["wall_s"] for s in sds])
        s_own, olo, ohi = med_range([s["own_s"] for s in sds])
        sc, sclo, schi = med_range([s["cpu_s"] for s in sds])
        sd_ke = sds[-1]["summary"]["ke"]
        print(f"stardiff : {sds[-1]['steps']} steps, STARPU_NCPU={a.threads}, --executor {a.executor}: "
              f"wall {sm:.3f} s [{slo:.3f}, {shi:.3f}], its own wall_s {s_own:.3f} s [{olo:.3f}, {ohi:.3f}], "
              f"CPU {sc:.3f} s [{sclo:.3f}, {schi:.3f}], "
              f"KE {sd_ke:.10g}")
        if sds[-1]["steps"] != last["steps"]:
            print(f"cloverleaf_vs_ref: step counts differ (reference {last['steps']}, stardiff {sds[-1]['steps']})",
                  file=sys.stderr)
            status = 1
    ref_ke = last["summary"]["ke"]
    if verdicts == ["PASSED"]:
        passed = "yes"
    elif "NOT PASSED" in verdicts and a.end_step is None:
        passed = "no"
    else:
        passed = "na"
    ke_rel = None if sd_ke is None else abs(sd_ke - ref_ke) / abs(ref_ke)
    ratio = None if sm is None else sm / rm
    ratio_own = None if (s_own is None or lm is None) else s_own / lm
    print(f"cloverleaf_vs_ref deck={os.path.basename(a.deck)} steps={last['steps']} threads={a.threads} "
          f"repeats={a.repeats} ref_s={rm:.3f} stardiff_s={fmt(sm)} ref_ke={ref_ke:.10g} "
          f"stardiff_ke={fmt(sd_ke, '.10g')} ke_rel_diff={fmt(ke_rel, '.3g')} "
          f"ref_passed={passed} "
          f"ref_loop_s={fmt(lm)} stardiff_wall_s={fmt(s_own)} ref_cpu_s={rc:.3f} stardiff_cpu_s={fmt(sc)} "
          f"ratio_own_timers={fmt(ratio_own)} load_start={load_start:.2f} load_end={load_end:.2f} "
          f"ratio={fmt(ratio)}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
