//===- frontend/Lowering.h - semantic analysis and lowering to Model IR ----===//
//
// Gives the AST its meaning (seed 003, "Bayesian Network Construction"):
// names are resolved with lexical scoping; every expression evaluates to a
// deterministic value, a plate, a random variable (possibly a plate of them,
// with the plates still free), or a distribution lifted over plates
// (`Categorical(phi)` before it is applied to `z`); types, supports and
// dimensions are checked; and the Model IR is built as the walk goes.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <memory>

namespace ppc {
class DiagnosticEngine;
namespace ast { struct Model; }
namespace ir { class Module; }

/// Returns null if any error was reported. Random variables that nothing
/// depends on and that live in a data-sized plate are marked observed.
std::unique_ptr<ir::Module> lowerModel(const ast::Model &model, DiagnosticEngine &diags);
} // namespace ppc
