#!/usr/bin/python3
"""ppc's dense products against OpenBLAS's, on the AVX-512 and AVX2 paths.

    /usr/bin/python3 bench/dense_products.py

Builds bench/dense_products (needs libopenblas-dev) and runs it once per
vector ISA this CPU has: ppc's kernels for the level (runtime/VectorIsa.h)
against OpenBLAS with the matching kernels (OPENBLAS_CORETYPE SkylakeX for
AVX-512, Haswell for AVX2). ppc keeps its own kernels only where they are
faster on both paths (docs/performance.md, "Dense products").
"""
import os
import subprocess
import sys

import peers

ROOT = peers.ROOT


def main():
    build = os.path.join(ROOT, "build")
    if subprocess.run(["cmake", "--build", build, "--target", "ppc_dense_products"],
                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
        sys.exit("dense_products.py: cannot build ppc_dense_products; install libopenblas-dev "
                 "(apt-get install libopenblas-dev) and re-run cmake")
    print(peers.describe_host(), flush=True)
    best = peers.host_level()
    levels = ["x86-64-v4", "x86-64-v3"] if best == "x86-64-v4" else ["x86-64-v3"] if best == "x86-64-v3" else []
    for level in levels + ["x86-64"]:
        env = dict(os.environ, OPENBLAS_CORETYPE=peers.LEVELS[level][1], OPENBLAS_NUM_THREADS="1")
        print(subprocess.run([os.path.join(build, "bin", "ppc_dense_products"), level], env=env, check=True,
                             capture_output=True, text=True).stdout, end="", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
