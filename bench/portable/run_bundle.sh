#!/bin/bash
# On a host without ppc's packages, in a checkout that holds a bundle from
# make_bundle.sh: unpacks it, points ppc, ppc_peak_fma and python at its
# libraries (patchelf: their loader and search path), and runs
# bench/goals.py with the given flags under the bundle's python. Prints the
# host first: CPU, vector ISA, caches, the peak multiply-add rates.
#
#   bench/portable/run_bundle.sh BUNDLE [--runs 3 --benches gmm,bernoulli,lda ...]
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
[ $# -ge 1 ] || { echo "usage: run_bundle.sh BUNDLE [goals.py flags]" >&2; exit 1; }
H=$(cd "$1" && pwd) || exit 1; shift
T=$H/tools; X=$H/unpacked
[ -f "$H/lib.tar.xz" ] && [ -f "$H/py.tar.xz" ] ||
  { echo "run_bundle.sh: $H is not a bundle of make_bundle.sh" >&2; exit 1; }
# The bundle's own xz, or the host's where tools/ was left behind (to fit a
# transfer limit: tools/ holds a second libc).
if [ -x "$T/xz" ]; then unxz() { "$T/ld-linux-x86-64.so.2" --library-path "$T" "$T/xz" -dc "$1"; }
elif command -v xz >/dev/null; then unxz() { xz -dc "$1"; }
elif command -v python3 >/dev/null; then
  unxz() { python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), sys.stdout.buffer)' "$1"; }
else echo "run_bundle.sh: $H has no tools/xz and this host neither xz nor python3" >&2; exit 1; fi
# Unpacked once per bundle: the stamp names the archives it came from, so an
# interrupted unpacking or a newer bundle copied over this one unpacks again.
stamp=$(stat -c '%s %Y' "$H/lib.tar.xz" "$H/py.tar.xz" | tr '\n' ' ')
if [ "$(cat "$X/.unpacked" 2>/dev/null)" != "$stamp" ]; then
  rm -rf "$X"; mkdir -p "$X"
  for part in lib py; do
    unxz "$H/$part.tar.xz" | tar xf - -C "$X" || exit 3
  done
  echo "$stamp" > "$X/.unpacked"
fi
# The bench scripts run build/bin/ppc: the bundle's copy takes its place.
mkdir -p "$ROOT/build/bin"
[ -e "$ROOT/build/bin/ppc" ] && echo "run_bundle.sh: replacing $ROOT/build/bin/ppc and ppc_peak_fma with the bundle's" >&2
cp "$X/bin/ppc" "$X/bin/ppc_peak_fma" "$ROOT/build/bin/"
patchelf() { "$X/lib/ld-linux-x86-64.so.2" --library-path "$X/lib" "$X/bin/patchelf" "$@"; }
for e in "$ROOT/build/bin/ppc" "$ROOT/build/bin/ppc_peak_fma" "$X/py/usr/bin/python3.11"; do
  # Patched once: a python still running from an interrupted run cannot be rewritten ("Text file busy").
  [ "$(patchelf --print-interpreter "$e" 2>/dev/null)" = "$X/lib/ld-linux-x86-64.so.2" ] && continue
  patchelf --set-interpreter "$X/lib/ld-linux-x86-64.so.2" --force-rpath --set-rpath "$X/lib" "$e" || exit 4
done
# peers.peak_fma builds its tool with cmake, absent here: the bundle's copy is in place.
mkdir -p "$X/fakebin"; printf '#!/bin/sh\nexit 0\n' > "$X/fakebin/cmake"; chmod +x "$X/fakebin/cmake"
export PYTHONHOME=$X/py/usr PYTHONNOUSERSITE=1 PATH=$X/fakebin:$PATH
echo "== host: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-), $(nproc) cores;" \
  "$(grep -o 'avx512[a-z]*\|avx2' /proc/cpuinfo | sort -u | tr '\n' ' ')"
getconf -a | grep -E 'LEVEL[123]_(D)?CACHE_SIZE'
for level in x86-64-v4 x86-64-v3; do
  grep -q avx512f /proc/cpuinfo || [ $level = x86-64-v3 ] && "$ROOT/build/bin/ppc_peak_fma" $level 1
done
exec "$X/py/usr/bin/python3.11" "$ROOT/bench/goals.py" "$@"
