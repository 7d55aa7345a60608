//===- test/fuzz/FuzzSupport.h - what the libFuzzer harnesses share -------===//
//
// Each harness feeds one input to one reader of untrusted text (a model, IR,
// a CSV with its binding, a checkpoint) and returns; a crash, a sanitizer
// report, a hang or an uncaught exception is the bug. Built by
// `./build.sh fuzz SECONDS` (clang-19, -fsanitize=fuzzer,address,undefined;
// test/fuzz/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "frontend/AST.h"
#include "frontend/Lowering.h"
#include "frontend/Parser.h"
#include "ir/Diagnostics.h"
#include "ir/IR.h"
#include "ir/StackGuard.h"
#include "ir/Verifier.h"

#include <llvm/Support/raw_ostream.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

namespace ppc::fuzz {

/// This process's scratch directory (in /dev/shm when it exists): the
/// readers under test take paths.
inline const std::string &scratchDir() {
  static const std::string dir = [] {
    std::string base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    std::string d = base + "/ppc-fuzz-" + std::to_string(getpid());
    mkdir(d.c_str(), 0700);
    return d;
  }();
  return dir;
}

/// A file in the scratch directory holding `bytes`.
inline std::string scratchFile(const std::string &name, const uint8_t *data, size_t size) {
  std::string path = scratchDir() + "/" + name;
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char *>(data), std::streamsize(size));
  return path;
}

/// The front end as ppc runs it (tools/Driver.cpp's compileModel: parse,
/// lower, verify), on a guarded stack of ppc's size (tools/Driver.h), so
/// that the harnesses link the front end alone.
inline std::unique_ptr<ir::Module> compile(const std::string &source, DiagnosticEngine &diags) {
  std::unique_ptr<ir::Module> module;
  runWithLargeStack(size_t(1) << 30, [&] {
    std::unique_ptr<ast::Model> model = parseModel(source, diags);
    if (model)
      module = lowerModel(*model, diags);
    if (module && !ir::verify(*module, diags))
      abort(); // the front end produced invalid IR: a bug the fuzzer found
  });
  return module;
}

/// A model compiled once (the harnesses that read data need one).
inline std::unique_ptr<ir::Module> compileOnce(const std::string &source) {
  DiagnosticEngine diags("model.ppl", source, llvm::errs());
  std::unique_ptr<ir::Module> m = compile(source, diags);
  if (!m)
    abort(); // a harness's own model must compile
  return m;
}

} // namespace ppc::fuzz
