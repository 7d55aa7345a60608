#!/bin/bash
# Packs what the goal benches need into one folder that runs on any x86-64
# Linux host without ppc's packages: ppc and ppc_peak_fma with every shared
# library they load (the dynamic loader and libc included), and Debian's
# python3 with numpy, scipy, scikit-learn and OpenBLAS (the peers, as in
# README). Copy the folder into a checkout there (tracked files only; no
# build needed) and run bench/portable/run_bundle.sh in it.
#
#   bench/portable/make_bundle.sh [OUT]     (default: .portable, about 57 MiB)
#
# Two libraries LLVM links but ppc never calls are replaced by empty
# stand-ins, deliberately: libz3 (the static analyzer's solver) and
# libicudata (libxml2's code pages, 31 MB). libLLVM binds lazily, so the
# stand-ins load and nothing calls into them.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=$(realpath -m "${1:-$ROOT/.portable}")  # absolute, no trailing slash: the packing runs elsewhere
BUILD=${BUILD:-$ROOT/build}
for tool in patchelf xz gcc ldd; do
  command -v $tool >/dev/null || { echo "make_bundle.sh: needs $tool (apt-get install patchelf xz-utils gcc)" >&2; exit 1; }
done
for b in ppc ppc_peak_fma; do
  [ -x "$BUILD/bin/$b" ] || { echo "make_bundle.sh: build $BUILD/bin/$b first (cmake --build build --target $b)" >&2; exit 1; }
done
/usr/bin/python3 -c "import sklearn, scipy, numpy, threadpoolctl, joblib" 2>/dev/null ||
  { echo "make_bundle.sh: install the peers first: apt-get install python3-sklearn libopenblas0-pthread" >&2; exit 1; }
BLAS=$(readlink -f /usr/lib/x86_64-linux-gnu/libblas.so.3)
case $BLAS in *openblas*) ;; *) echo "make_bundle.sh: libblas.so.3 is $BLAS, not OpenBLAS (apt-get install libopenblas0-pthread)" >&2; exit 1 ;; esac

STAGE=$(mktemp -d); trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE"/{lib,bin,py/usr/bin,py/usr/lib/python3/dist-packages,standin} "$OUT.tmp"
rm -rf "$OUT.tmp"; mkdir -p "$OUT.tmp/tools"
closure() { ldd "$@" 2>/dev/null | awk '/=>/ {print $3} /ld-linux/ {print $1}' | grep '^/' | sort -u; }

# Unpacking needs only these, uncompressed: the loader, libc, liblzma and xz.
cp -L /lib64/ld-linux-x86-64.so.2 "$(command -v xz)" "$OUT.tmp/tools/"
for l in $(closure "$(command -v xz)"); do cp -L "$l" "$OUT.tmp/tools/"; done

