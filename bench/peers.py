"""What every bench script shares: the packages the peers need (one clear
message where one is missing), the host a figure ran on (CPU, vector ISA,
L2), numpy's BLAS (the peers run on an optimized one, as their users' pip
wheels do, or the script refuses), `--cpu` for ppc (and the matching
OpenBLAS kernels for the peers), the host's peak multiply-add rate, and loud
lines when a README goal is not reached here.

Debian's python3-sklearn and python3-gensim (and the numpy and scipy they
bring) are seen only by /usr/bin/python3, not by another interpreter that may
come first on PATH. Debian's numpy links whatever libblas.so.3 is installed:
netlib's reference BLAS unless libopenblas0-pthread takes it over.

Call `early_setup()` before numpy is imported: thread counts and the
OpenBLAS kernel family are read from the environment when it loads.
"""
import argparse
import importlib
import os
import subprocess
import sys

INSTALL = "apt-get install python3-sklearn python3-gensim libopenblas0-pthread"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# ppc's --cpu levels, their vector ISA, and the OpenBLAS kernels that match.
LEVELS = {
    "x86-64": ("SSE2", "Prescott"),
    "x86-64-v2": ("SSE2", "Nehalem"),
    "x86-64-v3": ("AVX2", "Haswell"),
    "x86-64-v4": ("AVX-512", "SkylakeX"),
}


def require(*modules):
    """Exits with what to install if any of `modules` cannot be imported."""
    missing = []
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    if missing:
        sys.exit(f"{os.path.basename(sys.argv[0])}: {sys.executable} cannot import {', '.join(missing)}; "
                 f"install the peers with `{INSTALL}` and run the script with /usr/bin/python3")


def add_arguments(ap, threads=True):
    """--cpu and --allow-reference-blas (and --threads) for a script's parser."""
    ap.add_argument("--cpu", default=None, choices=sorted(LEVELS) + ["native"],
                    help="run ppc with --cpu (e.g. x86-64-v3: the AVX2 path on an AVX-512 host); the peers' "
                         "OpenBLAS uses the matching kernels")
    ap.add_argument("--allow-reference-blas", action="store_true",
                    help="report ratios even when numpy runs on netlib's reference BLAS (unfair to the peers)")
    if threads:
        ap.add_argument("--threads", type=int, default=1)


def early_setup():
    """Before numpy is imported: BLAS/OpenMP threads as --threads, and the
    OpenBLAS kernels of --cpu's level (OPENBLAS_CORETYPE)."""
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--cpu", default=None)
    known, _ = ap.parse_known_args()
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
        os.environ[var] = str(known.threads)
    # The peers get the kernels of the ISA ppc runs: --cpu's level, else the
    # host's best. Debian's OpenBLAS 0.3.21 predates Zen 4 and 5 and picks its
    # AVX2 (Haswell) kernels on those AVX-512 CPUs, where pip's newer builds
    # pick the AVX-512 ones; a user's own OPENBLAS_CORETYPE is kept.
    level = known.cpu if known.cpu in LEVELS else host_level()
    global _coretype_note
    preset = os.environ.get("OPENBLAS_CORETYPE")
    if preset and preset.lower() != LEVELS[level][1].lower():
        _coretype_note = (f"; OPENBLAS_CORETYPE={preset} from the environment, not {LEVELS[level][1]}, "
                          f"the kernels of the {LEVELS[level][0]} path ppc runs (unset it for a like-for-like peer)")
    os.environ.setdefault("OPENBLAS_CORETYPE", LEVELS[level][1])


# Said beside numpy's BLAS when the environment chose other OpenBLAS kernels.
_coretype_note = ""


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def host_level():
    flags = cpu_flags()
    if {"avx512f", "avx512dq", "avx512vl", "avx512bw"} <= flags:
        return "x86-64-v4"
    if {"avx2", "fma"} <= flags:
        return "x86-64-v3"
    return "x86-64"


def describe_cpu():
    """One line: the CPU, its cores and L2, and its best vector ISA."""
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            model = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    l2 = subprocess.run(["getconf", "LEVEL2_CACHE_SIZE"], capture_output=True, text=True).stdout.strip()
    l2 = f"{int(l2) // 1024} KiB L2 per core" if l2.isdigit() and int(l2) > 0 else "L2 unknown"
    best = host_level()
    return f"{model}, {os.cpu_count()} logical cores, {l2}; best vector ISA {LEVELS[best][0]} ({best})"


def describe_host(cpu=None):
    """describe_cpu(), and the vector ISA ppc runs here."""
    run = cpu if cpu and cpu != "native" else host_level()
    return (f"{describe_cpu()}; ppc runs the {LEVELS[run][0]} path" +
            (f" (--cpu {cpu})" if cpu and cpu != "native" else ""))


