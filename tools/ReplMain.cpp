//===- tools/ReplMain.cpp - `ppc repl`: the terminal or the script -------===//
//
// Reads the lines a session runs (tools/ReplSession.h): from a terminal with
// line editing, completion and history, or from a script, whose errors name
// the line (<stdin>:N) and whose exit status says whether a command failed.
// A model line whose brackets are still open continues on the next line.
//
//===----------------------------------------------------------------------===//
#include "tools/Repl.h"
#include "tools/ReplSession.h"

#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <editline/readline.h>
#include <iostream>
#include <llvm/Support/raw_ostream.h>
#include <string>
#include <unistd.h>
#include <vector>

namespace ppc {
namespace {

/// Parentheses and braces still open at the end of `text` (a model line
/// continues on the next input line while some are).
int openBrackets(const std::string &text) {
  int depth = 0;
  for (char c : text)
    depth += (c == '(' || c == '{' || c == '[') ? 1 : (c == ')' || c == '}' || c == ']') ? -1 : 0;
  return depth;
}

// ---- line editing -------------------------------------------------------------

ReplSession *gSession = nullptr;
std::vector<std::string> gCandidates;

char *nextCandidate(const char *text, int state) {
  static size_t index;
  if (state == 0)
    index = 0;
  size_t len = std::strlen(text);
  while (index < gCandidates.size()) {
    const std::string &c = gCandidates[index++];
    if (c.compare(0, len, text) == 0)
      return ::strdup(c.c_str());
  }
  return nullptr;
}

char **complete(const char *text, int start, int) {
  std::string line(rl_line_buffer ? rl_line_buffer : "");
  std::string first = line.substr(0, line.find(' '));
  gCandidates.clear();
  if (start == 0 && text[0] == ':') {
    gCandidates = replCommands();
  } else if (first == ":show" || first == ":top" || first == ":param") {
    gCandidates = gSession->names();
  } else if (first == ":emit") {
    gCandidates = {"ast", "ir", "plates", "gated", "messages", "deps", "deps-dot", "schedule", "plan", "llvm"};
  } else {
    return nullptr; // file names (the library's default completion)
  }
  rl_attempted_completion_over = 1;
  return rl_completion_matches(text, nextCandidate);
}

std::string historyPath() {
  if (const char *p = std::getenv("PPC_HISTORY"))
    return p;
  if (const char *home = std::getenv("HOME"))
    return std::string(home) + "/.ppc_history";
  return "";
}

} // namespace

int replMain(int argc, char **argv) {
  std::string model;
  int threads = 1;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    int64_t n = 0;
    if (a == "--help" || a == "-h") {
      llvm::outs() << "usage: ppc repl [MODEL.ppl] [--threads N]\n" << replHelp();
      return 0;
    }
    if (a == "--threads" || a.rfind("--threads=", 0) == 0) {
      const bool joined = a != "--threads";
      const std::string value = joined ? a.substr(10) : i + 1 < argc ? argv[i + 1] : "";
      if (!parseReplCount(value, n) || n > 1024) {
        llvm::errs() << "ppc repl: error: --threads takes a number from 1 to 1024; got '" << value << "'\n";
        return 2;
      }
      threads = int(n);
      i += joined ? 0 : 1;
    } else if (a.rfind("-", 0) != 0 && model.empty()) {
      model = a;
    } else {
      llvm::errs() << "ppc repl: error: unexpected argument '" << a << "'\nusage: ppc repl [MODEL.ppl] [--threads N]\n";
      return 2;
    }
  }
  std::unique_ptr<ReplSession> sessionPtr = makeReplSession(llvm::outs(), threads);
  ReplSession &session = *sessionPtr;
  gSession = &session;
  bool interactive = ::isatty(0) != 0;
  std::string history = historyPath();
  if (interactive) {
    rl_attempted_completion_function = complete;
    stifle_history(1000);
    if (!history.empty())
      read_history(history.c_str());
    // Ctrl-C at the prompt abandons the line typed, not the session.
    struct sigaction sa {};
    sa.sa_handler = onReplInterrupt;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, nullptr);
    llvm::outs() << "ppc repl: :help for the commands, :quit or Ctrl-D to leave\n";
  }
  if (!model.empty())
    session.execute(":load " + model);
  std::string pending; // a model line whose brackets are still open
  int64_t lineNumber = 0, pendingLine = 0;
  // A script's errors name their line (a model line's first).
  auto at = [&](int64_t n) {
    if (!interactive)
      session.setInputLine("<stdin>:" + std::to_string(n));
  };
  for (;;) {
    std::string line;
    llvm::outs().flush();
    if (interactive) {
      gReplInterrupted = false;
      char *raw = readline(pending.empty() ? "ppc> " : "...> ");
      if (gReplInterrupted) { // Ctrl-C: a fresh prompt
        std::free(raw);
        pending.clear();
        llvm::outs() << "\n";
        continue;
      }
      if (!raw) {
        llvm::outs() << "\n";
        break;
      }
      line = raw;
      std::free(raw);
      if (!line.empty()) {
        add_history(line.c_str());
        if (!history.empty())
          write_history(history.c_str());
      }
    } else if (!std::getline(std::cin, line)) {
      break;
    }
    ++lineNumber;
    size_t first = line.find_first_not_of(" \t");
    if (!pending.empty() && first != std::string::npos && line[first] == ':') {
      // A command ends an unfinished model line: it goes to the compiler as
      // it is (and gets its error), then the command runs.
      at(pendingLine);
      session.execute(pending);
      pending.clear();
    }
    at(lineNumber);
    if (!pending.empty() || (!line.empty() && line.find_first_not_of(" \t") != std::string::npos &&
                             line[line.find_first_not_of(" \t")] != ':' && openBrackets(line) > 0)) {
      if (pending.empty())
        pendingLine = lineNumber;
      pending += (pending.empty() ? "" : "\n") + line;
      if (openBrackets(pending) > 0)
        continue;
      line = pending;
      pending.clear();
      at(pendingLine);
    }
    if (!session.execute(line))
      break;
  }
  // The input ended inside an unfinished model line: it goes to the compiler
  // as it is (and gets its error), as when a command ends it.
  at(pendingLine);
  if (!pending.empty())
    session.execute(pending);
  llvm::outs().flush();
  // A script (not a terminal) runs every line, and its status says whether
  // a command failed (as make -k's does); an interactive session just goes on.
  return !interactive && session.failed() ? 1 : 0;
}

} // namespace ppc
