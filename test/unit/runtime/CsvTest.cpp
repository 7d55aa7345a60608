// The strict CSV reader of runtime/Csv.h: accepted formats, exact values and
// the exact wording of every error.
#include "runtime/Csv.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <limits>
#include <numeric>

using namespace ppc::rt;
namespace fs = std::filesystem;

namespace {

class Csv : public ::testing::Test {
protected:
  void SetUp() override {
    const ::testing::TestInfo *info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("ppc_csv_" + std::to_string(::getpid()) + "_" + info->test_suite_name() + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // Writes `content` byte for byte to a file of the test's directory.
  std::string write(const std::string &name, const std::string &content) {
    std::string path = (dir_ / name).string();
    std::ofstream out(path, std::ios::binary);
    out << content;
    EXPECT_TRUE(out.good()) << path;
    return path;
  }

  // Reads `content` and expects success.
  CsvTable ok(const std::string &content, const std::vector<std::string> &wanted = {}) {
    std::string path = write("ok.csv", content);
    CsvError err;
    std::optional<CsvTable> t = readCsv(path, wanted, err);
    EXPECT_TRUE(t.has_value()) << err.message;
    return t ? std::move(*t) : CsvTable{};
  }

  // Reads `content` and returns the error message, with the file's path
  // replaced by "data.csv" (an empty string if reading succeeded).
  std::string error(const std::string &content, const std::vector<std::string> &wanted = {}) {
    std::string path = write("data.csv", content);
    CsvError err;
    std::optional<CsvTable> t = readCsv(path, wanted, err);
    EXPECT_FALSE(t.has_value()) << "read succeeded: " << content.substr(0, 60);
    if (t)
      return "";
    std::string msg = err.message;
    for (size_t pos; (pos = msg.find(path)) != std::string::npos;)
      msg.replace(pos, path.size(), "data.csv");
    return msg;
  }

  fs::path dir_;
};

double parsed(const char *text) {
  double v = 0;
  std::string_view s(text);
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

std::string sourceFile(const char *rel) { return std::string(PPC_SOURCE_DIR) + "/" + rel; }

} // namespace

// --- reading ----------------------------------------------------------------

TEST_F(Csv, ReadsEveryColumnInFileOrder) {
  CsvTable t = ok("a,b,c\n1,2,3\n4,5,6\n");
  EXPECT_EQ(t.columns, (std::vector<std::string>{"a", "b", "c"}));
  ASSERT_EQ(t.rows(), 2u);
  ASSERT_EQ(t.values.size(), 3u);
  EXPECT_EQ(t.values[0], (std::vector<double>{1, 4}));
  EXPECT_EQ(t.values[1], (std::vector<double>{2, 5}));
  EXPECT_EQ(t.values[2], (std::vector<double>{3, 6}));
  EXPECT_NE(t.path.find("ok.csv"), std::string::npos);
}

TEST_F(Csv, ReadsOnlyWantedColumnsInRequestedOrder) {
  // Column b holds garbage but is never read, so it is not an error.
  CsvTable t = ok("a,b,c\n1,junk,3\n4,,6\n", {"c", "a"});
  EXPECT_EQ(t.columns, (std::vector<std::string>{"c", "a"}));
  ASSERT_EQ(t.values.size(), 2u);
  EXPECT_EQ(t.values[0], (std::vector<double>{3, 6}));
  EXPECT_EQ(t.values[1], (std::vector<double>{1, 4}));
  ASSERT_NE(t.column("a"), nullptr);
  EXPECT_EQ(*t.column("a"), (std::vector<double>{1, 4}));
  EXPECT_EQ(t.column("b"), nullptr);
  EXPECT_EQ(t.column("zzz"), nullptr);
}

TEST_F(Csv, HeaderOnlyFileHasNoRows) {
  CsvTable t = ok("x,y\n");
  EXPECT_EQ(t.columns, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(t.rows(), 0u);
  ASSERT_NE(t.column("y"), nullptr);
  EXPECT_TRUE(t.column("y")->empty());
}

TEST_F(Csv, ValuesAreExact) {
  const char *texts[] = {"0",   "7",       "+7",     "-3",         "123456789012345", "9007199254740991",
                         "9007199254740992", "0.1", "3.14159", "-2.5e-3", "1E5", ".5", "5.", "-0",
                         "2.2250738585072014e-308", "1.7976931348623157e308", "000123", "1e-400"};
  std::string content = "v\n";
  for (const char *s : texts)
    content += std::string(s) + "\n";
  CsvTable t = ok(content);
  ASSERT_EQ(t.rows(), std::size(texts));
  const std::vector<double> &v = t.values[0];
  EXPECT_EQ(v[0], 0.0);
  EXPECT_EQ(v[1], 7.0);
  EXPECT_EQ(v[2], 7.0);
  EXPECT_EQ(v[3], -3.0);
  EXPECT_EQ(v[4], 123456789012345.0);
  EXPECT_EQ(v[5], 9007199254740991.0); // 2^53 - 1
  EXPECT_EQ(v[6], 9007199254740992.0); // 2^53
  for (size_t i = 7; i < std::size(texts) - 1; ++i)
    EXPECT_EQ(v[i], parsed(texts[i][0] == '+' ? texts[i] + 1 : texts[i])) << texts[i];
  EXPECT_EQ(v[7], 0.1);
  EXPECT_EQ(v[9], -0.0025);
  EXPECT_TRUE(std::signbit(v[13])); // "-0" keeps its sign
  EXPECT_EQ(v[16], 123.0);
  EXPECT_EQ(v[17], 0.0); // underflow rounds to zero: a finite number
}

TEST_F(Csv, TinyValuesAreSubnormalOrZero) {
  CsvTable t = ok("v\n1e-310\n-2e-324\n4.9e-324\n");
  ASSERT_EQ(t.rows(), 3u);
  EXPECT_EQ(t.values[0][0], parsed("1e-310"));
  EXPECT_GT(t.values[0][0], 0.0);
  EXPECT_EQ(t.values[0][1], 0.0);
  EXPECT_TRUE(std::signbit(t.values[0][1]));
  EXPECT_EQ(t.values[0][2], std::numeric_limits<double>::denorm_min());
}

TEST_F(Csv, TrimsSpacesAndTabsAroundFieldsAndNames) {
  CsvTable t = ok(" a \t,\tb\n 1 ,\t-2.5\t\n3,4   \n");
  EXPECT_EQ(t.columns, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(t.values[0], (std::vector<double>{1, 3}));
  EXPECT_EQ(t.values[1], (std::vector<double>{-2.5, 4}));
}

TEST_F(Csv, AcceptsCrlfMissingFinalNewlineTrailingBlankLinesAndBom) {
  CsvTable crlf = ok("a,b\r\n1,2\r\n3,4\r\n");
  EXPECT_EQ(crlf.values[1], (std::vector<double>{2, 4}));
  CsvTable crlfSkip = ok("a,b\r\n1,2\r\n3,4\r\n", {"b"});
  EXPECT_EQ(crlfSkip.values[0], (std::vector<double>{2, 4}));
  CsvTable noFinal = ok("a,b\n1,2\n3,4");
  EXPECT_EQ(noFinal.values[1], (std::vector<double>{2, 4}));
  CsvTable noFinalCr = ok("a,b\r\n1,2\r\n3,4\r");
  EXPECT_EQ(noFinalCr.values[1], (std::vector<double>{2, 4}));
  CsvTable blanks = ok("a,b\n1,2\n3,4\n\n  \n\r\n\t\n");
  EXPECT_EQ(blanks.rows(), 2u);
  CsvTable bom = ok("\xEF\xBB\xBF" "a,b\n1,2\n");
  EXPECT_EQ(bom.columns, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(bom.values[0], (std::vector<double>{1}));
}

TEST_F(Csv, ReadsAcrossBlocksAndVeryLongLines) {
  // ~12 MB: several 4 MiB blocks, rows cut at block boundaries.
  const size_t n = 700000;
  std::string content = "i,j,k\n";
  content.reserve(n * 20);
  for (size_t i = 0; i < n; ++i)
    content += std::to_string(i) + "," + std::to_string(i % 97) + ".5," + std::to_string(3 * i) + "\n";
  CsvTable t = ok(content, {"k", "i"});
  ASSERT_EQ(t.rows(), n);
  bool allRight = true;
  for (size_t i = 0; i < n && allRight; ++i)
    allRight = t.values[0][i] == double(3 * i) && t.values[1][i] == double(i);
  EXPECT_TRUE(allRight);
  // Line numbers stay right across blocks.
  EXPECT_EQ(error(content + "1,2,x\n", {"k"}),
            "data.csv:" + std::to_string(n + 2) + ": column 'k' (3): expected a number, got 'x'");
  // A row longer than a block (6 MB of padding) is still one row.
  CsvTable wide = ok("a,b\n1," + std::string(6u << 20, ' ') + "2\n3,4\n");
  EXPECT_EQ(wide.values[1], (std::vector<double>{2, 4}));
}

// --- the real data files ------------------------------------------------------

TEST_F(Csv, ReadsFaithful) {
  CsvError err;
  std::optional<CsvTable> t = readCsv(sourceFile("examples/data/faithful.csv"), {}, err);
  ASSERT_TRUE(t) << err.message;
  EXPECT_EQ(t->columns, (std::vector<std::string>{"eruptions", "waiting"}));
  ASSERT_EQ(t->rows(), 272u);
  EXPECT_EQ((*t->column("eruptions"))[0], 3.6);
  EXPECT_EQ((*t->column("waiting"))[0], 79.0);
}

TEST_F(Csv, ReadsApBagOfWords) {
  CsvError err;
  std::optional<CsvTable> t = readCsv(sourceFile("examples/data/ap_bow.csv"), {"count", "doc", "word"}, err);
  ASSERT_TRUE(t) << err.message;
  ASSERT_EQ(t->rows(), 302031u);
  const std::vector<double> &count = t->values[0], &doc = t->values[1], &word = t->values[2];
  EXPECT_EQ(std::accumulate(count.begin(), count.end(), 0.0), 435838.0);
  EXPECT_EQ(*std::max_element(doc.begin(), doc.end()), 2245.0);
  EXPECT_EQ(*std::max_element(word.begin(), word.end()), 10472.0);
  EXPECT_EQ(*std::min_element(count.begin(), count.end()), 1.0);
}

// --- errors ---------------------------------------------------------------------

TEST_F(Csv, MissingFile) {
  std::string path = (dir_ / "nope.csv").string();
  CsvError err;
  EXPECT_FALSE(readCsv(path, {}, err));
  EXPECT_EQ(err.message, "cannot read '" + path + "': No such file or directory");
}

TEST_F(Csv, Directory) {
  std::string path = dir_.string();
  CsvError err;
  EXPECT_FALSE(readCsv(path, {}, err));
  EXPECT_EQ(err.message, "cannot read '" + path + "': Is a directory");
}

TEST_F(Csv, EmptyFileOrHeader) {
  EXPECT_EQ(error(""), "data.csv: the file is empty; expected a header line naming the columns");
  EXPECT_EQ(error("\xEF\xBB\xBF"), "data.csv: the file is empty; expected a header line naming the columns");
  EXPECT_EQ(error("\n1,2\n"), "data.csv:1: the header line is empty; expected the column names separated by commas");
  EXPECT_EQ(error(" \r\n"), "data.csv:1: the header line is empty; expected the column names separated by commas");
}

TEST_F(Csv, BadColumnNames) {
  EXPECT_EQ(error("a,b,a\n1,2,3\n"), "data.csv:1: the header names column 'a' twice (columns 1 and 3)");
  EXPECT_EQ(error("a, b ,b\n"), "data.csv:1: the header names column 'b' twice (columns 2 and 3)");
  EXPECT_EQ(error("a,,b\n1,2,3\n"), "data.csv:1: column 2 of the header has an empty name");
  EXPECT_EQ(error("a,b,\n1,2,3\n"), "data.csv:1: column 3 of the header has an empty name");
  EXPECT_EQ(error("a,\"b\"\n1,2\n"),
            "data.csv:1: the header contains a '\"'; quoted fields are not supported (values must be plain numbers "
            "separated by commas)");
}

TEST_F(Csv, WantedColumnMissing) {
  EXPECT_EQ(error("a,b,c\n1,2,3\n", {"a", "x"}), "data.csv: no column 'x'; the columns are: a, b, c");
  EXPECT_EQ(error("eruptions,waiting\n1,2\n", {"wating"}),
            "data.csv: no column 'wating'; the columns are: eruptions, waiting; did you mean 'waiting'?");
  EXPECT_EQ(error("eruptions,waiting\n1,2\n", {"Waiting"}),
            "data.csv: no column 'Waiting'; the columns are: eruptions, waiting; did you mean 'waiting'?");
  EXPECT_EQ(error("doc,word,count\n1,2,3\n", {"cnt"}),
            "data.csv: no column 'cnt'; the columns are: doc, word, count");
  EXPECT_EQ(error("a,b\n1,2\n", {"a", "b", "a"}), "data.csv: column 'a' is requested twice");
}

TEST_F(Csv, RaggedRows) {
  EXPECT_EQ(error("a,b,c\n1,2,3\n4,5,6\n1,2,3\n4,5,6\n1,2,3\n4,5,6\n1,2,3\n4,5,6\n1,2,3\n4,5,6\n1,2,3,4\n"),
            "data.csv:12: 4 fields, but the header has 3");
  EXPECT_EQ(error("a,b,c\n1\n"), "data.csv:2: 1 field, but the header has 3");
  EXPECT_EQ(error("a,b,c\n1,2\n"), "data.csv:2: 2 fields, but the header has 3");
  // Ragged rows are errors even when only some columns are read.
  EXPECT_EQ(error("a,b,c\n1,2,3\n1,2,3,4\n", {"a"}), "data.csv:3: 4 fields, but the header has 3");
  EXPECT_EQ(error("a,b,c\n1,2,3\n1,2", {"a"}), "data.csv:3: 2 fields, but the header has 3");
}

TEST_F(Csv, EmptyValue) {
  EXPECT_EQ(error("a,b\n1,2\n3,\n"), "data.csv:3: column 'b' (2): empty value");
  EXPECT_EQ(error("a,b\n1,2\n , 4\n"), "data.csv:3: column 'a' (1): empty value");
  EXPECT_EQ(error("a\n1\n\t\r\n2\n"), "data.csv:3: blank line before more data (line 4); only blank lines at the end "
                                      "of the file are ignored");
}

TEST_F(Csv, NotANumber) {
  std::string rows;
  for (int i = 0; i < 15; ++i)
    rows += "3.6,79\n";
  EXPECT_EQ(error("eruptions,waiting\n" + rows + "1.5,abc\n"),
            "data.csv:17: column 'waiting' (2): expected a number, got 'abc'");
  for (const char *bad : {"1.2.3", "12abc", "--1", "+-1", "++1", "+", "-", "0x10", "1e", "1,5", "5 5", "1_000",
                          "\x01", "é"}) {
    std::string field = bad;
    std::string got = field == "1,5" ? "1" : field == "\x01" ? "\\x01" : field;
    std::string msg = field == "1,5" ? "data.csv:2: 2 fields, but the header has 1"
                                     : "data.csv:2: column 'v' (1): expected a number, got '" + got + "'";
    EXPECT_EQ(error("v\n" + field + "\n"), msg) << bad;
  }
  EXPECT_EQ(error("v\n" + std::string(60, '9') + "x\n"),
            "data.csv:2: column 'v' (1): expected a number, got '" + std::string(40, '9') + "...'");
  EXPECT_EQ(error("a,b\n1,2\r\r\n"), "data.csv:2: column 'b' (2): expected a number, got '2\\r'");
}

TEST_F(Csv, NotFinite) {
  for (const char *bad : {"nan", "NaN", "-nan", "inf", "-inf", "+inf", "Infinity", "1e999", "-1e400"})
    EXPECT_EQ(error("a,b\n1,2\n3," + std::string(bad) + "\n"),
              "data.csv:3: column 'b' (2): '" + std::string(bad) + "' is not a finite number")
        << bad;
}

TEST_F(Csv, QuotesAreRejected) {
  const std::string advice = "quoted fields are not supported (values must be plain numbers separated by commas)";
  EXPECT_EQ(error("a,b\n1,\"2\"\n"), "data.csv:2: column 'b' (2): found a '\"'; " + advice);
  // Also in a column that is not read.
  EXPECT_EQ(error("a,b,c\n1,2,3\n1,\"x\",3\n", {"a"}), "data.csv:3: column 'b' (2): found a '\"'; " + advice);
  EXPECT_EQ(error("a,b\n1,2,\"\n"), "data.csv:2: found a '\"'; " + advice);
}

TEST_F(Csv, BlankLineInTheMiddle) {
  EXPECT_EQ(error("a,b\n1,2\n\n3,4\n"),
            "data.csv:3: blank line before more data (line 4); only blank lines at the end of the file are ignored");
  EXPECT_EQ(error("a,b\r\n1,2\r\n\r\n  \r\n3,4\r\n"),
            "data.csv:3: blank line before more data (line 5); only blank lines at the end of the file are ignored");
  EXPECT_EQ(error("a,b\n\n1,2\n", {"b"}),
            "data.csv:2: blank line before more data (line 3); only blank lines at the end of the file are ignored");
}

// ---- parts of a file (data-parallel runs) ----------------------------------

namespace {

struct Part {
  std::vector<double> doc, word;
  std::optional<double> keyBefore;
  std::vector<size_t> lines;
};

// Reads every part of `path` into `parts` parts (keyed by `doc` unless `key` is empty).
std::vector<Part> readParts(const std::string &path, int parts, const std::string &key = "doc") {
  std::vector<Part> out;
  for (int p = 0; p < parts; ++p) {
    CsvSplit how;
    how.part = p;
    how.parts = parts;
    how.key = key;
    CsvError err;
    std::optional<CsvTable> t = readCsv(path, {}, err, &how);
    EXPECT_TRUE(t.has_value()) << err.message;
    Part part;
    if (t) {
      part.doc = *t->column("doc");
      part.word = *t->column("word");
      for (size_t r = 0; r < t->rows(); ++r)
        part.lines.push_back(t->line(r));
    }
    part.keyBefore = how.keyBefore;
    out.push_back(std::move(part));
  }
  return out;
}

} // namespace

// Any number of parts: every row exactly once, in file order, each
// document's rows in one part, keyBefore the document before the part, and
// line numbers those of the whole file. Documents of very different sizes
// (one holds half the rows), CRLF endings, no final newline.
TEST_F(Csv, PartsCoverEveryRowOnceAndKeepDocumentsWhole) {
  std::string text = "doc,word\r\n";
  std::vector<std::pair<int, int>> rows;
  for (int d = 0; d < 40; ++d) {
    int n = d == 7 ? 400 : 1 + (d * 7) % 13;
    for (int w = 0; w < n; ++w)
      rows.push_back({d * 2, w}); // even ids: the odd ones have no rows
  }
  for (size_t i = 0; i < rows.size(); ++i)
    text += std::to_string(rows[i].first) + "," + std::to_string(rows[i].second) + (i + 1 < rows.size() ? "\r\n" : "");
  std::string path = write("parts.csv", text);
  for (int parts : {1, 2, 3, 4, 7, 16, 100}) {
    std::vector<Part> got = readParts(path, parts);
    size_t next = 0;
    double lastDoc = -1;
    for (int p = 0; p < parts; ++p) {
      const Part &part = got[size_t(p)];
      if (p == 0) {
        EXPECT_FALSE(part.keyBefore.has_value());
      }
      if (!part.doc.empty() && p > 0) {
        ASSERT_TRUE(part.keyBefore.has_value()) << parts << " parts, part " << p;
        EXPECT_EQ(*part.keyBefore, lastDoc) << parts << " parts, part " << p;
        EXPECT_GT(part.doc.front(), lastDoc) << "a document split between parts";
      }
      for (size_t r = 0; r < part.doc.size(); ++r, ++next) {
        ASSERT_LT(next, rows.size());
        EXPECT_EQ(part.doc[r], rows[next].first);
        EXPECT_EQ(part.word[r], rows[next].second);
        EXPECT_EQ(part.lines[r], next + 2) << "the line of row " << next;
      }
      if (!part.doc.empty())
        lastDoc = part.doc.back();
    }
    EXPECT_EQ(next, rows.size()) << parts << " parts";
  }
}

// Without a key, parts are cut at any row boundary: every row once.
TEST_F(Csv, PartsWithoutKeyCutAtRows) {
  std::string text = "doc,word\n";
  for (int i = 0; i < 1000; ++i)
    text += std::to_string(i) + "," + std::to_string(i % 17) + "\n";
  std::string path = write("rows.csv", text);
  for (int parts : {2, 3, 8}) {
    std::vector<Part> got = readParts(path, parts, "");
    double expected = 0;
    for (const Part &part : got) {
      EXPECT_GT(part.doc.size(), 1000u / parts / 2) << "parts of about equal size";
      for (double d : part.doc)
        EXPECT_EQ(d, expected++);
    }
    EXPECT_EQ(expected, 1000);
  }
}

// An error in a part names the line in the whole file.
TEST_F(Csv, PartErrorsNameTheLineOfTheWholeFile) {
  std::string text = "doc,word\n";
  for (int i = 0; i < 100; ++i)
    text += std::to_string(i) + "," + (i == 90 ? std::string("x") : std::to_string(i)) + "\n";
  std::string path = write("bad.csv", text);
  CsvSplit how;
  how.part = 1;
  how.parts = 2;
  how.key = "doc";
  CsvError err;
  EXPECT_FALSE(readCsv(path, {}, err, &how).has_value());
  EXPECT_NE(err.message.find("bad.csv:92: column 'word' (2): expected a number, got 'x'"), std::string::npos)
      << err.message;
  how.key = "nodoc";
  EXPECT_FALSE(readCsv(path, {}, err, &how).has_value());
  EXPECT_NE(err.message.find("no column 'nodoc'"), std::string::npos) << err.message;
}

// A stochastic run's batches (scanBatches): every row in exactly one batch,
// in order, an element's rows never cut apart, at most N elements a batch
// (ids without rows counted), and each batch read alone gives its rows.
TEST_F(Csv, BatchesCoverEveryRowOnceAndKeepElementsWhole) {
  std::string text = "doc,word\n";
  std::vector<std::pair<int, int>> rows;
  unsigned state = 7;
  auto next = [&] { return state = state * 1103515245u + 12345u, (state >> 16) % 1000; };
  for (int d = 0; d < 300; ++d) {
    if (next() % 7 == 0)
      continue; // an element without rows
    for (unsigned k = 0, n = 1 + next() % 9; k < n; ++k) {
      rows.emplace_back(d, int(next()));
      text += std::to_string(d) + "," + std::to_string(rows.back().second) + (k % 3 ? "\n" : "\r\n");
    }
  }
  text.pop_back(); // the last line without its newline
  std::string path = write("docs.csv", text);
  for (int64_t n : {1, 7, 50, 1000}) {
    CsvError err;
    auto batches = scanBatches(path, "doc", n, err);
    ASSERT_TRUE(batches) << err.message;
    size_t row = 0;
    int64_t elements = 0;
    for (const CsvBatch &b : *batches) {
      ASSERT_GE(b.elements, 1);
      // At most n, but for elements without rows before its first row
      // (a batch holds at least one row).
      const double leading = rows[row].first - (b.keyBefore ? *b.keyBefore + 1 : 0);
      EXPECT_LE(double(b.elements) - leading, double(n));
      CsvSplit how;
      how.key = "doc";
      how.bytes = std::pair{b.begin, b.end};
      how.keyBefore = b.keyBefore;
      auto t = readCsv(path, {}, err, &how);
      ASSERT_TRUE(t) << err.message;
      const double first = b.keyBefore ? *b.keyBefore + 1 : 0;
      EXPECT_EQ(first, double(elements)); // batches follow each other without a gap
      for (size_t r = 0; r < t->rows(); ++r, ++row) {
        ASSERT_LT(row, rows.size());
        EXPECT_EQ(t->values[0][r], rows[row].first);
        EXPECT_EQ(t->values[1][r], rows[row].second);
        EXPECT_LT(t->values[0][r] - first, double(b.elements));
      }
      if (row < rows.size()) { // the next batch starts a new element
        EXPECT_NE(rows[row].first, rows[row - 1].first);
      }
      elements += b.elements;
    }
    EXPECT_EQ(row, rows.size()) << "batches of " << n;
    EXPECT_EQ(elements, rows.back().first + 1);
  }
}

TEST_F(Csv, BatchesWithoutKeyAreRowsAndPartsCutThePart) {
  std::string text = "x\n";
  for (int i = 0; i < 95; ++i)
    text += std::to_string(i) + "\n";
  text += "\n\n"; // blank lines at the end
  std::string path = write("rows.csv", text);
  CsvError err;
  auto batches = scanBatches(path, "", 10, err);
  ASSERT_TRUE(batches) << err.message;
  ASSERT_EQ(batches->size(), 10u);
  EXPECT_EQ(batches->back().elements, 5);
  // The two parts of a data-parallel run, each cut on its own: all rows once.
  int64_t total = 0;
  for (int part = 0; part < 2; ++part) {
    CsvSplit how;
    how.part = part;
    how.parts = 2;
    auto cut = scanBatches(path, "", 10, err, &how);
    ASSERT_TRUE(cut) << err.message;
    for (const CsvBatch &b : *cut)
      total += b.elements;
  }
  EXPECT_EQ(total, 95);
}

TEST_F(Csv, BatchErrorsNameTheLine) {
  CsvError err;
  EXPECT_FALSE(scanBatches(write("a.csv", "doc,w\n0,1\n2,1\n1,1\n"), "doc", 5, err));
  EXPECT_NE(err.message.find("a.csv:4: column 'doc': 1 after 2; a stochastic run reads the rows in batches, so they "
                             "must be grouped by 'doc' in increasing order"),
            std::string::npos)
      << err.message;
  EXPECT_FALSE(scanBatches(write("b.csv", "doc,w\n0,1\n1.5,1\n"), "doc", 5, err));
  EXPECT_NE(err.message.find("b.csv:3: column 'doc' (1): expected an element id (an integer >= 0)"),
            std::string::npos)
      << err.message;
  EXPECT_FALSE(scanBatches(write("c.csv", "doc,w\n0,1\n\n1,1\n"), "doc", 5, err));
  EXPECT_NE(err.message.find("c.csv:3: blank line followed by more data"), std::string::npos) << err.message;
  EXPECT_FALSE(scanBatches(write("d.csv", "doc,w\n0,1\n"), "id", 5, err));
  EXPECT_NE(err.message.find("no column 'id'"), std::string::npos) << err.message;
}
