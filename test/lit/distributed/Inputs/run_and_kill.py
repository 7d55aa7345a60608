"""Starts a ppc run (plain or under mpirun), waits for a moment mid-run, and
kills it with SIGKILL. Two modes:

  run_and_kill.py checkpoint DIR N -- COMMAND...
      waits until DIR/checkpoint.json names iteration N or later (or
      DIR/svi-checkpoint.json step N, a stochastic run's), then kills the
      whole run (every process: a power cut); prints the iteration.
  run_and_kill.py rank R -- COMMAND...
      waits for the run's first progress line, then kills MPI process R
      alone; prints how long the job took to end, its exit status and
      the end of its stderr.
Exits 1 if the moment never comes (60 s) or the job does not end (30 s)."""
import json
import os
import signal
import subprocess
import sys
import time

from mpi_processes import descendants, mpi_rank


def main():
    mode, arg = sys.argv[1], sys.argv[2]
    rest = sys.argv[3:]
    if mode == "checkpoint":
        target, rest = int(rest[0]), rest[1:]
    command = rest[rest.index("--") + 1:]
    err_path = os.environ.get("RUN_AND_KILL_STDERR", os.devnull)
    with open(err_path, "wb") as err:
        job = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
    deadline = time.time() + 60
    if mode == "checkpoint":
        manifests = [(os.path.join(arg, "checkpoint.json"), "iteration"),
                     (os.path.join(arg, "svi-checkpoint.json"), "step")]
        it = -1
        while time.time() < deadline and job.poll() is None and it < target:
            for manifest, key in manifests:
                try:
                    with open(manifest) as f:
                        it = max(it, json.load(f)[key])
                except (OSError, ValueError, KeyError):
                    pass
            time.sleep(0.01)
        if job.poll() is not None:
            print(f"the run ended (status {job.returncode}) before checkpoint {target}")
            return 1
        victims = descendants(job.pid) + [job.pid]
        for p in victims:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        job.wait()
        print(f"killed with SIGKILL after the checkpoint of iteration {it} or later")
        return 0
    rank = int(arg)
    while time.time() < deadline and job.poll() is None:
        if os.path.exists(err_path) and b"iteration" in open(err_path, "rb").read():
            break
        time.sleep(0.01)
    victim = next((p for p in descendants(job.pid) if mpi_rank(p) == rank), None)
    if victim is None or job.poll() is not None:
        print("no MPI process", rank, "to kill; the job's status:", job.poll())
        return 1
    os.kill(victim, signal.SIGKILL)
    start = time.time()
    try:
        job.wait(timeout=30)
    except subprocess.TimeoutExpired:
        for p in descendants(job.pid) + [job.pid]:
            os.kill(p, signal.SIGKILL)
        print("the job did not end within 30 s of its process", rank, "dying")
        return 1
    took = time.time() - start
    print(f"the job ended {'within 10 s' if took < 10 else f'after {took:.1f} s'}, status "
          f"{'nonzero' if job.returncode != 0 else 0}")
    sys.stdout.write(open(err_path, errors="replace").read()[-2000:])
    return 0

sys.exit(main())
