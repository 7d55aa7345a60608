//===- frontend/Parser.h - model source text to AST ------------------------===//
#pragma once

#include "frontend/AST.h"

#include <memory>
#include <string_view>

namespace ppc {
class DiagnosticEngine;

/// Parses a model. Reports every syntax error (up to the engine's limit) and
/// returns null if there was any. Call on a stack given by runWithLargeStack
/// so that pathological nesting is an error rather than a crash.
std::unique_ptr<ast::Model> parseModel(std::string_view source, DiagnosticEngine &diags);

/// Checks that `source` is valid UTF-8; reports the first bad byte.
bool checkUtf8(std::string_view source, DiagnosticEngine &diags);
} // namespace ppc
