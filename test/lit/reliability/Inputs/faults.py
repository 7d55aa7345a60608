"""Fault tests of ppc (issue 29, item 7): real runs, stopped the hard way.

  faults.py kill     WORK EXAMPLES -- PPC...      kill -9 at five moments of a
      checkpointed run, then the same command with --resume: the outputs
      must be byte-identical to those of a run never stopped.
  faults.py signals  WORK EXAMPLES -- PPC...      SIGTERM and SIGINT while
      --out is written: --out holds a complete output (the previous one, or
      the new one when the signal came after the rename) or does not exist,
      and no temporary is left beside it.
  faults.py fullfs   WORK EXAMPLES -- PPC...      --out (and --checkpoint) on
      a full filesystem (a small tmpfs; needs root and mount, else skipped):
      exit status 1, a message naming the path, nothing half-written.
  faults.py mpi      WORK EXAMPLES -- MPIRUN... PPC   one process of an
      `mpirun -np 2` run killed with SIGKILL mid-run: the job ends within
      20 s, with a non-zero status and a message; nothing is written.

WORK is a scratch directory (emptied first), EXAMPLES the examples/
directory, and what follows "--" the command that runs ppc (mpirun's
included). Each check prints one line, which FileCheck verifies; details
that depend on timing (the exact iteration a kill landed in) are printed in
parentheses. The moments are events seen on the filesystem (a checkpoint's
manifest, a temporary file), not wall-clock times, so a slow or busy machine
only moves them a little. Timings of each part go to stderr."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "distributed", "Inputs"))
from mpi_processes import descendants, mpi_rank  # noqa: E402

WAIT_S = 60  # the longest any moment is waited for
# Under ./build.sh sanitize every ppc runs several times slower (and MPI's
# leak reports unwind in full): the same checks, with longer waits.
SLOW = int(os.environ.get("PPC_TEST_TIME_SCALE", "1"))  # lit.cfg.py: 8 under ASan
WAIT_S *= SLOW


def lda(examples, v, *more):
    return [os.path.join(examples, "lda.ppl"), "-p", f"V={v}", "--infer",
            os.path.join(examples, "data", "ap_small_d200_w500.csv"), "--map", "theta=doc", "--map", "x=word",
            "--weight", "count", "--tol", "0", "--threads", "1", *more]


def run(cmd, timeout=120 * SLOW):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def must(cmd, what):
    rc, out, err = run(cmd)
    if rc != 0:
        print(f"{what} failed (status {rc}): {' '.join(cmd)}\n{err[-2000:]}")
        sys.exit(1)
    return err


def listdir(path):
    try:
        return os.listdir(path)
    except OSError:
        return []


def files(path):
    """Every file under path (relative name -> bytes)."""
    out = {}
    for root, _, names in os.walk(path):
        for n in names:
            p = os.path.join(root, n)
            with open(p, "rb") as f:
                out[os.path.relpath(p, path)] = f.read()
    return out


def results(path):
    """What a run's --out must reproduce: every posterior CSV byte for byte,
    and summary.json without its timing fields (and without the command
    line, which names --out and --resume): the ELBO trace as written (its
    numbers' text), the iteration count, convergence and the options."""
    got = files(path)
    view = {n: b for n, b in got.items() if n.endswith(".csv")}
    other = sorted(n for n in got if not n.endswith(".csv") and n != "summary.json")
    if other:
        view["(other files)"] = other
    if "summary.json" in got:
        s = json.loads(got["summary.json"], parse_float=str)
        opts = dict(s.get("options", {}))
        opts.pop("command", None)
        view["summary.json"] = {"elbo": s.get("elbo"), "iterations": s.get("iterations"),
                                "converged": s.get("converged"), "options": opts}
    return view


def difference(a, b):
    """'' when the two results() agree, else the first difference."""
    for name in sorted(set(a) | set(b)):
        if name not in a or name not in b:
            return f"{name} only in {'the first' if name in a else 'the second'}"
        x, y = a[name], b[name]
        if x == y:
            continue
        if name == "summary.json":
            for key in x:
                if x[key] != y[key]:
                    if key == "elbo" and isinstance(x[key], list) and isinstance(y[key], list):
                        i = next((i for i, (u, v) in enumerate(zip(x[key], y[key])) if u != v),
                                 min(len(x[key]), len(y[key])))
                        return (f"summary.json: ELBO traces of {len(x[key])} and {len(y[key])} iterations, first "
                                f"difference at iteration {i + 1}")
                    return f"summary.json: {key} {x[key]!r} and {y[key]!r}"
        if isinstance(x, bytes):
            lx, ly = x.split(b"\n"), y.split(b"\n")
            i = next((i for i, (u, v) in enumerate(zip(lx, ly)) if u != v), min(len(lx), len(ly)))
            return f"{name}: {len(x)} and {len(y)} bytes, first difference on line {i + 1}"
        return f"{name}: {x!r} and {y!r}"
    return ""


def default_signals():
    # lit's workers ignore SIGINT, and an ignored signal stays ignored across
    # exec: give ppc the dispositions a shell gives a foreground command.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)


def start(cmd, err_path):
    with open(err_path, "wb") as err:
        return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True,
                                preexec_fn=default_signals)


