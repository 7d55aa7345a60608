//===- ir/Parser.h - reading textual Model IR ------------------------------===//
#pragma once

#include <memory>
#include <string_view>

namespace ppc {
class DiagnosticEngine;
}

namespace ppc::ir {
class Module;

/// Parses the text printed by ir/Printer.h. Errors go to `diags` with
/// positions in `text`; returns null if there were any.
std::unique_ptr<Module> parseModule(std::string_view text, DiagnosticEngine &diags);
} // namespace ppc::ir
