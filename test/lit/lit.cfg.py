# lit configuration for ppc: FileCheck tests of the driver, the IR and the passes.
import os
import lit.formats

config.name = "ppc"
config.test_format = lit.formats.ShTest(execute_external=True)
config.suffixes = [".ppl", ".ir", ".test"]
config.excludes = ["Inputs", "lit.cfg.py", "lit.site.cfg.py.in"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.ppc_obj_root, "test", "lit")

config.environment["PATH"] = os.pathsep.join(
    [config.ppc_bin_dir, config.llvm_tools_dir, "/usr/lib/llvm-19/bin", config.environment.get("PATH", "/usr/bin:/bin")])
config.substitutions.append(("%examples", os.path.join(config.ppc_src_root, "examples")))
config.substitutions.append(("%srcroot", config.ppc_src_root))

# Data-parallel runs (test/lit/distributed): OpenMPI's launcher on localhost,
# more processes than cores allowed; the test helpers run on lit's Python.
import sys
mpirun = "mpirun --allow-run-as-root --oversubscribe --mca btl self,vader"
if "ASAN_OPTIONS" in os.environ:
    # ./build.sh sanitize: no leak check in the processes mpirun starts.
    # OpenMPI unloads its components before exit, so their leaks come from
    # "<unknown module>" and cannot be told from ppc's by a suppression, and
    # unwinding in full to name them made these runs too slow to finish. The
    # same code runs with leak checks in every test without mpirun.
    mpirun += " -x ASAN_OPTIONS=" + os.environ["ASAN_OPTIONS"] + ":detect_leaks=0"
config.substitutions.append(("%mpirun", mpirun))

# Hang guards: %timeout SECONDS CMD, scaled for the sanitized build.
config.environment["PPC_TEST_TIME_SCALE"] = "8" if "ASAN_OPTIONS" in os.environ else "1"
config.substitutions.append(("%timeout", "sh " + os.path.join(config.test_source_root, "Inputs", "timeout.sh")))
config.substitutions.append(("%python", sys.executable))
for var in ["HOME", "TMPDIR", "USER", "ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS"]:
    if var in os.environ:
        config.environment[var] = os.environ[var]
config.substitutions.append(("%ppc", os.path.join(config.ppc_bin_dir, "ppc")))

# Tests that make the JIT target AVX2 (--cpu x86-64-v3) need a CPU that runs it.
try:
    cpu_flags = set(open("/proc/cpuinfo").read().split())
except OSError:
    cpu_flags = set()
if {"avx2", "fma"} <= cpu_flags:
    config.available_features.add("avx2")

# Reports (test/lit/report): headless Chromium and Graphviz, which
# ./build.sh installs; without them those tests are UNSUPPORTED, not passed.
import shutil
if shutil.which("chromium"):
    config.available_features.add("chromium")
if shutil.which("dot"):
    config.available_features.add("graphviz")
config.substitutions.append(("%chromium", "chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run "
                             "--disable-background-networking --disable-component-update --disable-sync "
                             "--hide-scrollbars"))
