// The CSV reader of runtime/Csv.h.
//
// The file is read in large blocks (POSIX read, no iostreams, no mmap so that
// the resident set stays at the parsed columns plus one block). Each block is
// cut after its last newline; the rows in it are parsed by a fast path that
// handles the common case (plain numbers, no surprises) without building any
// string, and any row the fast path does not accept is handed to a careful
// slow path that either accepts it (e.g. a leading '+', a blank line) or
// explains precisely what is wrong with it.
#include "runtime/Csv.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <limits>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <locale.h>
#include <sys/stat.h>
#include <unistd.h>

namespace ppc::rt {

const std::vector<double> *CsvTable::column(std::string_view name) const {
  for (size_t c = 0; c < columns.size(); ++c)
    if (columns[c] == name)
      return &values[c];
  return nullptr;
}

size_t countNewlines(const std::string &path, size_t end);

namespace {

/// A fast 64-bit digest of a row's bytes, eight at a time (not
/// cryptographic: it tells an edited file from the one a checkpoint read).
uint64_t digestOf(std::string_view line) {
  uint64_t h = 0xcbf29ce484222325ull ^ line.size();
  size_t i = 0;
  for (; i + 8 <= line.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, line.data() + i, 8);
    h = (h ^ w) * 0x100000001b3ull;
    h ^= h >> 29;
  }
  for (; i < line.size(); ++i)
    h = (h ^ static_cast<unsigned char>(line[i])) * 0x100000001b3ull;
  return h ^ (h >> 32);
}

constexpr size_t kBlock = size_t(4) << 20; // bytes per read

inline bool isBlank(char c) { return c == ' ' || c == '\t'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && isBlank(s.front()))
    s.remove_prefix(1);
  while (!s.empty() && isBlank(s.back()))
    s.remove_suffix(1);
  return s;
}

bool allBlank(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return isBlank(c); });
}

// Characters a terminal shows as nothing or as a space, in UTF-8: a byte
// order mark inside a line, zero-width spaces and joiners, no-break spaces.
struct InvisibleCharacter {
  std::string_view utf8, name;
};
constexpr InvisibleCharacter kInvisible[] = {
    {"\xef\xbb\xbf", "\\u{feff}"}, {"\xe2\x80\x8b", "\\u{200b}"}, {"\xe2\x80\x8c", "\\u{200c}"},
    {"\xe2\x80\x8d", "\\u{200d}"}, {"\xe2\x81\xa0", "\\u{2060}"}, {"\xc2\xa0", "\\u{a0}"},
    {"\xe2\x80\xaf", "\\u{202f}"}};

// A field as shown in a message: at most 40 characters, control and
// invisible characters escaped.
std::string shown(std::string_view s) {
  std::string out;
  size_t n = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (++n > 40) {
      out += "...";
      break;
    }
    const InvisibleCharacter *invisible = nullptr;
    for (const InvisibleCharacter &k : kInvisible)
      if (s.substr(i, k.utf8.size()) == k.utf8)
        invisible = &k;
    if (invisible) {
      out += invisible->name;
      i += invisible->utf8.size() - 1;
      continue;
    }
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '\r')
      out += "\\r";
    else if (c == '\t')
      out += "\\t";
    else if (u < 0x20 || u == 0x7f) {
      static const char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[u >> 4];
      out += hex[u & 15];
    } else
      out += c;
  }
  return out;
}

