//===- tools/ReplSession.h - one `ppc repl` session ------------------------===//
//
// A session (tools/Repl.cpp) runs input lines: commands and model lines;
// the terminal or script that feeds it is tools/ReplMain.cpp.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class raw_ostream;
}

namespace ppc {

/// Set by Ctrl-C: :infer stops after its current iteration; at the prompt,
/// the line typed is abandoned.
extern std::atomic<bool> gReplInterrupted;
extern "C" void onReplInterrupt(int);

/// The commands (:load, :infer, ...), for completion, and what :help says.
const std::vector<std::string> &replCommands();
const char *replHelp();
/// A whole number >= 1 (:infer N, :threads N, --threads N).
bool parseReplCount(const std::string &s, int64_t &out);

class ReplSession {
public:
  virtual ~ReplSession() = default;
  /// Runs one input line; false to end the session.
  virtual bool execute(const std::string &line) = 0;
  /// Names for tab completion: the model's variables and parameters.
  virtual std::vector<std::string> names() const = 0;
  /// Whether some command failed (a script's session exits 1).
  virtual bool failed() const = 0;
  /// Where the next line comes from ("<stdin>:12"), put before its errors;
  /// empty at a terminal.
  virtual void setInputLine(std::string where) = 0;
};

std::unique_ptr<ReplSession> makeReplSession(llvm::raw_ostream &out, int threads);

} // namespace ppc
