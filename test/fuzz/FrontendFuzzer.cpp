//===- test/fuzz/FrontendFuzzer.cpp - model text to IR or diagnostics -----===//
//
// Any bytes as a model: parsing, the AST, lowering and the verifier must end
// in a module or in diagnostics, on the guarded stack ppc itself uses.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string source(reinterpret_cast<const char *>(data), size);
  ppc::DiagnosticEngine diags("fuzz.ppl", source, llvm::nulls());
  ppc::fuzz::compile(source, diags);
  return 0;
}
