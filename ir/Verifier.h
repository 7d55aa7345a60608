//===- ir/Verifier.h - structural and type checks of the Model IR ----------===//
#pragma once

namespace ppc {
class DiagnosticEngine;
}

namespace ppc::ir {
class Module;

/// Checks the module's invariants (see ir/IR.h): definitions before uses and
/// branch-local visibility, full and well-typed indexing, operand types and
/// constant domains of every factor (from the catalogue), result types,
/// yields, match coverage. Reports every problem; returns true if none.
bool verify(const Module &m, DiagnosticEngine &diags);
} // namespace ppc::ir