def numpy_blas(allow_reference):
    """The BLAS numpy uses, as a line; exits when it is the reference BLAS
    (peers slowed down, ratios inflated) unless allowed."""
    import numpy as np
    np.dot(np.ones((64, 64)), np.ones((64, 64)))  # make sure the library is loaded
    found = []
    try:
        from threadpoolctl import threadpool_info
        for lib in threadpool_info():
            if lib.get("user_api") == "blas":
                found.append(f"{lib.get('internal_api')} {lib.get('version') or ''} "
                             f"({lib.get('architecture') or 'architecture unknown'}, "
                             f"{lib.get('threading_layer') or 'threading unknown'}, "
                             f"{lib.get('num_threads')} thread(s))".replace("  ", " "))
    except ImportError:
        pass
    if found:
        return "numpy's BLAS: " + "; ".join(found) + _coretype_note
    message = ("numpy runs on the reference BLAS (netlib's libblas.so.3): scikit-learn is several times slower "
               f"than its users' pip installs. Install an optimized one (`{INSTALL}`)")
    if not allow_reference:
        sys.exit(f"{os.path.basename(sys.argv[0])}: {message}, or pass --allow-reference-blas to report anyway.")
    return "numpy's BLAS: REFERENCE (netlib) -- ratios against the peers are inflated"


def ppc_cpu_args(cpu):
    return ["--cpu", cpu] if cpu else []


_PEAK_BUILT = False


def peak_fma(cpu=None, threads=1):
    """The host's peak double-precision multiply-adds per second on the vector
    ISA ppc runs (bench/peak_fma: independent chains of FMAs), in G/s per
    core, with `threads` cores running them at once (as a run on that many
    threads does: two busy cores of a virtual machine may be slower than
    one)."""
    global _PEAK_BUILT
    build = os.path.join(ROOT, "build")
    if not _PEAK_BUILT:
        subprocess.run(["cmake", "--build", build, "--target", "ppc_peak_fma"], stdout=subprocess.DEVNULL, check=True)
        _PEAK_BUILT = True
    level = cpu if cpu and cpu != "native" else host_level()
    out = subprocess.run([os.path.join(build, "bin", "ppc_peak_fma"), level, str(threads)], capture_output=True,
                         text=True, check=True).stdout
    return float(out.split()[0])


def measured_beside(cpu, threads, run):
    """run() with the peak rate (peak_fma) measured just before and just
    after it: (run's result, the two rates' mean). The host's speed moves by
    10-20% within minutes, so a floor from one rate measured at the start of
    a script can be off by as much for a run minutes later."""
    before = peak_fma(cpu, threads)
    result = run()
    return result, (before + peak_fma(cpu, threads)) / 2


def goal(text, met):
    """A README goal, checked on this host: loud when it is not reached."""
    if met:
        print(f"  goal met: {text}")
    else:
        bar = "!" * 78
        print(f"  {bar}\n  !! GOAL NOT MET on this host: {text}\n  {bar}")


def posterior(out, variable):
    """The standard parameters of a posterior ppc wrote to `out` (--out), one
    row per element: the columns summary.json lists as its parameters (the
    index columns and summaries around them left out)."""
    import json
    import numpy as np
    columns = json.load(open(os.path.join(out, "summary.json")))["posteriors"][variable]
    path = os.path.join(out, columns["file"])
    with open(path) as f:
        header = f.readline().strip().split(",")
    wanted = [header.index(c) for c in columns["parameters"]]
    return np.loadtxt(path, delimiter=",", skiprows=1, usecols=wanted, ndmin=2)


def regression_arguments(description):
    """The flags of the regression benches (linear_regression.py,
    logistic_regression.py), parsed; prints the host and numpy's BLAS."""
    import argparse
    import tempfile
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--rows", type=int, default=1000000)
    ap.add_argument("--cols", type=int, default=50)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(), "ppc_regression"))
    add_arguments(ap)
    args = ap.parse_args()
    os.makedirs(args.workdir, exist_ok=True)
    print(f"{describe_host(args.cpu)}; {args.threads} thread(s), {args.runs} runs")
    print(numpy_blas(args.allow_reference_blas))
    return args


def gemv_ms(X, runs):
    """The median time of one GEMV X v (numpy on its BLAS), in ms."""
    import statistics
    import time
    import numpy as np
    v = np.ones(X.shape[1])
    times = []
    for _ in range(max(5, runs)):
        start = time.perf_counter()
        X @ v
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def iteration_ms(summary):
    """A ppc run's time per iteration (summary.json): the median time between
    iterations, which leaves out what the first and the final block do once."""
    import statistics
    t = summary["time"]
    return statistics.median(b - a for a, b in zip(t, t[1:])) * 1000


def write_design_csv(path, X, y):
    """Columns x0..x{D-1} and y, written once (to a temporary name, then renamed)."""
    import numpy as np
    if os.path.exists(path):
        return
    with open(path + ".tmp", "w") as f:
        f.write(",".join([f"x{j}" for j in range(X.shape[1])] + ["y"]) + "\n")
        np.savetxt(f, np.column_stack([X, y]), delimiter=",", fmt="%.17g")
    os.replace(path + ".tmp", path)
