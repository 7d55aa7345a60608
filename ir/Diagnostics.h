//===- ir/Diagnostics.h - file:line:col diagnostics with source carets -----===//
//
// Every error a user sees goes through DiagnosticEngine: the model frontend,
// the IR parser and verifier, the passes and the data loader. Messages follow
// the clang/LLVM convention:
//
//   lda.ppl:3:15: error: unknown name 'thta'; did you mean 'theta'?
//     val x = thta.map(th => ...)
//             ^~~~
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace llvm { class raw_ostream; }

namespace ppc {

/// A position in a source buffer: 1-based line and column (in code points).
/// A zero line means "no location".
struct SourceLoc {
  uint32_t line = 0;
  uint32_t col = 0;
  bool valid() const { return line != 0; }
  friend bool operator==(SourceLoc a, SourceLoc b) { return a.line == b.line && a.col == b.col; }
};

/// A location with the width of the caret range (in code points, at least 1).
struct SourceRange {
  SourceLoc begin;
  uint32_t width = 1;
  SourceRange() = default;
  SourceRange(SourceLoc b, uint32_t w = 1) : begin(b), width(w ? w : 1) {}
};

enum class Severity { Error, Warning, Note };

/// Collects and prints diagnostics for one source buffer. Diagnostics are
/// printed as they are reported, so a crash later still shows them.
class DiagnosticEngine {
public:
  DiagnosticEngine(std::string fileName, std::string_view source, llvm::raw_ostream &out);

  void error(SourceRange where, const std::string &message);
  void warning(SourceRange where, const std::string &message);
  void note(SourceRange where, const std::string &message);
  /// An error with no position in the source (bad flag, missing file).
  void error(const std::string &message);

  unsigned errorCount() const { return errors_; }
  bool hasErrors() const { return errors_ != 0; }
  /// After this many errors further ones are dropped and a single
  /// "too many errors" note is printed; callers may stop early.
  bool tooManyErrors() const { return errors_ >= maxErrors_; }
  void setMaxErrors(unsigned n) { maxErrors_ = n; }
  const std::string &fileName() const { return fileName_; }
  /// The text of a 1-based source line, without its line terminator.
  std::string_view line(uint32_t lineNo) const;
  /// The source text a one-line range covers ("" if it is not in the buffer).
  std::string text(SourceRange r) const;
  /// Replaces the buffer the carets are drawn from (the REPL reuses one engine).
  void setSource(std::string fileName, std::string_view source);

private:
  void report(Severity sev, SourceRange where, const std::string &message);

  std::string fileName_;
  std::string_view source_;
  std::vector<size_t> lineStarts_;
  llvm::raw_ostream &out_;
  unsigned errors_ = 0;
  unsigned maxErrors_ = 20;
  bool saidTooMany_ = false;
};

/// The closest candidate to `name` by edit distance, or "" if none is close.
std::string closestName(std::string_view name, const std::vector<std::string> &candidates);

} // namespace ppc
