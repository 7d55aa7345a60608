#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine (as root) or a developer's checkout.
#   ./build.sh demo   install dependencies, build, run LDA on the bundled AP corpus
#   ./build.sh test   install dependencies, build, run the whole test suite (ctest)
#   ./build.sh build  install dependencies and build only
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
  *) echo "usage: ./build.sh [build|demo|test]" >&2; exit 2 ;;
esac
