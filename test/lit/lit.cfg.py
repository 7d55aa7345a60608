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
if "LSAN_OPTIONS" in os.environ:
    # ./build.sh sanitize: OpenMPI's components stay loaded to the end, and
    # leaks are unwound in full, so that the suppressions (third-party
    # libraries only, test/sanitize/lsan.supp) can name where they come from.
    mpirun += (" -x OMPI_MCA_mca_base_component_disable_dlclose=1 -x LSAN_OPTIONS="
               + os.environ["LSAN_OPTIONS"] + ":fast_unwind_on_malloc=0")
config.substitutions.append(("%mpirun", mpirun))
config.substitutions.append(("%python", sys.executable))
for var in ["HOME", "TMPDIR", "USER", "ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS"]:
    if var in os.environ:
        config.environment[var] = os.environ[var]
config.substitutions.append(("%ppc", os.path.join(config.ppc_bin_dir, "ppc")))
