//===- tools/Driver.h - what ppc, ppc-opt and the REPL share ---------------===//
#pragma once

#include <functional>
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

/// The front end in one call: parse, build the AST, lower and verify.
/// `astOut` receives the AST if non-null (lowering is skipped with
/// `stopAfterAST`). Call it inside runTool so that no input can crash it.
std::unique_ptr<ir::Module> compileModel(const std::string &source, DiagnosticEngine &diags,
                                         std::unique_ptr<ast::Model> *astOut = nullptr,
                                         bool stopAfterAST = false);

/// Stack size for the tools: nesting, not model size, is what uses it.
constexpr size_t kToolStackBytes = size_t(1) << 30;

/// Runs a tool's main on a large guarded stack (see ir/StackGuard.h) and
/// returns its exit code.
int runTool(const std::function<int()> &body);

} // namespace ppc