def kill_job_and_leftovers(job):
    """Whatever is left of an mpirun job (a hung job, orphaned ranks) goes."""
    for p in descendants(job.pid):
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass
    kill_group(job)


def kill_group(job):
    try:
        os.killpg(job.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    job.wait()


# ---------------------------------------------------------------------------
# a) kill -9 during a checkpointed run, then --resume.

def state_iterations(names):
    """Iterations of the durable state files (state-N-0.bin) in a listing."""
    out = []
    for n in names:
        if n.startswith("state-") and n.endswith("-0.bin"):
            try:
                out.append(int(n[len("state-"):-len("-0.bin")]))
            except ValueError:
                pass
    return out


def manifest_iteration(ck):
    try:
        with open(os.path.join(ck, "checkpoint.json")) as f:
            return json.load(f)["iteration"]
    except (OSError, ValueError, KeyError):
        return 0


def kill_part(work, examples, ppc):
    iters, marks = 100, [20, 40, 55, 70]
    base = ppc + lda(examples, 500, "--iters", str(iters))
    whole = os.path.join(work, "whole")
    must(base + ["--out", whole], "the run never stopped")
    reference = results(whole)

    # Each moment: (description, a test on the checkpoint directory that
    # says "kill now", and a fallback: for the short windows, the checkpoint
    # at which to kill anyway (saying so) if the window was never seen; for
    # "half", wait for one more checkpoint, then half an iteration). The test
    # sees the listing of the directory (None while it does not exist) and
    # the iteration of the manifest.
    def when_dir(names, it):
        return names is not None

    def after(k):
        return lambda names, it: it >= k

    def writing_state(k):  # a state file being written: its temporary is there
        return lambda names, it: it >= k and any(n.endswith(".bin.tmp") for n in names)

    def writing_manifest(k):  # the state is durable, the manifest not yet renamed
        return lambda names, it: it >= k and "checkpoint.json.tmp" in names

    moments = [
        ("when the checkpoint directory appears", when_dir, None),
        (f"just after checkpoint {marks[0]}", after(marks[0]), None),
        (f"while a state file is written, after checkpoint {marks[1]}", writing_state(marks[1]), marks[1] + 12),
        (f"while the manifest is written, after checkpoint {marks[2]}", writing_manifest(marks[2]), marks[2] + 12),
        (f"half an iteration after checkpoint {marks[3]}", after(marks[3]), "half"),
    ]
    for number, (what, ready, fallback) in enumerate(moments, 1):
        ck = os.path.join(work, f"ck{number}")
        out = os.path.join(work, f"resumed{number}")
        cmd = base + ["--checkpoint", ck, "--checkpoint-every", "1"]
        job = start(cmd, os.path.join(work, f"killed{number}.err"))
        deadline, it, note = time.time() + WAIT_S, 0, ""
        while job.poll() is None and time.time() < deadline:
            names = os.listdir(ck) if os.path.isdir(ck) else None
            if names is not None and state_iterations(names):
                it = manifest_iteration(ck)
            if ready(names, it):
                break
            if isinstance(fallback, int) and it >= fallback:
                note = "; its temporary was never seen in time, killed at once"
                break
            time.sleep(0.0002)
        else:
            kill_group(job)
            print(f"kill -9 #{number} ({what}): the run ended (status {job.returncode}) or stalled before the "
                  f"moment; nothing checked")
            continue
        if fallback == "half":  # measure one iteration, then kill in the middle of the next
            t0 = time.time()
            while job.poll() is None and manifest_iteration(ck) < it + 1 and time.time() < deadline:
                time.sleep(0.0002)
            period = time.time() - t0
            time.sleep(period / 2)
            note = f"; one iteration took {period * 1000:.1f} ms"
        kill_group(job)
        if job.returncode != -signal.SIGKILL:
            print(f"kill -9 #{number} ({what}): the run ended (status {job.returncode}) before the kill")
            continue
        at = manifest_iteration(ck)
        note += "; left: " + " ".join(sorted(listdir(ck)))
        rc, _, err = run(cmd + ["--resume", ck, "--out", out])
        said = next((l for l in err.splitlines() if l.startswith(("resuming after", "no checkpoint in"))), "nothing")
        said = said.replace(ck, "DIR")
        if rc != 0:
            print(f"kill -9 #{number} ({what}): the resumed run failed with status {rc}: "
                  f"{err.strip().splitlines()[-1] if err.strip() else ''}")
            continue
        diff = difference(reference, results(out))
        print(f"kill -9 #{number} ({what}; killed with checkpoint {at} on disk{note}): resumed "
              f"('{said}'); " + (f"output DIFFERS from the run never stopped: {diff}" if diff else
                                 "output identical to the run never stopped"))
        print(f"kill -9 #{number}: checkpoint directory after the resumed run: {' '.join(sorted(listdir(ck)))}")


# ---------------------------------------------------------------------------
# b) SIGTERM and SIGINT while --out is written.

def out_state(out, previous, new):
    """How --out looks: 'absent', 'the previous output', 'the new output',
    or a description of what is wrong."""
    if not os.path.lexists(out):
        return "absent"
    if not os.path.isdir(out):
        return "PARTIAL: not a directory"
    got = files(out)
    if got == previous:
        return "the previous output"
    if not difference(new, results(out)):
        return "the new output"
    return "PARTIAL: " + (difference(new, results(out)) or "?") + f" (files: {' '.join(sorted(got))})"


def signals_part(work, examples, ppc):
    # A large --out (8.3 MB: phi is 20 x 20000): LDA with the vocabulary
    # padded to 20000 words, one iteration. The previous output comes from a
    # run with another seed, so that the two can be told apart.
    base = ppc + lda(examples, 20000, "--iters", "1", "-q")
    previous_dir, new_dir = os.path.join(work, "previous"), os.path.join(work, "new")
    must(base + ["--seed", "1", "--out", previous_dir], "the run writing the previous output")
    must(base + ["--out", new_dir], "the run writing the new output")
    previous, new = files(previous_dir), results(new_dir)
    if not difference(new, results(previous_dir)):
        print("the previous and the new output do not differ: nothing can be told apart")
        return

    def temporaries(parent):
        return sorted(n for n in listdir(parent) if n != "out")

    def in_tmp(parent, name):
        return any(name in listdir(os.path.join(parent, t)) for t in temporaries(parent))

    def ino(path):
        try:
            return os.stat(path).st_ino
        except OSError:
            return None

    # (name, test on the parent directory, given --out's inode before the run)
    moments = [
        ("while phi.csv is formatted", lambda parent, before: bool(temporaries(parent))),
        ("while phi.csv is written", lambda parent, before: in_tmp(parent, "phi.csv")),
        ("while theta.csv is written", lambda parent, before: in_tmp(parent, "theta.csv")),
        ("after summary.json, before the rename", lambda parent, before: in_tmp(parent, "summary.json")),
        ("after the rename, on the way out",
         lambda parent, before: ino(os.path.join(parent, "out")) not in (None, before) and not temporaries(parent)),
    ]
    cases = [(sig, m, True) for sig in (signal.SIGTERM, signal.SIGINT) for m in moments]
    cases += [(sig, moments[2], False) for sig in (signal.SIGTERM, signal.SIGINT)]
    left, stopped = 0, 0
    for number, (sig, (what, ready), had_previous) in enumerate(cases, 1):
        parent = os.path.join(work, f"case{number}")
        os.makedirs(parent)
        out = os.path.join(parent, "out")
        if had_previous:
            shutil.copytree(previous_dir, out)
        before = ino(out)
        name = f"{signal.Signals(sig).name}, {what}, {'previous output present' if had_previous else 'no previous output'}"
        job = start(base + ["--out", out], os.path.join(parent, "..", f"case{number}.err"))
        deadline = time.time() + WAIT_S
        while job.poll() is None and time.time() < deadline and not ready(parent, before):
            time.sleep(0.0002)
        seen = " ".join(f"{t}:[{' '.join(sorted(listdir(os.path.join(parent, t))))}]" for t in temporaries(parent))
        job.send_signal(sig)
        try:
            job.wait(timeout=20)
            status = (f"killed by {signal.Signals(-job.returncode).name}" if job.returncode < 0
                      else f"status {job.returncode}")
            stopped += job.returncode != 0 and bool(seen)
        except subprocess.TimeoutExpired:
            kill_group(job)
            status = "HUNG: still running 20 s after the signal"
        state = out_state(out, previous, new)
        ok = state in ("the previous output", "the new output") or (state == "absent" and not had_previous)
        print(f"{name}: --out {'intact' if ok else 'NOT INTACT'} ({state}; {status}; "
              f"seen at the signal: {seen or 'no temporary'})")
        tmps = temporaries(parent)
        if tmps:
            left += 1
            print(f"{name}: temporary left beside --out: " +
                  " ".join(f"{t}:[{' '.join(sorted(listdir(os.path.join(parent, t))))}]".replace(t, ".out.tmp-XXXXXX")
                           for t in tmps))
        else:
            print(f"{name}: no temporary left beside --out")
    # The signals must have stopped ppc while it wrote --out (not after it
    # was done): else the checks above checked nothing.
    aimed = sum(1 for _, (what, _), _ in cases if "after the rename" not in what)
    print(f"signals that stopped ppc while it wrote --out: {stopped} of the {aimed} aimed there")
    print(f"temporaries left beside --out after {left} of {len(cases)} signals" if left
          else f"no temporary left beside --out after any of the {len(cases)} signals")


# ---------------------------------------------------------------------------
# c) a full filesystem.

def fullfs_part(work, examples, ppc):
    checks = ["--out (64 KiB)", "--out (256 KiB)", "--out over a previous output (256 KiB)", "--checkpoint (64 KiB)"]
    if os.geteuid() != 0:
        print("full filesystem: skipped: not running as root (no tmpfs can be mounted)")
        return
    mnt = os.path.join(work, "mnt")
    os.makedirs(mnt)
    m = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mnt],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if m.returncode != 0:
        why = m.stdout.decode(errors="replace").strip().splitlines()
        print(f"full filesystem: skipped: cannot mount a tmpfs ({why[0].strip() if why else f'status {m.returncode}'})")
        return
    if subprocess.run(["umount", mnt]).returncode != 0:
        subprocess.run(["umount", "-l", mnt])
    # The previous output: a small run (the Gaussian mixture), a few KiB.
    small = os.path.join(work, "small")
    must(ppc + [os.path.join(examples, "gaussian_mixture.ppl"), "--infer", os.path.join(examples, "data", "faithful.csv"),
                "--iters", "3", "-q", "--out", small], "the small run")
    for check in checks:
        size = "64k" if "64 KiB" in check else "256k"
        m = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", mnt],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if m.returncode != 0:
            why = m.stdout.decode(errors="replace").strip().splitlines()
            print(f"full filesystem, {check}: skipped: cannot mount a tmpfs ({why[0].strip() if why else m.returncode})")
            continue
        try:
            previous = None
            if "previous" in check:
                shutil.copytree(small, os.path.join(mnt, "out"))
                previous = files(os.path.join(mnt, "out"))
            if check.startswith("--checkpoint"):
                target = os.path.join(mnt, "ck")
                cmd = ppc + lda(examples, 500, "--iters", "5", "-q", "--checkpoint", target, "--checkpoint-every", "1")
            else:
                target = os.path.join(mnt, "out")
                cmd = ppc + lda(examples, 500, "--iters", "5", "-q", "--out", target)
            rc, _, err = run(cmd)
            message = next((l for l in err.splitlines() if "error" in l), err.strip()[-300:])
            message = re.sub(r"\.out\.tmp-[A-Za-z0-9]{6}", ".out.tmp-XXXXXX", message)
            clean = rc == 1 and message.startswith("ppc: error: ") and "No space left on device" in message
            print(f"full filesystem, {check}: " + ("exit status 1, " if rc == 1 else f"EXIT STATUS {rc}, ") +
                  ("an error naming the directory" if clean and mnt in message else
                   "NO CLEAR ERROR naming the directory") + f" ('{message.replace(mnt, 'MNT')}')")
            if not check.startswith("--checkpoint"):
                print(f"full filesystem, {check}: the error names --out itself: "
                      + ("yes" if f"'{target}'" in message else "no, it names a file of its temporary directory"))
            listing = []
            for root, dirs, names in os.walk(mnt):
                for n in dirs + names:
                    p = os.path.join(root, n)
                    listing.append(os.path.relpath(p, mnt) + ("" if os.path.isdir(p) else f" ({os.path.getsize(p)} bytes)"))
            listing.sort()
            if previous is not None:
                kept = os.path.isdir(target) and files(target) == previous
                extra = [x for x in listing if not x.startswith("out")]
                print(f"full filesystem, {check}: " + ("the previous output intact" if kept else "the previous output CHANGED")
                      + (f", and also: {', '.join(extra)}" if extra else ", nothing else written"))
            elif check.startswith("--checkpoint"):
                extra = [x for x in listing if x != "ck"]
                print(f"full filesystem, {check}: " +
                      (f"left in the filesystem: {', '.join(extra)}" if extra else "nothing left but the empty directory"))
            else:
                print(f"full filesystem, {check}: " +
                      (f"left in the filesystem: {', '.join(listing)}" if listing else "nothing written"))
        finally:
            u = subprocess.run(["umount", mnt], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            if u.returncode != 0:
                subprocess.run(["umount", "-l", mnt])


# ---------------------------------------------------------------------------
# d) an MPI process killed mid-run.

def mpi_part(work, examples, mpirun_ppc):
    for rank in (1, 0):
        parent = os.path.join(work, f"rank{rank}")
        os.makedirs(parent)
        out, err_path = os.path.join(parent, "out"), os.path.join(work, f"rank{rank}.err")
        cmd = mpirun_ppc + lda(examples, 500, "--iters", "100000", "--out", out)
        job = start(cmd, err_path)
        deadline, reached = time.time() + WAIT_S, False
        while job.poll() is None and time.time() < deadline:  # mid-run: iteration 20 done
            with open(err_path, "rb") as f:
                if b"iteration   20 " in f.read():
                    reached = True
                    break
            time.sleep(0.005)
        victim = next((p for p in descendants(job.pid) if mpi_rank(p) == rank), None) if reached else None
        if victim is None:
            kill_group(job)
            print(f"kill -9 of MPI process {rank} mid-run: no such process at iteration 20 (status {job.returncode})")
            continue
        os.kill(victim, signal.SIGKILL)
        t0 = time.time()
        try:
            job.wait(timeout=20)
            took = time.time() - t0
            ended = f"the job ended within 20 s ({took:.1f} s), " + (
                f"status nonzero ({job.returncode})" if job.returncode != 0 else "STATUS 0")
        except subprocess.TimeoutExpired:
            ended = "HUNG: the job still runs 20 s after"
        kill_job_and_leftovers(job)
        print(f"kill -9 of MPI process {rank} mid-run: {ended}")
        err = open(err_path, errors="replace").read()
        said = next((l.strip() for l in err.splitlines() if "exited on signal" in l or "noticed" in l), None)
        print(f"kill -9 of MPI process {rank} mid-run: message: " +
              (said if said else f"NONE; its stderr ends with {err[-300:]!r}"))
        print(f"kill -9 of MPI process {rank} mid-run: " +
              (f"written beside --out: {' '.join(sorted(listdir(parent)))}" if listdir(parent) else "nothing written"))
    mpi_checkpoint(work, examples, mpirun_ppc)


def mpi_checkpoint(work, examples, mpirun_ppc):
    """Process 1 killed in a checkpointed run; the job resumed under mpirun."""
    iters, mark = 40, 20
    base = mpirun_ppc + lda(examples, 500, "--iters", str(iters))
    whole, ck, out = (os.path.join(work, n) for n in ("whole2", "ck2", "resumed2"))
    must(base + ["-q", "--out", whole], "the run under mpirun never stopped")
    cmd = base + ["--checkpoint", ck, "--checkpoint-every", "1"]
    job = start(cmd, os.path.join(work, "ck2.err"))
    deadline, it = time.time() + WAIT_S, 0
    while job.poll() is None and time.time() < deadline and it < mark:
        if state_iterations(listdir(ck)):
            it = manifest_iteration(ck)
        time.sleep(0.0002)
    victim = next((p for p in descendants(job.pid) if mpi_rank(p) == 1), None) if it >= mark else None
    what = f"kill -9 of MPI process 1 after checkpoint {mark}"
    if victim is None:
        kill_group(job)
        print(f"{what}: the run ended (status {job.returncode}) or stalled before the moment")
        return
    os.kill(victim, signal.SIGKILL)
    try:
        job.wait(timeout=20)
        ended = "the job ended within 20 s, " + (f"status nonzero" if job.returncode != 0 else "STATUS 0")
    except subprocess.TimeoutExpired:
        ended = "HUNG: the job still runs 20 s after"
    kill_job_and_leftovers(job)
    at = manifest_iteration(ck)
    rc, _, err = run(cmd + ["--resume", ck, "--out", out])
    said = next((l for l in err.splitlines() if l.startswith(("resuming after", "no checkpoint in"))), "nothing")
    if rc != 0:
        print(f"{what}: {ended}; the resumed run failed with status {rc}: {err.strip()[-300:]}")
        return
    diff = difference(results(whole), results(out))
    print(f"{what}: {ended}; resumed under mpirun -np 2 ('{said.replace(ck, 'DIR')}', checkpoint {at} on disk at "
          f"the kill): " + (f"output DIFFERS from the run never stopped: {diff}" if diff else
                            "output identical to the run never stopped"))
    print(f"{what}: checkpoint directory after the resumed run: {' '.join(sorted(listdir(ck)))}")


def main():
    part, work, examples = sys.argv[1], sys.argv[2], sys.argv[3]
    command = sys.argv[sys.argv.index("--") + 1:]
    # A tmpfs left mounted under WORK by an earlier run that was killed.
    with open("/proc/mounts") as f:
        for line in f:
            point = line.split()[1].replace("\\040", " ")
            if point.startswith(os.path.abspath(work) + os.sep):
                subprocess.run(["umount", "-l", point])
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    t0 = time.time()
    {"kill": kill_part, "signals": signals_part, "fullfs": fullfs_part, "mpi": mpi_part}[part](
        os.path.abspath(work), os.path.abspath(examples), command)
    sys.stdout.flush()
    print(f"faults.py {part}: {time.time() - t0:.1f} s", file=sys.stderr)
    return 0


sys.exit(main())