char lower(char c) { return (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c; }

// Case-insensitive Levenshtein distance.
size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

enum class Num { Ok, Empty, NotNumber, NotFinite };

// Careful parse of one trimmed field.
Num parseField(std::string_view field, double &v) {
  if (field.empty())
    return Num::Empty;
  const char *b = field.data(), *e = b + field.size(), *s = b;
  if (*s == '+' && s + 1 < e && s[1] != '+' && s[1] != '-')
    ++s; // from_chars does not accept a leading '+'
  auto [ptr, ec] = std::from_chars(s, e, v);
  if (ec == std::errc::invalid_argument || ptr != e)
    return Num::NotNumber;
  if (ec == std::errc::result_out_of_range) {
    // Overflow (1e999) or underflow to zero (1e-999): let strtod say which
    // (+-HUGE_VAL or +-0), in the C locale whatever the program's locale.
    static const locale_t cLocale = ::newlocale(LC_NUMERIC_MASK, "C", static_cast<locale_t>(0));
    std::string tmp(s, e);
    v = ::strtod_l(tmp.c_str(), nullptr, cLocale);
  }
  return std::isfinite(v) ? Num::Ok : Num::NotFinite;
}

// Fast parse of a number starting at p (leading blanks allowed): returns the
// position after the number and any trailing blanks, or null if the field is
// anything but a plain finite number (the slow path then decides).
inline const char *fastNumber(const char *p, const char *end, double &v) {
  while (p < end && isBlank(*p))
    ++p;
  // Plain unsigned integers of up to 15 digits are exact in a double.
  const char *q = p;
  uint64_t x = 0;
  while (q < end && q - p < 15 && static_cast<unsigned>(*q - '0') < 10) {
    x = x * 10 + static_cast<unsigned>(*q - '0');
    ++q;
  }
  if (q > p && (q == end || (*q != '.' && *q != 'e' && *q != 'E' && static_cast<unsigned>(*q - '0') >= 10))) {
    v = static_cast<double>(x);
    p = q;
  } else {
    auto [ptr, ec] = std::from_chars(p, end, v);
    if (ec != std::errc() || !std::isfinite(v))
      return nullptr;
    p = ptr;
  }
  while (p < end && isBlank(*p))
    ++p;
  return p;
}

std::string plural(size_t n, const char *word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

class Reader {
public:
  Reader(const std::string &path, CsvError &err) : path_(path), err_(err) {}
  /// An empty field or NA reads as NaN (a missing value) instead of an error.
  bool missingAsNaN = false;

  std::optional<CsvTable> run(const std::vector<std::string> &wanted, CsvSplit *split) {
    struct stat st;
    const int fd = openForReading(st);
    if (fd < 0)
      return std::nullopt;
    Closer closer{fd};
    if (S_ISDIR(st.st_mode))
      return cannotRead(EISDIR);
    fileSize_ = S_ISREG(st.st_mode) ? static_cast<size_t>(st.st_size) : 0;
    size_t limit = SIZE_MAX; // bytes to parse
    bool headerDone = false;
    if (split) {
      if (!S_ISREG(st.st_mode))
        return fail(path_ + ": a data-parallel run reads a part of each file, so it must be a regular file");
      std::string head;
      size_t dataStart = 0;
      if (!readHeader(fd, head, dataStart) || !select(wanted))
        return std::nullopt;
      headerDone = true;
      if (!split->key.empty()) {
        auto it = std::find(names_.begin(), names_.end(), split->key);
        if (it == names_.end())
          return fail(noColumn(split->key));
        keyField_ = static_cast<size_t>(it - names_.begin());
      }
      size_t size = fileSize_;
      size_t begin = 0, end = 0;
      if (split->bytes) {
        begin = std::clamp(split->bytes->first, dataStart, size);
        end = std::clamp(split->bytes->second, dataStart, size);
      } else {
        split->keyBefore.reset();
        begin = boundary(fd, split->part, split->parts, dataStart, size, !split->key.empty(), &split->keyBefore);
        end = boundary(fd, split->part + 1, split->parts, dataStart, size, !split->key.empty(), nullptr);
      }
      if (!err_.message.empty())
        return std::nullopt;
      end = std::max(end, begin);
      if (::lseek(fd, static_cast<off_t>(begin), SEEK_SET) < 0)
        return cannotRead(errno);
      limit = end - begin;
      fileSize_ = limit;
      partBegin_ = begin;
      table_.firstByte = begin;
      table_.whole = false;
      line_ = 0; // counted from the part's start: see lineNumber
    }

    std::vector<char> buf(kBlock);
    size_t start = 0, have = 0; // unconsumed bytes are buf[start, have)
    bool eof = false;
    size_t taken = 0; // bytes read so far
    for (;;) {
      // Move the unconsumed tail to the front and fill the rest.
      if (start > 0) {
        std::memmove(buf.data(), buf.data() + start, have - start);
        consumed_ += start;
        have -= start;
        start = 0;
      }
      if (have == buf.size())
        buf.resize(buf.size() * 2); // a line longer than the buffer
      while (have < buf.size()) {
        size_t want = std::min(buf.size() - have, limit - taken);
        if (want == 0) {
          eof = true;
          break;
        }
        ssize_t n = ::read(fd, buf.data() + have, want);
        if (n < 0) {
          if (errno == EINTR)
            continue;
          return cannotRead(errno);
        }
        if (n == 0) {
          eof = true;
          break;
        }
        have += static_cast<size_t>(n);
        taken += static_cast<size_t>(n);
      }

      const char *b = buf.data(), *e = buf.data() + have, *lim = e;
      if (!eof) {
        const char *nl = static_cast<const char *>(::memrchr(b, '\n', have));
        if (!nl)
          continue; // no complete line yet: read more
        lim = nl + 1;
      }
      if (!headerDone) {
        if (!header(b, lim) || !select(wanted))
          return std::nullopt;
        headerDone = true;
      }
      if (!rows(b, lim, buf.data()))
        return std::nullopt;
      start = static_cast<size_t>(lim - buf.data());
      if (eof)
        break;
    }
    table_.path = path_;
    return std::move(table_);
  }

  std::optional<std::vector<CsvBatch>> batches(const std::string &key, int64_t elements, const CsvSplit *part) {
    struct stat st;
    const int fd = openForReading(st);
    if (fd < 0)
      return std::nullopt;
    Closer closer{fd};
    if (!S_ISREG(st.st_mode))
      return fail(path_ + ": a stochastic run reads the file in batches, so it must be a regular file");
    fileSize_ = static_cast<size_t>(st.st_size);
    std::string head;
    size_t dataStart = 0;
    if (!readHeader(fd, head, dataStart))
      return std::nullopt;
    const bool keyed = !key.empty();
    if (keyed) {
      auto it = std::find(names_.begin(), names_.end(), key);
      if (it == names_.end())
        return fail(noColumn(key));
      keyField_ = static_cast<size_t>(it - names_.begin());
    }
    size_t begin = dataStart, end = fileSize_;
    std::optional<double> before;
    if (part && part->parts > 1) {
      begin = boundary(fd, part->part, part->parts, dataStart, fileSize_, keyed, &before);
      end = std::max(begin, boundary(fd, part->part + 1, part->parts, dataStart, fileSize_, keyed, nullptr));
      if (!err_.message.empty())
        return std::nullopt;
      partBegin_ = begin;
      line_ = 0; // counted from the part's start: see lineNumber
    }
    if (::lseek(fd, static_cast<off_t>(begin), SEEK_SET) < 0)
      return cannotRead(errno);

    std::vector<CsvBatch> out;
    CsvBatch cur;
    cur.begin = begin;
    cur.keyBefore = before;
    double first = before ? *before + 1 : 0; // the current batch's first element id
    double last = first - 1;                 // its largest key so far
    int64_t rows = 0;                        // its rows so far
    size_t blankLine = 0;
    // One row (its line without the newline) starting at byte `at`.
    auto row = [&](std::string_view line, size_t at) -> bool {
      if (!line.empty() && line.back() == '\r')
        line.remove_suffix(1);
      const uint64_t digest = digestOf(line);
      if (allBlank(line)) {
        if (!blankLine)
          blankLine = line_;
        return true;
      }
      if (blankLine)
        return fail(this->at(blankLine) + "blank line followed by more data"), false;
      if (keyed) {
        std::optional<double> k = keyOf(line);
        if (!k || *k < 0 || *k != std::floor(*k))
          return fail(this->at(line_) + "column '" + key + "' (" + std::to_string(keyField_ + 1) +
                      "): expected an element id (an integer >= 0)"),
                 false;
        if (*k < last)
          return fail(this->at(line_) + "column '" + key + "': " + std::to_string(int64_t(*k)) + " after " +
                      std::to_string(int64_t(last)) + "; a stochastic run reads the rows in batches, so they "
                      "must be grouped by '" + key + "' in increasing order (sort the file by it)"),
                 false;
        if (rows > 0 && *k != last && *k - first >= double(elements)) {
          cur.end = at;
          cur.elements = int64_t(last - first) + 1;
          out.push_back(cur);
          cur = CsvBatch{};
          cur.begin = at;
          cur.keyBefore = last;
          first = last + 1;
          rows = 0;
        }
        // A batch spans its ids, rows or not. A few missing ids (a deleted
        // document) cost a few empty elements; a gap wider than a batch and
        // than kWideGap ids would multiply its memory (ids 3 then 20000000:
        // one batch of 2e7 elements, 4.8 GB, where --batch said 2).
        constexpr double kWideGap = 65536;
        if (*k - first > std::max(double(elements), kWideGap))
          return fail(this->at(line_) + "column '" + key + "': " + std::to_string(int64_t(*k)) + " after " +
                      std::to_string(int64_t(first - 1)) + "; the " + std::to_string(int64_t(*k - first)) +
                      " ids between have no rows, and a stochastic run's batch spans its ids, so this gap would " +
                      "make a batch of more than " + std::to_string(int64_t(*k - first)) + " elements (--batch " +
                      std::to_string(elements) + "): renumber the ids from 0 without gaps"),
                 false;
        if (rows == 0 || *k != last)
          ++cur.withRows;
        last = *k;
      } else if (rows == elements) {
        cur.end = at;
        cur.elements = rows;
        out.push_back(cur);
        cur = CsvBatch{};
        cur.begin = at;
        rows = 0;
      }
      if (!keyed)
        ++cur.withRows;
      cur.digest = (cur.digest ^ digest) * 0x9E3779B97F4A7C15ull + 1; // in row order
      ++rows;
      return true;
    };
    std::vector<char> buf(kBlock);
    size_t have = 0, pos = begin; // buf[0, have) holds the bytes from `pos`
    for (bool eof = false; !eof;) {
      size_t want = std::min(buf.size() - have, end - pos - have);
      ssize_t n = 0;
      do
        n = ::read(fd, buf.data() + have, want);
      while (n < 0 && errno == EINTR);
      if (n < 0)
        return cannotRead(errno);
      have += static_cast<size_t>(n);
      eof = n == 0 || pos + have >= end;
      const char *p = buf.data(), *lim = buf.data() + have;
      for (;;) {
        const char *nl = static_cast<const char *>(std::memchr(p, '\n', static_cast<size_t>(lim - p)));
        if (!nl && !(eof && p < lim))
          break;
        const char *stop = nl ? nl : lim;
        if (!row(std::string_view(p, static_cast<size_t>(stop - p)), pos + static_cast<size_t>(p - buf.data())))
          return std::nullopt;
        ++line_;
        p = nl ? nl + 1 : lim;
      }
      size_t used = static_cast<size_t>(p - buf.data());
      std::memmove(buf.data(), p, have - used);
      pos += used;
      have -= used;
      if (have == buf.size())
        buf.resize(buf.size() * 2); // a line longer than the buffer
    }
    if (rows > 0) {
      cur.end = end;
      cur.elements = keyed ? int64_t(last - first) + 1 : rows;
      out.push_back(cur);
    }
    return out;
  }

  std::optional<std::vector<std::string>> headerOnly() {
    int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      return cannotRead(errno);
    struct Closer {
      int fd;
      ~Closer() { ::close(fd); }
    } closer{fd};
    std::string head;
    size_t dataStart = 0;
    if (!readHeader(fd, head, dataStart))
      return std::nullopt;
    return names_;
  }

private:
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  };
  /// Opens the file for a sequential read and stats it; -1 (the error set) on failure.
  int openForReading(struct stat &st) {
    const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      return cannotRead(errno), -1;
    if (::fstat(fd, &st) != 0) {
      cannotRead(errno);
      ::close(fd);
      return -1;
    }
#ifdef POSIX_FADV_SEQUENTIAL
    (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
    return fd;
  }

  std::nullopt_t fail(std::string message) {
    err_.message = std::move(message);
    return std::nullopt;
  }
  std::nullopt_t cannotRead(int errnum) {
    return fail("cannot read '" + path_ + "': " + std::strerror(errnum));
  }
  std::string at(size_t line) const { return path_ + ":" + std::to_string(lineNumber(line)) + ": "; }
  // Lines of a part are counted from its start; the newlines before it are
  // counted only here, on the way to an error message.
  size_t lineNumber(size_t line) const {
    if (partBegin_ == SIZE_MAX)
      return line;
    return line + countNewlines(path_, partBegin_) + 1;
  }

  // Reads and parses the header line; `dataStart` is the byte after it.
  bool readHeader(int fd, std::string &head, size_t &dataStart) {
    char chunk[65536];
    for (;;) {
      ssize_t n = ::pread(fd, chunk, sizeof chunk, static_cast<off_t>(head.size()));
      if (n < 0) {
        if (errno == EINTR)
          continue;
        return cannotRead(errno), false;
      }
      head.append(chunk, static_cast<size_t>(n));
      if (n == 0 || std::memchr(chunk, '\n', static_cast<size_t>(n)))
        break;
    }
    const char *p = head.data(), *lim = head.data() + head.size();
    if (const char *nl = static_cast<const char *>(std::memchr(p, '\n', head.size())))
      lim = nl + 1;
    if (!header(p, lim))
      return false;
    dataStart = static_cast<size_t>(p - head.data());
    return true;
  }

  // The line starting at byte `pos` (without its newline), read alone.
  std::string lineAt(int fd, size_t pos, size_t size) {
    std::string line;
    char chunk[4096];
    while (pos < size) {
      ssize_t n = ::pread(fd, chunk, std::min(sizeof chunk, size - pos), static_cast<off_t>(pos));
      if (n <= 0) {
        if (n < 0 && errno == EINTR)
          continue;
        if (n < 0)
          cannotRead(errno);
        break;
      }
      const char *nl = static_cast<const char *>(std::memchr(chunk, '\n', static_cast<size_t>(n)));
      line.append(chunk, nl ? static_cast<size_t>(nl - chunk) : static_cast<size_t>(n));
      if (nl)
        break;
      pos += static_cast<size_t>(n);
    }
    return line;
  }

  // The start of the line that ends just before byte `pos` (pos > dataStart).
  size_t previousLineStart(int fd, size_t pos, size_t dataStart) {
    size_t end = pos - 1; // the newline ending that line
    char chunk[4096];
    while (end > dataStart) {
      size_t from = end > dataStart + sizeof chunk ? end - sizeof chunk : dataStart;
      ssize_t n = ::pread(fd, chunk, end - from, static_cast<off_t>(from));
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0) {
        if (n < 0)
          cannotRead(errno);
        return dataStart;
      }
      if (const char *nl = static_cast<const char *>(::memrchr(chunk, '\n', static_cast<size_t>(n))))
        return from + static_cast<size_t>(nl - chunk) + 1;
      end = from;
    }
    return dataStart;
  }

  // The key field of a line, if it is a number.
  std::optional<double> keyOf(std::string_view line) const {
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    size_t pos = 0;
    for (size_t f = 0; f < keyField_; ++f) {
      pos = line.find(',', pos);
      if (pos == std::string_view::npos)
        return std::nullopt;
      ++pos;
    }
    size_t comma = line.find(',', pos);
    double v;
    if (parseField(trim(line.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos)), v) !=
        Num::Ok)
      return std::nullopt;
    return v;
  }

  // Where part k of `parts` starts: a line start near the k-th equal cut
  // of the data bytes, moved past a run of keys that began before it.
  size_t boundary(int fd, int k, int parts, size_t dataStart, size_t size, bool keyed, std::optional<double> *keyBefore) {
    if (k <= 0)
      return dataStart;
    if (k >= parts)
      return size;
    size_t s = dataStart + static_cast<size_t>(static_cast<unsigned __int128>(size - dataStart) * unsigned(k) /
                                               unsigned(parts));
    if (s > dataStart) { // to the next line start
      char c = 0;
      if (::pread(fd, &c, 1, static_cast<off_t>(s - 1)) == 1 && c != '\n') {
        std::string rest = lineAt(fd, s, size);
        s = std::min(size, s + rest.size() + 1);
      }
    }
    if (!keyed || s <= dataStart || s >= size)
      return s;
    std::optional<double> before = keyOf(lineAt(fd, previousLineStart(fd, s, dataStart), size));
    if (!before)
      return s;
    while (s < size) {
      std::string line = lineAt(fd, s, size);
      std::optional<double> key = keyOf(line);
      if (!key || *key != *before)
        break;
      s = std::min(size, s + line.size() + 1);
    }
    if (keyBefore)
      *keyBefore = before;
    return s;
  }
  std::string at(size_t line, size_t f) const {
    return at(line) + "column '" + names_[f] + "' (" + std::to_string(f + 1) + "): ";
  }
  static std::string quoteAdvice() {
    return "quoted fields are not supported (values must be plain numbers separated by commas)";
  }

  // Parses the header line at the start of [p, lim) and advances p past it.
  bool header(const char *&p, const char *lim) {
    if (lim - p >= 3 && std::memcmp(p, "\xEF\xBB\xBF", 3) == 0)
      p += 3; // UTF-8 byte-order mark
    if (p == lim)
      return fail(path_ + ": the file is empty; expected a header line naming the columns"), false;
    if (lim - p >= 2 && static_cast<unsigned char>(p[0]) == 0x1f && static_cast<unsigned char>(p[1]) == 0x8b)
      return fail(path_ + ": the file is gzip-compressed; decompress it first (gunzip -k " + path_ + ")"), false;
    const char *nl = static_cast<const char *>(std::memchr(p, '\n', static_cast<size_t>(lim - p)));
    std::string_view line(p, static_cast<size_t>((nl ? nl : lim) - p));
    p = nl ? nl + 1 : lim;
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    if (allBlank(line))
      return fail(at(1) + "the header line is empty; expected the column names separated by commas"), false;
    if (line.find('"') != std::string_view::npos)
      return fail(at(1) + "the header contains a '\"'; " + quoteAdvice()), false;
    if (line.find('\r') != std::string_view::npos)
      return fail(at(1) + "carriage return inside the header line; lines must end in LF or CRLF"), false;
    // A binary file: its bytes are not echoed back as column names.
    for (size_t i = 0; i < line.size(); ++i)
      if (const auto c = static_cast<unsigned char>(line[i]); (c < 0x20 && c != '\t') || c == 0x7f) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", c);
        return fail(at(1) + "the header has a control character (byte " + hex + " at offset " + std::to_string(i) +
                    "); expected a text CSV file, column names separated by commas"),
               false;
      }
    for (size_t pos = 0;;) {
      size_t comma = line.find(',', pos);
      std::string_view name = trim(line.substr(pos, comma == std::string_view::npos ? std::string_view::npos : comma - pos));
      size_t f = names_.size();
      if (name.empty())
        return fail(at(1) + "column " + std::to_string(f + 1) + " of the header has an empty name"), false;
      for (size_t g = 0; g < f; ++g)
        if (names_[g] == name)
          return fail(at(1) + "the header names column '" + std::string(name) + "' twice (columns " +
                      std::to_string(g + 1) + " and " + std::to_string(f + 1) + ")"),
                 false;
      names_.emplace_back(name);
      if (comma == std::string_view::npos)
        break;
      pos = comma + 1;
    }
    return true;
  }

  std::string noColumn(const std::string &want) const {
    std::string msg = path_ + ": no column '" + want + "'; the columns are: ";
    constexpr size_t kShow = 30;
    for (size_t f = 0; f < names_.size() && f < kShow; ++f)
      msg += (f ? ", " : "") + names_[f];
    if (names_.size() > kShow)
      msg += ", ... (" + std::to_string(names_.size()) + " in all)";
    size_t limit = want.size() <= 2 ? 0 : want.size() <= 5 ? 1 : want.size() <= 9 ? 2 : 3;
    size_t best = SIZE_MAX, bestF = 0;
    for (size_t f = 0; f < names_.size(); ++f) {
      size_t d = editDistance(want, names_[f]);
      if (d < best)
        best = d, bestF = f;
    }
    if (best <= limit)
      msg += "; did you mean '" + names_[bestF] + "'?";
    return msg;
  }

  bool select(const std::vector<std::string> &wanted) {
    ncols_ = names_.size();
    slotOf_.assign(ncols_, -1);
    if (wanted.empty()) {
      for (size_t f = 0; f < ncols_; ++f) {
        slotOf_[f] = static_cast<int>(f);
        table_.columns.push_back(names_[f]);
      }
    } else {
      for (const std::string &w : wanted) {
        auto it = std::find(names_.begin(), names_.end(), w);
        if (it == names_.end())
          return fail(noColumn(w)), false;
        size_t f = static_cast<size_t>(it - names_.begin());
        if (slotOf_[f] >= 0)
          return fail(path_ + ": column '" + w + "' is requested twice"), false;
        slotOf_[f] = static_cast<int>(table_.columns.size());
        table_.columns.push_back(w);
      }
    }
    table_.values.resize(table_.columns.size());
    rowVals_.resize(table_.columns.size());
    return true;
  }

  // Makes room for `more` rows without reallocation inside the block.
  void reserve(size_t more, size_t bytesThrough) {
    std::vector<double> &first = table_.values.front();
    size_t need = first.size() + more;
    if (need <= first.capacity())
      return;
    size_t cap = need;
    if (fileSize_ > bytesThrough && bytesThrough > 0) {
      // Project the total from the density of rows so far (+3%).
      double projected = double(need) * double(fileSize_) / double(bytesThrough) * 1.03 + 64;
      cap = std::max(cap, static_cast<size_t>(projected));
    }
    if (first.capacity() > 0) // an underestimate: grow by at least 25%
      cap = std::max(cap, first.capacity() + first.capacity() / 4);
    for (std::vector<double> &col : table_.values)
      col.reserve(cap);
  }

  void push() {
    for (size_t s = 0; s < rowVals_.size(); ++s)
      table_.values[s].push_back(rowVals_[s]);
  }

  // The fast path: parses the row at p if it is unremarkable.
  bool fastRow(const char *&p, const char *lim) {
    const char *q = p;
    for (size_t f = 0;; ++f) {
      int slot = slotOf_[f];
      if (slot >= 0) {
        q = fastNumber(q, lim, rowVals_[static_cast<size_t>(slot)]);
        if (!q)
          return false;
      } else {
        while (q < lim && *q != ',' && *q != '\n' && *q != '"')
          ++q;
        if (q < lim && *q == '"')
          return false;
      }
      if (f + 1 < ncols_) {
        if (q == lim || *q != ',')
          return false;
        ++q;
      } else {
        if (q < lim && *q == '\r')
          ++q;
        if (q == lim) { // the last line, without a newline
          p = q;
          return true;
        }
        if (*q != '\n')
          return false;
        p = q + 1;
        return true;
      }
    }
  }

  // The slow path: the row at p, checked field by field.
  bool slowRow(const char *&p, const char *lim) {
    const char *nl = static_cast<const char *>(std::memchr(p, '\n', static_cast<size_t>(lim - p)));
    std::string_view line(p, static_cast<size_t>((nl ? nl : lim) - p));
    p = nl ? nl + 1 : lim;
    size_t ln = line_++;
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    if (allBlank(line)) {
      if (blankLine_ == 0)
        blankLine_ = ln;
      return true;
    }
    if (blankLine_ != 0)
      return fail(at(blankLine_) + "blank line before more data (line " + std::to_string(ln) +
                  "); only blank lines at the end of the file are ignored" +
                  (missingAsNaN && ncols_ == 1 ? std::string(" (a missing value in a file of one column is written NA)")
                                               : std::string())),
             false;
    if (size_t qpos = line.find('"'); qpos != std::string_view::npos) {
      size_t f = static_cast<size_t>(std::count(line.begin(), line.begin() + static_cast<ptrdiff_t>(qpos), ','));
      if (f < ncols_)
        return fail(at(ln, f) + "found a '\"'; " + quoteAdvice()), false;
      return fail(at(ln) + "found a '\"'; " + quoteAdvice()), false;
    }
    size_t nfields = static_cast<size_t>(std::count(line.begin(), line.end(), ',')) + 1;
    if (nfields != ncols_)
      return fail(at(ln) + plural(nfields, "field") + ", but the header has " + std::to_string(ncols_)), false;
    size_t pos = 0;
    for (size_t f = 0; f < ncols_; ++f) {
      size_t comma = f + 1 < ncols_ ? line.find(',', pos) : line.size();
      int slot = slotOf_[f];
      if (slot >= 0) {
        std::string_view field = trim(line.substr(pos, comma - pos));
        if (missingAsNaN && (field.empty() || field == "NA")) {
          rowVals_[static_cast<size_t>(slot)] = std::numeric_limits<double>::quiet_NaN();
          pos = comma + 1;
          continue;
        }
        switch (parseField(field, rowVals_[static_cast<size_t>(slot)])) {
        case Num::Ok:
          break;
        case Num::Empty:
          return fail(at(ln, f) + "empty value"), false;
        case Num::NotNumber:
          return fail(at(ln, f) + "expected a number, got '" + shown(field) + "'"), false;
        case Num::NotFinite:
          return fail(at(ln, f) + "'" + shown(field) + "' is not a finite number"), false;
        }
      }
      pos = comma + 1;
    }
    push();
    return true;
  }

  // Parses the rows in [p, lim); bufBegin is the start of the buffer.
  bool rows(const char *p, const char *lim, const char *bufBegin) {
    if (p == lim)
      return true;
    size_t maxRows = static_cast<size_t>(std::count(p, lim, '\n')) + 1;
    reserve(maxRows, consumed_ + static_cast<size_t>(lim - bufBegin));
    while (p < lim) {
      if (blankLine_ == 0 && *p != '\n' && *p != '\r' && fastRow(p, lim)) {
        push();
        ++line_;
        continue;
      }
      if (!slowRow(p, lim))
        return false;
    }
    return true;
  }

  const std::string &path_;
  CsvError &err_;
  CsvTable table_;
  std::vector<std::string> names_;
  std::vector<int> slotOf_; // file column -> slot in the table, or -1
  std::vector<double> rowVals_;
  size_t ncols_ = 0;
  size_t fileSize_ = 0;
  size_t consumed_ = 0;    // bytes of the file before the buffer's start
  size_t line_ = 2;        // line number of the next data row
  size_t blankLine_ = 0;   // first blank line seen (0: none)
  size_t keyField_ = 0;    // the split's key column
  size_t partBegin_ = SIZE_MAX; // first byte of the part read (SIZE_MAX: the whole file)
};

} // namespace

