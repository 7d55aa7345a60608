//===- test/fuzz/IrParserFuzzer.cpp - the textual IR (ppc-opt's input) ----===//
//
// Any bytes as IR: the parser and the verifier must end in a module or in
// diagnostics.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"
#include "ir/Parser.h"
#include "ir/Verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string text(reinterpret_cast<const char *>(data), size);
  ppc::DiagnosticEngine diags("fuzz.ir", text, llvm::nulls());
  ppc::runWithLargeStack(size_t(1) << 30, [&] {
    std::unique_ptr<ppc::ir::Module> m = ppc::ir::parseModule(text, diags);
    if (m)
      ppc::ir::verify(*m, diags);
  });
  return 0;
}
