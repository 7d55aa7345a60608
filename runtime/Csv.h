// A fast, strict, columnar reader for the numeric CSV files that models read
// their data from (e.g. examples/data/faithful.csv, ap_bow.csv).
//
// Format accepted:
//   * line 1 is a header of comma-separated column names (an optional UTF-8
//     byte-order mark before it is skipped); names are trimmed of spaces and
//     tabs, must be non-empty and distinct;
//   * every further line has exactly as many comma-separated fields as the
//     header; each field read is a finite decimal number as std::from_chars
//     parses it (integers, decimals, exponents), optionally with a leading '+'
//     or '-'. Spaces and tabs around a field are trimmed. "nan", "inf" and
//     values that overflow a double (1e999) are rejected; values that
//     underflow (1e-999) become 0 or a subnormal, as strtod gives them;
//   * no quoting: a '"' anywhere (header or data, read column or not) is an
//     error;
//   * LF or CRLF line endings; the last line may lack its newline; blank lines
//     (empty or only spaces/tabs) at the end are ignored, a blank line followed
//     by more data is an error.
//
// Only the requested columns are parsed; the fields of the other columns are
// skipped without looking at their contents (beyond the field count and the
// quote check), so a malformed value in a column nobody reads is not an error.
//
// Every error is one sentence naming the file (the path as given), the
// 1-based line (the header is line 1) and, where it applies, the column name
// and its 1-based position, e.g.
//   "faithful.csv:17: column 'waiting' (2): expected a number, got 'abc'".
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <cstdint>
#include <vector>

namespace ppc::rt {

struct CsvTable {
  std::string path;
  std::vector<std::string> columns;        // the columns read, in the order requested (or file order)
  std::vector<std::vector<double>> values; // values[c][row], columnar; parallel to `columns`
  // Where the rows start in the file: byte 0 and line 2 for a whole file; a
  // part (CsvSplit) starts elsewhere and learns its line only when asked.
  size_t firstByte = 0;
  bool whole = true;

  size_t rows() const { return values.empty() ? 0 : values.front().size(); }
  // The values of column `name`, or null if it was not read.
  const std::vector<double> *column(std::string_view name) const;
  // The 1-based line of row `row` (for messages). For a part of a file this
  // counts the newlines before the part, once: only error paths call it.
  size_t line(size_t row) const;

private:
  mutable size_t linesBefore_ = 0; // newlines before firstByte (0: not counted yet)
};

// One part of a file for a data-parallel run: the data rows are cut into
// `parts` byte ranges of about equal size at line boundaries, and part
// `part` is read alone (the header too), never the rest of the file. With a
// `key` column, a boundary moves forward past the rows whose key equals the
// key of the row before it, so that a run of equal keys (a document's
// words) stays in one part; readCsv then reports the key of the row just
// before the part (none for the first part).
struct CsvSplit {
  int part = 0, parts = 1;
  std::string key;
  std::optional<double> keyBefore; // out (in, with `bytes`)
  // A byte range [first, second) of the data rows, given by the caller in
  // place of part/parts (a stochastic run's batch, from scanBatches);
  // `keyBefore` is then the key of the row before it, as scanBatches gave it.
  std::optional<std::pair<size_t, size_t>> bytes;
};

// One batch of a stochastic run's stream (docs/svi.md): the rows in bytes
// [begin, end) of the file, holding `elements` elements of the data plate.
// With a key column, the batch's element ids run from keyBefore + 1 (0
// without keyBefore) to its largest key, ids without rows included.
struct CsvBatch {
  size_t begin = 0, end = 0;
  int64_t elements = 0;
  int64_t withRows = 0; ///< the elements some row names (by an index column: ids with gaps are elements without rows)
  uint64_t digest = 0;  ///< of the batch's rows' bytes: a resumed stream must read the same data
  std::optional<double> keyBefore;
};

struct CsvError {
  std::string message;
};

// Reads `path`. `wanted` lists the columns to read, in the order they should
// appear in the result (each at most once); empty means every column in file
// order. On failure returns nullopt and sets err.message.
// With `missingAsNaN`, an empty field or `NA` reads as NaN (a missing
// value, which the caller accepts or rejects per column) instead of an error.
std::optional<CsvTable> readCsv(const std::string &path, const std::vector<std::string> &wanted, CsvError &err,
                                CsvSplit *split = nullptr, bool missingAsNaN = false);

// Cuts the data rows of `path` into consecutive batches of `elements`
// elements each (the last may have fewer), reading only the `key` column
// (the data plate's index column; empty: each row is an element) as a
// stream. Rows must come grouped by the key in increasing order; a group
// is never cut. With `part`, only that part of a data-parallel split
// (part/parts) is cut. On failure returns nullopt and sets err.message.
std::optional<std::vector<CsvBatch>> scanBatches(const std::string &path, const std::string &key, int64_t elements,
                                                 CsvError &err, const CsvSplit *part = nullptr);

// The header's column names only (the binder decides from them which file
// is split and by which key before reading any data).
std::optional<std::vector<std::string>> readCsvHeader(const std::string &path, CsvError &err);

} // namespace ppc::rt