size_t countNewlines(const std::string &path, size_t end) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  std::vector<char> buf(kBlock);
  size_t count = 0, pos = 0;
  while (pos < end) {
    ssize_t n = ::read(fd, buf.data(), std::min(buf.size(), end - pos));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    count += static_cast<size_t>(std::count(buf.data(), buf.data() + n, '\n'));
    pos += static_cast<size_t>(n);
  }
  ::close(fd);
  return count;
}

size_t CsvTable::line(size_t row) const {
  if (whole)
    return row + 2;
  if (linesBefore_ == 0)
    linesBefore_ = countNewlines(path, firstByte);
  return row + linesBefore_ + 1;
}

std::optional<CsvTable> readCsv(const std::string &path, const std::vector<std::string> &wanted, CsvError &err,
                                CsvSplit *split, bool missingAsNaN) {
  Reader reader(path, err);
  reader.missingAsNaN = missingAsNaN;
  return reader.run(wanted, split);
}

std::optional<std::vector<CsvBatch>> scanBatches(const std::string &path, const std::string &key, int64_t elements,
                                                 CsvError &err, const CsvSplit *part) {
  Reader reader(path, err);
  return reader.batches(key, elements, part);
}

std::optional<std::vector<std::string>> readCsvHeader(const std::string &path, CsvError &err) {
  Reader reader(path, err);
  return reader.headerOnly();
}

} // namespace ppc::rt
