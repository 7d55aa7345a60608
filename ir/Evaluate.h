//===- ir/Evaluate.h - binding parameters, sizes and the plate tree --------===//
//
// InferSpark's metadata collection (seed 003): once parameter values are
// known (-p NAME=VALUE or the model's defaults), deterministic values and the
// sizes of known plates are computed, and every constant argument is checked
// against its domain, with the position of the factor that uses it.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace llvm { class raw_ostream; }

namespace ppc {
class DiagnosticEngine;
}

namespace ppc::ir {
class Module;
class Value;

struct Evaluation {
  /// Parameters and top-level deterministic values.
  std::map<const Value *, double> values;
  /// Number of elements of each known-size plate.
  std::map<const Value *, int64_t> plateSizes;
  /// Parameters that have no value (no -p and no default).
  std::vector<std::string> unbound;

  std::optional<double> valueOf(const Value *v) const;
};

/// Binds `assignments` (NAME -> text, from -p) and defaults, evaluates, and
/// checks. Errors (unknown parameter, malformed value, negative plate size,
/// non-positive concentration, ...) go to `diags`; returns nullopt if any.
/// With `requireAll`, a parameter without a value is an error.
std::optional<Evaluation> evaluate(const Module &m, const std::map<std::string, std::string> &assignments,
                                   bool requireAll, DiagnosticEngine &diags);

/// Prints seed 003's plate tree: TOPLEVEL (size 1), each plate with its size
/// and flattened size (from `eval` where known), and the random variables
/// that live in it.
void printPlateTree(const Module &m, const Evaluation *eval, llvm::raw_ostream &os);

} // namespace ppc::ir
