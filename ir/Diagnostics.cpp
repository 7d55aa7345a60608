#include "ir/Diagnostics.h"

#include <algorithm>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/raw_ostream.h>

namespace ppc {

DiagnosticEngine::DiagnosticEngine(std::string fileName, std::string_view source,
                                   llvm::raw_ostream &out)
    : out_(out) {
  setSource(std::move(fileName), source);
}

void DiagnosticEngine::setSource(std::string fileName, std::string_view source) {
  fileName_ = std::move(fileName);
  source_ = source;
  lineStarts_.assign(1, 0);
  for (size_t i = 0; i < source_.size(); ++i)
    if (source_[i] == '\n')
      lineStarts_.push_back(i + 1);
}

std::string_view DiagnosticEngine::line(uint32_t lineNo) const {
  if (lineNo == 0 || lineNo > lineStarts_.size())
    return {};
  size_t begin = lineStarts_[lineNo - 1];
  size_t end = lineNo < lineStarts_.size() ? lineStarts_[lineNo] - 1 : source_.size();
  std::string_view text = source_.substr(begin, end - begin);
  if (!text.empty() && text.back() == '\r')
    text.remove_suffix(1);
  return text;
}

std::string DiagnosticEngine::text(SourceRange r) const {
  std::string_view l = line(r.begin.line);
  if (!r.begin.valid() || r.begin.col == 0)
    return "";
  // Columns count code points; find the byte offsets.
  size_t byte = 0, col = 1;
  auto advance = [&] {
    unsigned char c = static_cast<unsigned char>(l[byte]);
    byte += c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 1;
    byte = std::min(byte, l.size());
  };
  while (byte < l.size() && col < r.begin.col) {
    advance();
    ++col;
  }
  size_t begin = byte;
  for (uint32_t i = 0; i < r.width && byte < l.size(); ++i)
    advance();
  return std::string(l.substr(begin, byte - begin));
}

void DiagnosticEngine::error(SourceRange where, const std::string &message) {
  report(Severity::Error, where, message);
}
void DiagnosticEngine::warning(SourceRange where, const std::string &message) {
  report(Severity::Warning, where, message);
}
void DiagnosticEngine::note(SourceRange where, const std::string &message) {
  report(Severity::Note, where, message);
}
void DiagnosticEngine::error(const std::string &message) {
  report(Severity::Error, SourceRange(), message);
}

// Draws the source line and a caret under the reported range. Tabs are kept so
// the caret lines up; other characters become spaces, one per code point.
static void printCaret(llvm::raw_ostream &out, std::string_view text, SourceRange where) {
  // Cap very long lines (a 10 MB one-line file) to a window around the caret.
  constexpr size_t kWindow = 160;
  std::vector<std::string_view> cps; // code points of the line
  for (size_t i = 0; i < text.size();) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 1;
    len = std::min(len, text.size() - i);
    cps.push_back(text.substr(i, len));
    i += len;
  }
  size_t col = where.begin.col ? where.begin.col - 1 : 0;
  size_t first = 0;
  if (cps.size() > kWindow && col > kWindow / 2)
    first = std::min(col - kWindow / 2, cps.size() - std::min(cps.size(), kWindow));
  size_t last = std::min(cps.size(), first + kWindow);
  out << "  ";
  for (size_t i = first; i < last; ++i) {
    // Control characters would garble the terminal; show them as '?'.
    unsigned char c = static_cast<unsigned char>(cps[i][0]);
    if ((c < 0x20 && c != '\t') || c == 0x7F)
      out << '?';
    else
      out << cps[i];
  }
  out << "\n  ";
  for (size_t i = first; i < col && i < last; ++i)
    out << (cps[i] == "\t" ? '\t' : ' ');
  out << '^';
  for (uint32_t i = 1; i < where.width && col + i < last; ++i)
    out << '~';
  out << '\n';
}

void DiagnosticEngine::report(Severity sev, SourceRange where, const std::string &message) {
  if (sev == Severity::Error) {
    if (errors_ >= maxErrors_) {
      if (!saidTooMany_) {
        saidTooMany_ = true;
        out_ << fileName_ << ": note: too many errors (" << maxErrors_ << "); stopping\n";
      }
      ++errors_;
      return;
    }
    ++errors_;
  } else if (errors_ > maxErrors_) {
    return;
  }
  const char *label = sev == Severity::Error ? "error" : sev == Severity::Warning ? "warning" : "note";
  if (where.begin.valid())
    out_ << fileName_ << ':' << where.begin.line << ':' << where.begin.col << ": " << label << ": "
         << message << '\n';
  else if (!fileName_.empty())
    out_ << fileName_ << ": " << label << ": " << message << '\n';
  else
    out_ << label << ": " << message << '\n';
  if (where.begin.valid() && where.begin.line <= lineStarts_.size())
    printCaret(out_, line(where.begin.line), where);
  out_.flush();
}

std::string closestName(std::string_view name, const std::vector<std::string> &candidates) {
  std::string best;
  unsigned bestDist = ~0u;
  unsigned limit = name.size() <= 4 ? 1 : name.size() <= 8 ? 2 : 3;
  for (const std::string &c : candidates) {
    unsigned d = llvm::StringRef(c).edit_distance(llvm::StringRef(name.data(), name.size()),
                                                  /*AllowReplacements=*/true, limit + 1);
    if (d <= limit && d < bestDist) {
      bestDist = d;
      best = c;
    }
  }
  return best;
}

} // namespace ppc
