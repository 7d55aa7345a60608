#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine (as root) or a developer's checkout.
#   ./build.sh demo   install dependencies, build, run LDA on the bundled AP corpus
#   ./build.sh test   install dependencies, build, run the whole test suite (ctest)
#   ./build.sh build  install dependencies and build only
#   ./build.sh sanitize  the test suite under ASan + UBSan (build-sanitize/)
#   ./build.sh fuzz [SECONDS]  each libFuzzer harness for SECONDS (build-fuzz/, clang-19)
# Dependencies are installed idempotently: apt-get runs only when a package is missing.
set -euo pipefail
cd "$(dirname "$0")"

PACKAGES=(
  build-essential cmake ninja-build pkg-config
  llvm-19-dev llvm-19-tools clang-19
  antlr4 libantlr4-runtime-dev default-jre-headless
  libeigen3-dev libcli11-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  openmpi-bin libopenmpi-dev
  libedit-dev tmux python3 zlib1g-dev libzstd-dev libxml2-dev libcurl4-openssl-dev libedit-dev
  chromium graphviz fonts-dejavu-core
)

install_deps() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    echo "build.sh: installing ${missing[*]}" >&2
    local sudo=""
    [ "$(id -u)" = 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

build() {
  if [ ! -f build/build.ninja ]; then
    cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release
  fi
  cmake --build build -j "$(nproc)"
}

case "${1:-build}" in
  build) install_deps; build ;;
  demo)
    install_deps; build
    # LDA on the bundled AP corpus (2246 documents, 10473 words, K = 20 topics):
    # the live ELBO trace on stderr, then the top words of each topic. 30
    # iterations reach scikit-learn's ELBO after its 30 (bench/lda_ap.py).
    ./build/bin/ppc examples/lda.ppl -p V=10473 --infer examples/data/ap_bow.csv \
      --map theta=doc --map x=word --weight count --vocab examples/data/ap_vocab.txt --iters 30 --threads "$(nproc)" |
      sed -n '/^phi:/,/^theta:/p' ;;
  test)
    install_deps; build
    ctest --test-dir build --output-on-failure -j "$(nproc)" ;;
  sanitize)
    # The whole suite under AddressSanitizer + UndefinedBehaviorSanitizer, in
    # its own build folder (docs/reliability.md). Leaks are reported except
    # OpenMPI's own (test/sanitize/lsan.supp).
    install_deps
    if [ ! -f build-sanitize/build.ninja ]; then
      cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPPC_SANITIZE=ON
    fi
    cmake --build build-sanitize -j "$(nproc)"
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:allocator_may_return_null=1 \
    LSAN_OPTIONS=suppressions="$PWD/test/sanitize/lsan.supp":print_suppressions=0 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      ctest --test-dir build-sanitize --output-on-failure -j "$(nproc)" ;;
  fuzz)
    # Every libFuzzer harness of test/fuzz for SECONDS each (default 60),
    # from its seed corpus (test/fuzz/corpus/NAME) and what earlier runs
    # found (build-fuzz/corpus/NAME); crashes go to build-fuzz/crashes/NAME/.
    # Prints each harness's executions and coverage (docs/reliability.md).
    PACKAGES+=(libfuzzer-19-dev libclang-rt-19-dev)
    install_deps
    seconds="${2:-60}"
    if [ ! -f build-fuzz/build.ninja ]; then
      CC=clang-19 CXX=clang++-19 cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPPC_FUZZ=ON
    fi
    harnesses=(FrontendFuzzer IrParserFuzzer CsvBindingFuzzer CheckpointFuzzer)
    cmake --build build-fuzz -j "$(nproc)" --target "${harnesses[@]}"
    status=0
    for h in "${harnesses[@]}"; do
      mkdir -p "build-fuzz/corpus/$h" "build-fuzz/crashes/$h"
      log="build-fuzz/$h.log"
      # PPC_MEMORY_LIMIT: an input whose ids ask for gigabytes is refused as it
      # would be on a small machine, instead of slowing every later input.
      if ! PPC_MEMORY_LIMIT=256M UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ASAN_OPTIONS=detect_leaks=0 \
          "build-fuzz/bin/$h" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
          -artifact_prefix="build-fuzz/crashes/$h/" -print_final_stats=1 \
          "build-fuzz/corpus/$h" "test/fuzz/corpus/$h" > "$log" 2>&1; then
        status=1
        echo "$h: FAILED (see $log and build-fuzz/crashes/$h/)"
        # What CI keeps is this output: the report and the input that failed.
        grep -m1 -A30 -E 'ERROR: |runtime error: |==[0-9]+==|deadly signal' "$log" || tail -n 30 "$log"
        for crash in "build-fuzz/crashes/$h"/*; do
          [ -f "$crash" ] || continue
          echo "--- $crash ($(wc -c < "$crash") bytes, base64):"
          head -c 4096 "$crash" | base64
        done
      fi
      runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || true)
      cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 || true)
      echo "$h: ${runs:-?} executions in ${seconds} s, ${cov:-cov: ?} edges, corpus $(ls "build-fuzz/corpus/$h" | wc -l) inputs"
    done
    exit $status ;;
  *) echo "usage: ./build.sh [build|demo|test|sanitize|fuzz [SECONDS]]" >&2; exit 2 ;;
esac