cp "$BUILD/bin/ppc" "$BUILD/bin/ppc_peak_fma" "$(command -v patchelf)" "$STAGE/bin/"
for l in $(closure "$STAGE"/bin/*); do cp -L "$l" "$STAGE/lib/"; done

P=$STAGE/py/usr
cp -L /usr/bin/python3.11 "$P/bin/"
cp -rL /usr/lib/python3.11 "$P/lib/" 2>/dev/null || true  # a few dangling links in the stdlib
(cd "$P/lib/python3.11" && rm -rf test idlelib tkinter ensurepip lib2to3 turtledemo pydoc_data config-3.11* \
  site-packages dist-packages sqlite3 dbm curses venv)
(cd "$P/lib/python3.11/lib-dynload" && rm -f _tkinter* _sqlite3* _dbm* _gdbm* _curses* readline* _ssl* _hashlib* \
  _test* _ctypes_test* xxlimited* _xxtest*)
for m in numpy scipy sklearn joblib threadpoolctl.py; do cp -rL "/usr/lib/python3/dist-packages/$m" "$P/lib/python3/dist-packages/"; done
# Subpackages no bench loads (the smoke test below runs every peer the benches
# fit), so that the bundle and a checkout fit a 64 MiB transfer.
(cd "$P/lib/python3/dist-packages/scipy" && rm -rf signal odr misc datasets cluster io fftpack)
(cd "$P/lib/python3/dist-packages/sklearn" && rm -rf ensemble datasets feature_extraction gaussian_process \
  feature_selection covariance neural_network impute compose cross_decomposition semi_supervised experimental)
(cd "$P/lib/python3/dist-packages/numpy" && rm -rf distutils f2py core/_simd.*)
(cd "$P/lib/python3.11" && rm -rf asyncio turtle.py)
find "$P" \( -name tests -o -name __pycache__ \) -type d -prune -exec rm -rf {} +
find "$P" \( -name '*.pyx' -o -name '*.pxd' -o -name '*.c' -o -name '*.h' -o -name '*.pyc' -o -name '*.pyi' \) -delete
for l in $(closure "$P/bin/python3.11" $(find "$P" -name '*.so*' -type f)); do
  [ -e "$STAGE/lib/$(basename "$l")" ] || cp -L "$l" "$STAGE/lib/"
done
cp -L "$BLAS" "$(readlink -f /usr/lib/x86_64-linux-gnu/liblapack.so.3)" "$STAGE/lib/"

# The peers as the benches use them, from the staged tree alone: a pruned
# module that one of them needs fails here, not on the other host.
PYTHONHOME=$P PYTHONNOUSERSITE=1 PYTHONDONTWRITEBYTECODE=1 "$P/bin/python3.11" -W ignore -c '
import sys, numpy as np
from scipy.sparse import csr_matrix
from scipy.special import digamma, gammaln, logsumexp, multigammaln
from scipy.stats import dirichlet, wishart
from sklearn.decomposition import LatentDirichletAllocation
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import BayesianRidge, LogisticRegression
from sklearn.metrics import adjusted_rand_score
from sklearn.mixture import BayesianGaussianMixture
import sklearn
assert sklearn.__file__.startswith(sys.prefix), sklearn.__file__
X = np.random.default_rng(0).random((60, 3))
BayesianGaussianMixture(n_components=2, max_iter=3).fit(X)
LatentDirichletAllocation(n_components=2, max_iter=2).fit(csr_matrix((X * 4).astype(int)))
BayesianRidge().fit(X, X[:, 0]); LogisticRegression().fit(X, X[:, 0] > 0.5)
adjusted_rand_score([0, 1], [1, 0])
' || { echo "make_bundle.sh: the staged peers do not run (above)" >&2; exit 1; }

echo 'const char icudt72_dat[64] = {0};' > "$STAGE/standin/icu.c"
gcc -shared -fPIC -o "$STAGE/lib/libicudata.so.72" -Wl,-soname,libicudata.so.72 "$STAGE/standin/icu.c"
: > "$STAGE/standin/z3.c"
gcc -shared -fPIC -o "$STAGE/lib/libz3.so.4" -Wl,-soname,libz3.so.4 "$STAGE/standin/z3.c"
# Libraries with a search path of their own (Open MPI's, OpenBLAS's) look beside themselves instead.
for f in "$STAGE"/lib/*; do
  readelf -d "$f" 2>/dev/null | grep -q 'RUNPATH\|RPATH' && patchelf --set-rpath '$ORIGIN' "$f"
done

(cd "$STAGE" && tar cf - lib bin | xz -T0 -9 > "$OUT.tmp/lib.tar.xz")
(cd "$STAGE" && tar cf - py | xz -T0 -9 > "$OUT.tmp/py.tar.xz")
rm -rf "$OUT"; mv "$OUT.tmp" "$OUT"
echo "$OUT: $(du -sh --apparent-size "$OUT" | cut -f1); on the other host: bench/portable/run_bundle.sh $(basename "$OUT") [bench/goals.py's flags]"
