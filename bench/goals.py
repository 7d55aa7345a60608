#!/usr/bin/python3
"""Every README performance goal on this host, on each vector ISA path and
thread count, in one invocation: the goal benches run one after another and
a table of their goal lines ends the output.

    /usr/bin/python3 bench/goals.py [--runs 3] [--benches gmm,bernoulli,lda]
        [--paths native,x86-64-v3] [--threads 1,2] [--step-timeout 900] [--deadline S] [--json FILE]

--benches: gmm (bench/gmm.py on digits), bernoulli (bench/bernoulli_mixture.py),
lda (bench/lda_ap.py, without gensim, which no goal names): issue 30's goals,
the default. Also heldout (bench/lda_heldout.py), linreg and logreg
(bench/linear_regression.py, bench/logistic_regression.py), and
svi (bench/lda_svi.py: it writes corpora of up to 500 M tokens; give it a
--step-timeout of an hour or more; it needs gensim, which
bench/portable's bundle leaves out).
"all" is every one but svi.

--paths: "native" is the host's best vector ISA; x86-64-v3 is the AVX2 path
(--cpu), which an AVX-512 host can run too. The default is native, plus
x86-64-v3 where the host has AVX-512, so one invocation covers both ISAs.

Each bench prints its host, numpy's BLAS and its figures as it would alone
(each step's output is passed through as it runs); its goal lines ("goal
met" / "GOAL NOT MET") are collected. The exit status is 0 when every goal
was met, 1 when one was not, 2 when a bench failed, ran past
--step-timeout or printed no goal line, or when nothing ran (a failed
bench's goals count as not met). --json writes the table.

--deadline SECONDS bounds the whole invocation (a lent machine's time, a
batch job's limit): the bench running when it passes is stopped, the ones
after it are listed as not run, and the table of what ran is printed and
written as usual (exit status 2). SIGTERM and Ctrl-C do the same.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peers  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# name: (script, its fixed arguments). Each takes --runs (but lda_svi.py),
# --threads (gmm.py: 1 or 2) and --cpu.
BENCHES = {
    "gmm": ("gmm.py", ["--dataset", "digits"]),
    "bernoulli": ("bernoulli_mixture.py", []),
    "lda": ("lda_ap.py", ["--skip-gensim"]),
    "heldout": ("lda_heldout.py", []),
    "linreg": ("linear_regression.py", []),
    "logreg": ("logistic_regression.py", []),
    "svi": ("lda_svi.py", []),
}
DEFAULT = ["gmm", "bernoulli", "lda"]
ALL = [b for b in BENCHES if b != "svi"]

MET, NOT_MET = "goal met: ", "!! GOAL NOT MET on this host: "


def goal_lines(output):
    """(text, met) for each goal line a bench printed."""
    found = []
    for line in output.splitlines():
        line = line.strip()
        if line.startswith(MET):
            found.append((line[len(MET):], True))
        elif line.startswith(NOT_MET):
            found.append((line[len(NOT_MET):], False))
    return found


# The bench running (its Popen) and why the invocation stops, if it must
# (SIGTERM, Ctrl-C, --deadline): SIGTERM's handler kills that bench's
# process group, and the loop then starts no other.
RUNNING = {"proc": None, "stop": None}


def on_sigterm(signum, frame):
    RUNNING["stop"] = "SIGTERM"
    if RUNNING["proc"] is not None:
        os.killpg(RUNNING["proc"].pid, signal.SIGKILL)


def run_step(command, timeout):
    """Runs a bench, passing its output through; (exit status, or None when
    it ran past `timeout` seconds and was killed; its output; seconds)."""
    start = time.perf_counter()
    lines = []
    # A session of its own, so that a timeout kills the bench's ppc too.
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          start_new_session=True) as proc:
        RUNNING["proc"] = proc
        expired = threading.Event()

        def kill():
            expired.set()
            os.killpg(proc.pid, signal.SIGKILL)

        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            for line in proc.stdout:
                print(line, end="", flush=True)
                lines.append(line)
            rc = proc.wait()
        except BaseException:  # Ctrl-C reaches this process only: end the bench's session too
            os.killpg(proc.pid, signal.SIGKILL)
            raise
        finally:
            timer.cancel()
            RUNNING["proc"] = None
    return (None if expired.is_set() else rc), "".join(lines), time.perf_counter() - start


def parse_list(text, allowed, what):
    items = [t.strip() for t in text.split(",") if t.strip()]
    bad = [t for t in items if t not in allowed]
    if bad or not items:
        sys.exit(f"goals.py: {what} {', '.join(bad) or '(none)'} not among {', '.join(allowed)}")
    return items


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="each bench's --runs")
    ap.add_argument("--benches", default=",".join(DEFAULT), help=f"comma-separated: {', '.join(BENCHES)}, all")
    ap.add_argument("--paths", default=None, help="comma-separated: native and --cpu levels (default: native, "
                                                  "and x86-64-v3 on an AVX-512 host)")
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts")
    ap.add_argument("--step-timeout", type=float, default=900.0, help="seconds one bench may run")
    ap.add_argument("--deadline", type=float, default=None,
                    help="seconds the whole invocation may run: the bench running then is stopped, the rest are "
                         "not started, and the table of what ran is printed")
    ap.add_argument("--json", metavar="FILE", help="write the table as JSON")
    ap.add_argument("--allow-reference-blas", action="store_true", help="passed to every bench")
    args = ap.parse_args()
    if args.runs < 1:
        sys.exit("goals.py: --runs must be at least 1")

    benches = ALL if args.benches == "all" else parse_list(args.benches, list(BENCHES), "--benches")
    best = peers.host_level()
    default_paths = ["native"] + (["x86-64-v3"] if best == "x86-64-v4" else [])
    paths = default_paths if args.paths is None else parse_list(args.paths, ["native"] + list(peers.LEVELS), "--paths")
    try:
        threads = sorted({int(t) for t in args.threads.split(",") if t.strip()})
    except ValueError:
        sys.exit(f"goals.py: --threads {args.threads!r} is not a comma-separated list of integers")
    if not threads or threads[0] < 1:
        sys.exit("goals.py: --threads needs counts of at least 1")

    if args.deadline is not None and not args.deadline > 0:
        sys.exit("goals.py: --deadline must be a positive number of seconds")

    host = peers.describe_cpu()
    print(f"goals on {host}", flush=True)
    steps, skipped = [], []
    for name in benches:
        script, fixed = BENCHES[name]
        for path in paths:
            for t in threads:
                if name == "gmm" and t > 2:
                    skipped.append(f"gmm, {path} path, {t} threads (gmm.py runs 1 or 2)")
                    continue
                command = [sys.executable, os.path.join(HERE, script), *fixed]
                if name != "svi":  # lda_svi.py has no --runs
                    command += ["--runs", str(args.runs)]
                command += ["--threads", str(t)]
                if path != "native":
                    command += ["--cpu", path]
                if args.allow_reference_blas:
                    command += ["--allow-reference-blas"]
                steps.append((name, path, t, command))

    # SIGTERM (`timeout`, a batch system's limit) ends the invocation as
    # Ctrl-C does: the bench running is killed and the table of what ran is
    # still printed and written.
    signal.signal(signal.SIGTERM, on_sigterm)
    start = time.perf_counter()
    rows, failed = [], False
    for name, path, t, command in steps:
        isa = peers.LEVELS[best if path == "native" else path][0]
        row = {"bench": name, "path": path, "isa": isa, "threads": t, "seconds": 0.0, "goals": []}
        rows.append(row)
        left = None if args.deadline is None else args.deadline - (time.perf_counter() - start)
        if RUNNING["stop"] is None and left is not None and left <= 0:
            RUNNING["stop"] = "--deadline"
        if RUNNING["stop"] is not None:
            row["status"] = f"not run ({RUNNING['stop']})"
            failed = True
            continue
        print(f"\n=== {name}: {isa} path, {t} thread(s): {' '.join(command[1:])}", flush=True)
        timeout = args.step_timeout if left is None else min(args.step_timeout, left)
        step_start = time.perf_counter()
        try:
            rc, output, seconds = run_step(command, timeout)
        except KeyboardInterrupt:
            RUNNING["stop"] = "Ctrl-C"
            row["status"] = "stopped (Ctrl-C)"
            row["seconds"] = round(time.perf_counter() - step_start, 1)
            failed = True
            continue
        row["goals"] = [{"goal": g, "met": m} for g, m in goal_lines(output)]
        row["seconds"] = round(seconds, 1)
        if rc is None and RUNNING["stop"] is None and left is not None and timeout < args.step_timeout:
            RUNNING["stop"] = "--deadline"
        if rc != 0 and RUNNING["stop"] is not None:
            row["status"] = f"stopped ({RUNNING['stop']})"
        else:
            row["status"] = "timed out" if rc is None else ("ok" if rc == 0 else f"exit {rc}")
        if rc != 0:
            failed = True
    signal.signal(signal.SIGTERM, signal.SIG_DFL)

    print(f"\n=== goals on {host}")
    met = total = 0
    for row in rows:
        cpu = "" if row["path"] == "native" else f" (--cpu {row['path']})"
        where = f"{row['bench']}, {row['isa']} path{cpu}, {row['threads']} thread(s)"
        if row["status"].startswith("not run"):
            print(f"  FAILED  {where}: {row['status']}")
        elif row["status"] != "ok":
            print(f"  FAILED  {where}: {row['status']} after {row['seconds']:.0f} s")
        elif not row["goals"]:
            failed = True  # every bench here checks a goal: none printed is a broken bench
            print(f"  FAILED  {where}: printed no goal line")
        for g in row["goals"]:
            total += 1
            met += g["met"]
            print(f"  {'met   ' if g['met'] else 'NOT MET'} {where}: {g['goal']}")
    for what in skipped:
        print(f"  skipped {what}")
    if not any(row["status"] == "ok" for row in rows):
        failed = True
        print("  no bench ran to its end")
    print(f"{met} of {total} goals met" + ("; and a failure above" if failed else ""))
    if args.json:
        tmp = args.json + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"host": host, "rows": rows}, f, indent=1)
        os.replace(tmp, args.json)
    return 2 if failed else (0 if met == total else 1)


if __name__ == "__main__":
    sys.exit(main())
