//===- tools/Driver.h - what ppc, ppc-opt and the REPL share ---------------===//
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ppc {
class DiagnosticEngine;
namespace ast { struct Model; }
namespace ir { class Module; }

/// Reads a whole file ("-" is standard input); on failure returns nullopt and
/// sets `error` to a sentence naming the file and the reason.
std::optional<std::string> readFile(const std::string &path, std::string &error);

/// Parses `-p NAME=VALUE` flags into a map; reports malformed or repeated
/// ones in `error`.
bool parseParamFlags(const std::vector<std::string> &flags, std::map<std::string, std::string> &out,
                     std::string &error);

/// The front end in one call: parse, build the AST, lower and verify. Runs on
/// a large stack so that no input can crash it. `astOut` receives the AST if
/// non-null (and lowering still runs unless `stopAfterAST`).
std::unique_ptr<ir::Module> compileModel(const std::string &source, DiagnosticEngine &diags,
                                         std::unique_ptr<ast::Model> *astOut = nullptr,
                                         bool stopAfterAST = false);

/// Stack size for the front end: nesting, not model size, is what uses it.
constexpr size_t kFrontendStackBytes = size_t(512) << 20;

} // namespace ppc
