//===- runtime/Binding.cpp - binding CSV data to observed variables --------===//
#include "runtime/Binding.h"
#include "runtime/BoundDataChecks.h"

#include "runtime/MemoryLimits.h"

#include "ir/Evaluate.h"
#include "ir/IR.h"
#include "runtime/Csv.h"
#include "runtime/SupportCheck.h"
#include "runtime/UnusedColumns.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <set>

namespace ppc::rt {
namespace {

/// "an --infer file", "a --heldout file": where data is missing from.
std::string aFileOf(const std::string &flag) { return (flag == "--infer" ? "an " : "a ") + flag + " file"; }

using ir::Op;
using ir::OpKind;
using ir::TypeKind;
using ir::Value;

/// Whether a variable of this type holds one number per element (a vector,
/// a probability vector or a matrix holds a row of them).
bool isScalarKind(TypeKind k) { return k != TypeKind::Vector && k != TypeKind::Simplex && k != TypeKind::PDMatrix; }

/// How messages name a variable the data bind.
std::string kindOf(const Value *v) { return ir::isKnownInput(v) ? "the Data input" : "observed variable"; }

bool isDataPlate(const Value *p) { return p->def && p->def->plateKind == Op::PlateKind::Data; }

/// The op that defines v's elements: for a conditional's result, the
/// factor its first branch yields.
const Op *elementDefinition(const Value *v) {
  const Op *def = v->def;
  while (def && (def->kind == OpKind::If || def->kind == OpKind::Match)) {
    size_t i = std::find(def->results.begin(), def->results.end(), v) - def->results.begin();
    const Op *y = def->regions[0]->terminator();
    if (!y || i >= y->operands.size())
      break;
    v = y->operands[i].value;
    def = v->def;
  }
  return def;
}

/// The variables the user observes: observed factors outside branches, the
/// known inputs (`Data`), and the results of conditionals whose branches
/// yield observed variables.
std::vector<const Value *> observedVariables(const ir::Module &m) {
  std::vector<const Value *> out;
  std::function<void(const ir::Region &, bool)> visit = [&](const ir::Region &r, bool inBranch) {
    for (const auto &op : r.ops) {
      if ((op->kind == OpKind::Random || op->kind == OpKind::Data) && op->observed && !inBranch)
        out.push_back(op->result());
      if ((op->kind == OpKind::If || op->kind == OpKind::Match) && !inBranch)
        for (size_t i = 0; i < op->results.size(); ++i) {
          const Op *def = elementDefinition(op->results[i]); // through nested conditionals
          if (def && def->observed)
            out.push_back(op->results[i]);
        }
      bool branch = inBranch || op->kind == OpKind::If || op->kind == OpKind::Match;
      for (const auto &sub : op->regions)
        visit(*sub, branch);
    }
  };
  visit(m.body, false);
  return out;
}


/// The names a plate answers to for variable `v`: the indices of the loops
/// over it around v's definition (the lambda parameters of the model:
/// `g` in `(0L until 2L).map(g => ...)`), its IR name without "P." (`theta`
/// for the plate of `val theta = ?.map(...)`) unless that is an observed
/// variable's name, and its IR name.
std::vector<std::string> ownPlateNames(const Value *plate, const Value *v, const std::set<std::string> &observed) {
  // Names the user wrote come first; generated loop indices (i.x) last.
  std::vector<std::string> written, generated;
  if (const Op *def = elementDefinition(v))
    for (Op *l : ir::enclosingLoops(*def))
      if (l->operands[0].value == plate && !observed.count(l->index->name))
        (l->index->name.rfind("i.", 0) == 0 ? generated : written).push_back(l->index->name);
  if (plate->name.rfind("P.", 0) == 0 && !observed.count(plate->name.substr(2)))
    written.push_back(plate->name.substr(2));
  written.insert(written.end(), generated.begin(), generated.end());
  written.push_back(plate->name);
  return written;
}

/// The names `plate` answers to for `v`, less any that another of v's
/// plates answers to too: `val g = ?.map(_ => (0L until K).map(_ => ?))`
/// makes an outer plate %P.g and an inner one %g, and a column 'g' would
/// bind both (the advice to name a column 'g' then failed).
std::vector<std::string> plateNames(const Value *plate, const Value *v, const std::set<std::string> &observed) {
  std::vector<std::string> names = ownPlateNames(plate, v, observed);
  const size_t before = names.size();
  for (const Value *other : v->dims) {
    if (other == plate)
      continue;
    const std::vector<std::string> theirs = ownPlateNames(other, v, observed);
    names.erase(std::remove_if(names.begin(), names.end(),
                               [&](const std::string &n) {
                                 return std::find(theirs.begin(), theirs.end(), n) != theirs.end();
                               }),
                names.end());
  }
  // The advice names the first: after a shared name, the plate's own IR name
  // (P.g) reads better than a generated loop index (i.y).
  if (names.empty())
    names.push_back(plate->name);
  auto own = std::find(names.begin(), names.end(), plate->name);
  if (names.size() != before && names.front().rfind("i.", 0) == 0 && own != names.end())
    std::rotate(names.begin(), own, names.end());
  return names;
}

struct Column {
  const std::vector<double> *values = nullptr;
  std::string name;
  size_t position = 0; // 1-based
};

class Binder {
public:
  Binder(const ir::Module &m, const ir::Evaluation &ev, const BindingOptions &o, std::vector<std::string> &errors)
      : m_(m), ev_(ev), opts_(o), errors_(errors) {}

  /// The stream of a stochastic run: the file over the partitioned plate,
  /// its key column and its batches.
  std::optional<BatchPlan> batches(int64_t batchElements) {
    std::optional<std::vector<CsvTable>> tables = selectFiles();
    if (!tables)
      return std::nullopt;
    const Partition &part = *opts_.partition;
    for (auto &[f, vars] : byFile_) {
      std::optional<std::string> key = splitKey((*tables)[f], vars);
      if (!errors_.empty())
        return std::nullopt;
      if (!key)
        continue;
      BatchPlan plan;
      plan.file = (*tables)[f].path;
      plan.key = *key;
      CsvError err;
      CsvSplit how;
      how.part = part.part;
      how.parts = part.parts;
      auto cut = scanBatches(plan.file, plan.key, batchElements, err, &how);
      if (!cut) {
        errors_.push_back(err.message);
        return std::nullopt;
      }
      plan.batches = std::move(*cut);
      for (const CsvBatch &b : plan.batches)
        plan.elements += b.elements;
      return plan;
    }
    errors_.push_back("no " + opts_.filesFlag + " file has the data of plate %" + part.plate->name +
                      ", the outermost data plate a stochastic run streams in batches");
    return std::nullopt;
  }

private:
  /// Reads the files (only their headers with a partition, whose data is
  /// read afterwards) and decides which binds each observed variable.
  std::optional<std::vector<CsvTable>> selectFiles() {
    std::vector<const Value *> observed = observedVariables(m_);
    for (const Value *v : observed)
      observedNames_.insert(v->name);
    std::vector<CsvTable> tables;
    for (const std::string &f : opts_.files) {
      CsvError err;
      if (opts_.partition) { // the header only, for now: which file to split is decided below
        auto names = readCsvHeader(f, err);
        if (!names) {
          errors_.push_back(err.message);
          continue;
        }
        CsvTable t;
        t.path = f;
        t.columns = *names;
        t.values.resize(names->size());
        tables.push_back(std::move(t));
        continue;
      }
      auto t = readCsv(f, {}, err, nullptr, /*missingAsNaN=*/true);
      if (!t) {
        errors_.push_back(err.message);
        continue;
      }
      tables.push_back(std::move(*t));
    }
    if (!errors_.empty())
      return std::nullopt;
    if (opts_.weight) {
      bool found = false;
      for (const CsvTable &t : tables)
        found = found || t.column(*opts_.weight);
      if (!found)
        errors_.push_back("--weight " + *opts_.weight + ": no " + opts_.filesFlag + " file has a column '" + *opts_.weight + "'");
    }
    for (const auto &[name, column] : opts_.map) {
      bool known = observedNames_.count(name) != 0;
      for (const Value *v : observed)
        for (const Value *p : v->dims)
          for (const std::string &n : plateNames(p, v, observedNames_))
            known = known || n == name;
      if (!known)
        errors_.push_back("--map " + name + "=" + column + ": '" + name +
                          "' is neither an observed variable nor a plate of one");
    }
    // Which file binds each observed variable.
    std::set<size_t> claimed;
    for (const Value *v : observed) {
      std::vector<size_t> files;
      size_t errorsBefore = errors_.size();
      for (size_t f = 0; f < tables.size(); ++f)
        if (!valueColumns(tables[f], v).empty())
          files.push_back(f);
      if (errors_.size() != errorsBefore) // its columns are wrong, and the error says how
        return std::nullopt;
      if (files.empty() && v->type.kind == TypeKind::Vector) {
        int64_t D = vectorDimension(v);
        errors_.push_back("no data for " + kindOf(v) + " '" + v->name + "', a vector of dimension " +
                          std::to_string(D) + ": give columns " + v->name + "0.." + v->name + std::to_string(D - 1) +
                          " in " + aFileOf(opts_.filesFlag) + ", or --map " + v->name + "=COLUMN,COLUMN,... or --map " + v->name +
                          "=PREFIX* (PREFIX0..PREFIX" + std::to_string(D - 1) + ")");
        continue;
      }
      if (files.empty()) {
        errors_.push_back(missingColumns(tables, v));
        continue;
      }
      claimed.insert(files.begin(), files.end());
      if (files.size() > 1) {
        errors_.push_back(kindOf(v) + " '" + v->name + "' has a column in both " + tables[files[0]].path +
                          " and " + tables[files[1]].path);
        continue;
      }
      byFile_[files[0]].push_back(v);
    }
    // (A file whose columns some variable claimed, twice over, is not news.)
    for (size_t f = 0; f < tables.size(); ++f)
      if (!byFile_.count(f) && !claimed.count(f)) {
        std::string cols;
        for (size_t c = 0; c < tables[f].columns.size() && c < 10; ++c)
          cols += (c ? ", " : "") + tables[f].columns[c];
        errors_.push_back(tables[f].path +
                          ": no column of this file binds an observed variable of the model (columns: " + cols +
                          (tables[f].columns.size() > 10 ? ", ..." : "") + ")" + latentColumnHint(tables[f].columns));
      }
    if (!errors_.empty())
      return std::nullopt;
    return tables;
  }

public:
  std::optional<BoundData> run() {
    std::optional<std::vector<CsvTable>> selected = selectFiles();
    if (!selected)
      return std::nullopt;
    std::vector<CsvTable> &tables = *selected;
    if (opts_.partition && !readParts(tables))
      return std::nullopt;
    for (auto &[f, vars] : byFile_)
      bindFileVariables(tables[f], vars);
    if (!errors_.empty())
      return std::nullopt;
    checkDataAliases(m_, out_, errors_);
    if (opts_.weight)
      checkChainWeights(m_, out_, *opts_.weight, errors_);
    if (!errors_.empty())
      return std::nullopt;
    warnFarFromZero(m_, ev_, out_);
    return std::move(out_);
  }

private:
  /// A data-parallel run: reads this process's part of the file over the
  /// partitioned plate and the whole of every other file, in place of the
  /// headers in `tables`.
  bool readParts(std::vector<CsvTable> &tables) {
    const Partition &part = *opts_.partition;
    std::optional<size_t> splitFile;
    for (auto &[f, vars] : byFile_) {
      CsvError err;
      CsvSplit how;
      how.part = part.part;
      how.parts = part.parts;
      std::optional<std::string> key = splitKey(tables[f], vars);
      if (!errors_.empty())
        return false;
      bool split = key.has_value();
      if (split) {
        if (splitFile) {
          errors_.push_back(std::string(part.batch ? "a stochastic" : "a data-parallel") + " run reads the data of plate %" +
                            part.plate->name + " from one file; both " + tables[*splitFile].path + " and " +
                            tables[f].path + " have it (join them into one file)");
          return false;
        }
        splitFile = f;
        how.key = *key;
        if (part.batch) {
          how.bytes = std::pair{part.batch->begin, part.batch->end};
          how.keyBefore = part.batch->keyBefore;
        }
      }
      auto t = readCsv(tables[f].path, {}, err, split ? &how : nullptr, /*missingAsNaN=*/true);
      if (!t) {
        errors_.push_back(err.message);
        return false;
      }
      if (split && !how.key.empty() && !renumberPart(*t, how))
        return false;
      tables[f] = std::move(*t);
    }
    return true;
  }

  /// For a file over the partitioned plate: its index column ("" when the
  /// rows are the elements); none for a file over other plates.
  std::optional<std::string> splitKey(const CsvTable &t, const std::vector<const Value *> &vars) {
    const Value *first = vars.front();
    const Value *plate = opts_.partition->plate;
    if (first->dims.empty() || first->dims.front() != plate)
      return std::nullopt;
    const bool wide = isWide(t, first);
    if (first->dims.size() > 1 || !wide) // the plate is not the file's only row plate: by its index column
      if (std::optional<Column> key = indexColumn(t, plate, first))
        return key->name;
    return std::string();
  }

  /// Ids of the part's elements from 0: the part starts after the element
  /// of the row before it. Checks that rows come grouped in increasing order.
  bool renumberPart(CsvTable &t, const CsvSplit &how) {
    std::vector<double> &ids = *const_cast<std::vector<double> *>(t.column(how.key));
    double start = how.keyBefore ? *how.keyBefore + 1 : 0;
    double previous = start;
    for (size_t r = 0; r < ids.size(); ++r) {
      if (ids[r] < previous || !std::isfinite(ids[r])) {
        errors_.push_back(t.path + ":" + std::to_string(t.line(r)) + ": column '" + how.key +
                          "': " + valueText(ids[r]) + " after " + valueText(r == 0 ? start - 1 : ids[r - 1]) +
                          "; a data-parallel run needs the rows grouped by '" + how.key +
                          "' in increasing order (sort the file by it)");
        return false;
      }
      previous = ids[r];
      ids[r] -= start;
    }
    return true;
  }

  /// The columns holding v's values: one (long format), or one per element
  /// of v's known-size innermost plate (wide format: --map v=p* or v0, v1, ...).
  std::vector<Column> valueColumns(const CsvTable &t, const Value *v) {
    auto it = opts_.map.find(v->name);
    std::string name = it == opts_.map.end() ? v->name : it->second;
    if (v->type.kind == TypeKind::Vector)
      return vectorColumns(t, v, name, it != opts_.map.end());
    if (!name.empty() && name.back() == '*') {
      std::string prefix = name.substr(0, name.size() - 1);
      return wideColumns(t, v, prefix);
    }
    if (const std::vector<double> *c = t.column(name))
      return {Column{c, name, position(t, name)}};
    if (it == opts_.map.end())
      return wideColumns(t, v, v->name);
    return {};
  }

  /// The D components of a vector-valued variable: D columns named
  /// NAME0, NAME1, ... (NAME is the variable's, or P in --map v=P*), or the
  /// comma-separated list of --map v=a,b,c (one name when D = 1).
  std::vector<Column> vectorColumns(const CsvTable &t, const Value *v, const std::string &name, bool mapped) {
    int64_t D = vectorDimension(v);
    std::vector<std::string> names;
    if (mapped && (name.empty() || name.back() != '*')) {
      size_t start = 0;
      while (true) {
        size_t comma = name.find(',', start);
        names.push_back(name.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
        if (comma == std::string::npos)
          break;
        start = comma + 1;
      }
    } else {
      std::string prefix = !name.empty() && name.back() == '*' ? name.substr(0, name.size() - 1) : name;
      for (int64_t i = 0; i < D; ++i)
        names.push_back(prefix + std::to_string(i));
    }
    for (size_t i = 0; int64_t(names.size()) == D && i < names.size(); ++i)
      for (size_t j = 0; j < i; ++j)
        if (names[i] == names[j]) {
          addErrorOnce("--map " + v->name + "=" + name + " names column '" + names[i] + "' twice; each of the " +
                       std::to_string(D) + " components of '" + v->name + "' takes its own column");
          return {};
        }
    std::vector<Column> cols;
    for (const std::string &n : names)
      if (const std::vector<double> *c = t.column(n))
        cols.push_back(Column{c, n, position(t, n)});
    if (cols.empty())
      return {};
    if (int64_t(cols.size()) != D || cols.size() != names.size()) {
      std::string missing;
      for (const std::string &n : names)
        if (!t.column(n))
          missing += (missing.empty() ? "" : ", ") + n;
      addErrorOnce(t.path + ": '" + v->name + "' is a vector of dimension " + std::to_string(D) + " and takes " +
                        std::to_string(D) + " columns; " +
                        (int64_t(names.size()) != D ? "--map " + v->name + "=" + name + " names " +
                                                          std::to_string(names.size())
                                                    : "missing: " + missing));
      return {};
    }
    if (!(mapped && (name.empty() || name.back() != '*'))) {
      const std::string prefix = !name.empty() && name.back() == '*' ? name.substr(0, name.size() - 1) : name;
      const ir::Dim &d = v->type.dim;
      if (!noExtraWideColumns(t, v, prefix, D, !d.isConstant() && d.value->isParam() ? d.value->name : std::string()))
        return {};
    }
    return cols;
  }

  /// Why no file binds scalar variable `v`: the column its --map names is in
  /// no file, or some of its wide columns PREFIX0.. are missing (named), or
  /// nothing was said about it.
  std::string missingColumns(const std::vector<CsvTable> &tables, const Value *v) {
    auto it = opts_.map.find(v->name);
    const bool wide = !v->dims.empty() && !isDataPlate(v->dims.back());
    std::string prefix = it == opts_.map.end() ? v->name : it->second;
    const bool star = !prefix.empty() && prefix.back() == '*';
    if (star)
      prefix.pop_back();
    if (wide && (star || it == opts_.map.end())) {
      auto size = ev_.plateSizes.find(v->dims.back());
      if (size != ev_.plateSizes.end()) {
        std::vector<std::string> missing;
        int64_t found = 0;
        for (int64_t i = 0; i < size->second; ++i) {
          bool any = false;
          for (const CsvTable &t : tables)
            any = any || t.column(prefix + std::to_string(i));
          if (any)
            ++found;
          else
            missing.push_back(prefix + std::to_string(i));
        }
        if (found > 0) {
          std::string list;
          for (size_t i = 0; i < missing.size() && i < 5; ++i)
            list += (i ? ", " : "") + missing[i];
          return kindOf(v) + " '" + v->name + "' takes " + std::to_string(size->second) + " columns " + prefix +
                 "0.." + prefix + std::to_string(size->second - 1) + "; missing: " + list +
                 (missing.size() > 5 ? " and " + std::to_string(missing.size() - 5) + " more" : std::string());
        }
      }
    }
    if (it != opts_.map.end())
      return "--map " + v->name + "=" + it->second + ": no " + opts_.filesFlag + " file has " +
             (star ? "columns " + prefix + "0, " + prefix + "1, ..." : "a column '" + it->second + "'");
    return "no data for " + kindOf(v) + " '" + v->name + "': give a column named '" + v->name +
           "' in " + aFileOf(opts_.filesFlag) + ", or --map " + v->name + "=COLUMN";
  }

  /// The model parameter a plate's size is, where it is one (K in 0L until K).
  static std::string plateSizeName(const Value *plate) {
    const Op *def = plate->def;
    if (def && def->operands.size() >= 2 && def->operands[1].value && def->operands[1].value->isParam())
      return def->operands[1].value->name;
    return {};
  }

  /// Columns PREFIX<i> with i >= D: they match the binding of a D-wide
  /// variable but would be left out without a word (a model written for
  /// 64 pixels run on a file of 784). Adds the error; false if there are some.
  bool noExtraWideColumns(const CsvTable &t, const Value *v, const std::string &prefix, int64_t D,
                          const std::string &sizeName) {
    std::vector<std::string> extra;
    for (const std::string &c : t.columns) {
      if (c.size() <= prefix.size() || c.compare(0, prefix.size(), prefix) != 0)
        continue;
      const std::string digits = c.substr(prefix.size());
      if (digits.size() > 18 || (digits.size() > 1 && digits[0] == '0') ||
          !std::all_of(digits.begin(), digits.end(), [](char ch) { return ch >= '0' && ch <= '9'; }))
        continue;
      if (std::stoll(digits) >= D)
        extra.push_back(c);
    }
    if (extra.empty())
      return true;
    addErrorOnce(t.path + ": " + std::to_string(extra.size()) + " column" + (extra.size() > 1 ? "s" : "") + " (" +
                 extra.front() + (extra.size() > 1 ? ".." + extra.back() : std::string()) + ") match " + prefix +
                 "0.." + prefix + std::to_string(D - 1) + " but '" + v->name + "' takes only " + std::to_string(D) +
                 (sizeName.empty() ? std::string() : " (" + sizeName + " = " + std::to_string(D) + ")") +
                 ": give -p " + (sizeName.empty() ? std::string("SIZE") : sizeName) + "=" +
                 std::to_string(D + int64_t(extra.size())) + " to use them all, or a file without them");
    return false;
  }

  void addErrorOnce(const std::string &e) {
    if (std::find(errors_.begin(), errors_.end(), e) == errors_.end())
      errors_.push_back(e);
  }

  int64_t vectorDimension(const Value *v) const {
    const ir::Dim &d = v->type.dim;
    return d.isConstant() ? d.constant : ev_.valueOf(d.value).value_or(0);
  }

  std::vector<Column> wideColumns(const CsvTable &t, const Value *v, const std::string &prefix) {
    if (v->dims.empty() || isDataPlate(v->dims.back()))
      return {};
    auto size = ev_.plateSizes.find(v->dims.back());
    if (size == ev_.plateSizes.end())
      return {};
    std::vector<Column> cols;
    for (int64_t i = 0; i < size->second; ++i) {
      std::string name = prefix + std::to_string(i);
      const std::vector<double> *c = t.column(name);
      if (!c)
        return {};
      cols.push_back(Column{c, name, position(t, name)});
    }
    if (!noExtraWideColumns(t, v, prefix, size->second, plateSizeName(v->dims.back())))
      return {};
    return cols;
  }

  static size_t position(const CsvTable &t, const std::string &name) {
    for (size_t i = 0; i < t.columns.size(); ++i)
      if (t.columns[i] == name)
        return i + 1;
    return 0;
  }

  std::string where(const CsvTable &t, size_t row, const Column &c) const {
    return t.path + ":" + std::to_string(t.line(row)) + ": column '" + c.name + "' (" + std::to_string(c.position) + ")";
  }

  std::optional<Column> indexColumn(const CsvTable &t, const Value *plate, const Value *v) {
    for (const std::string &n : plateNames(plate, v, observedNames_)) {
      auto it = opts_.map.find(n);
      std::string col = it == opts_.map.end() ? n : it->second;
      if (const std::vector<double> *c = t.column(col))
        return Column{c, col, position(t, col)};
      if (it != opts_.map.end()) {
        errors_.push_back(t.path + ": no column '" + col + "' (from --map " + n + "=" + col + ")");
        return std::nullopt;
      }
    }
    return std::nullopt;
  }

  /// A scalar variable in wide format: its last plate's elements are
  /// columns of one row (y0 y1 ..., or --map y=PREFIX*).
  bool isWide(const CsvTable &t, const Value *v) {
    return v->type.kind != TypeKind::Vector &&
           (valueColumns(t, v).size() > 1 || (!v->dims.empty() && !isDataPlate(v->dims.back()) &&
                                              opts_.map.count(v->name) && opts_.map.at(v->name).back() == '*'));
  }

  /// A file's variables, grouped by their plates, each group bound in turn
  /// from the same rows, which must be the same plates' elements for all: a
  /// wide variable's last plate is its columns (x over (n, D) in x0..x2
  /// beside y over n). The columns no group reads are warned about once.
  void bindFileVariables(const CsvTable &t, const std::vector<const Value *> &vars) {
    std::vector<std::vector<const Value *>> groups;
    for (const Value *v : vars) {
      auto g = std::find_if(groups.begin(), groups.end(), [&](const auto &g) { return g.front()->dims == v->dims; });
      if (g == groups.end())
        groups.push_back({v});
      else
        g->push_back(v);
    }
    auto rowPlates = [&](const Value *v) {
      return std::vector<const Value *>(v->dims.begin(), v->dims.end() - (isWide(t, v) ? 1 : 0));
    };
    for (const auto &g : groups)
      if (rowPlates(g.front()) != rowPlates(groups.front().front())) {
        errors_.push_back(t.path + ": '" + groups.front().front()->name + "' and '" + g.front()->name +
                          "' range over different plates; give them separate files");
        return;
      }
    std::set<std::string> used; // the file's columns the binding reads
    for (const auto &g : groups) {
      bindFile(t, g, used);
      if (!errors_.empty())
        return;
    }
    warnUnusedColumns(m_, t, used, opts_.weight.has_value(), out_.warnings);
  }

  /// Variables over the same plates (and alike wide or not) from one file.
  void bindFile(const CsvTable &t, const std::vector<const Value *> &vars, std::set<std::string> &used) {
    const Value *first = vars.front();
    const bool wide = isWide(t, first);
    std::vector<const Value *> rowPlates(first->dims.begin(), first->dims.end() - (wide ? 1 : 0));
    size_t rows = t.rows();
    size_t depth = rowPlates.size();
    // No rows: the observed variables would be inferred from nothing, and the
    // run would "converge" at once to the prior. (A process of a data-parallel
    // run may hold an empty part of a file.)
    if (rows == 0 && !opts_.partition) {
      errors_.push_back(t.path + ": no data rows (only a header), so nothing to infer '" + first->name +
                        "' from; give a file with at least one row");
      return;
    }
    // The element of each row in each plate.
    std::vector<std::vector<int64_t>> idx(depth, std::vector<int64_t>(rows, 0));
    std::vector<bool> explicitIndex(depth, false);
    std::vector<Column> indexColumns(depth);
    for (size_t j = 0; j < depth; ++j) {
      const Value *p = rowPlates[j];
      std::optional<Column> col = indexColumn(t, p, first);
      if (!errors_.empty())
        return;
      if (!col) {
        if (j + 1 < depth) {
          std::string name = plateNames(p, first, observedNames_).front();
          errors_.push_back(t.path + ": no index column for plate %" + p->name + " of '" + first->name +
                            "': name a column '" + name + "' or give --map " + name + "=COLUMN");
          return;
        }
        continue; // the innermost plate: rows in order within their group
      }
      explicitIndex[j] = true;
      used.insert(col->name);
      indexColumns[j] = *col;
      auto size = ev_.plateSizes.find(p);
      for (size_t r = 0; r < rows; ++r) {
        double x = (*col->values)[r];
        if (std::isnan(x)) {
          errors_.push_back(where(t, r, *col) + ": empty value (a plate index cannot be missing)");
          return;
        }
        if (x < 0 || x != std::floor(x) || x > 9.0e15) {
          errors_.push_back(where(t, r, *col) + ": plate index must be an integer >= 0; got " + valueText(x));
          return;
        }
        if (size != ev_.plateSizes.end() && x >= double(size->second)) {
          errors_.push_back(where(t, r, *col) + ": index " + valueText(x) + " is outside plate %" + p->name +
                            ", which has " + std::to_string(size->second) + " elements");
          return;
        }
        idx[j][r] = static_cast<int64_t>(x);
      }
      // An id is a plate size: check what it would need before allocating
      // (the binder's own tables take four 8-byte words per element, the
      // model's state at least one more).
      if (rows > 0) {
        const size_t top = size_t(std::max_element(idx[j].begin(), idx[j].end()) - idx[j].begin());
        const uint64_t elements = uint64_t(idx[j][top]) + 1;
        const std::string problem = rt::memoryProblem(rt::multiplyBytes(elements, 5 * sizeof(double)));
        if (!problem.empty()) {
          errors_.push_back(where(t, top, *col) + ": index " + valueText((*col->values)[top]) + " makes plate %" +
                            p->name + " " + std::to_string(elements) + " elements long, which " + problem +
                            " (ids must run 0, 1, ... without gaps)");
          return;
        }
      }
    }
    // Order rows by their indices (rows without an index keep file order).
    std::vector<size_t> order(rows);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      for (size_t j = 0; j < depth; ++j)
        if (explicitIndex[j] && idx[j][a] != idx[j][b])
          return idx[j][a] < idx[j][b];
      return false;
    });
    // Sizes of each plate per group of outer indices.
    std::vector<int64_t> groupOf(rows, 0); // flattened index of the row's element at the current level
    int64_t groups = 1;
    for (size_t j = 0; j < depth; ++j) {
      const Value *p = rowPlates[j];
      auto known = ev_.plateSizes.find(p);
      std::vector<int64_t> sizes(groups, 0);
      std::vector<int64_t> elem(rows, 0);
      if (explicitIndex[j]) {
        for (size_t r : order)
          sizes[groupOf[r]] = std::max(sizes[groupOf[r]], idx[j][r] + 1);
        for (size_t r = 0; r < rows; ++r)
          elem[r] = idx[j][r];
      } else {
        for (size_t r : order)
          elem[r] = sizes[groupOf[r]]++;
      }
      if (known != ev_.plateSizes.end()) {
        for (int64_t g = 0; g < groups; ++g) {
          if (!explicitIndex[j] && sizes[g] != known->second && j + 1 == depth) {
            errors_.push_back(t.path + ": " + std::to_string(sizes[g]) + " rows for " +
                              (groups > 1 ? "group " + std::to_string(g) + " of " : std::string()) + "plate %" +
                              p->name + ", which has " + std::to_string(known->second) + " elements");
            return;
          }
          sizes[g] = known->second;
        }
      }
      // Each (group, element) at most once at the innermost level.
      BoundPlate bp;
      bp.sizes = sizes;
      bp.offsets.assign(groups + 1, 0);
      for (int64_t g = 0; g < groups; ++g)
        bp.offsets[g + 1] = bp.offsets[g] + sizes[g];
      if (explicitIndex[j] && j + 1 < depth)
        warnUnmentionedElements(t, p, indexColumns[j], idx[j], groupOf, sizes);
      if (explicitIndex[j])
        bp.column = indexColumns[j].name;
      if (isDataPlate(p)) {
        auto prev = out_.plates.find(p);
        if (prev != out_.plates.end() && prev->second.sizes != bp.sizes) {
          errors_.push_back(t.path + ": the sizes of plate %" + p->name + " differ from those another file gives");
          return;
        }
      }
      if (auto prev = out_.plates.find(p); prev != out_.plates.end() && bp.column.empty())
        bp.column = prev->second.column;
      out_.plates[p] = bp;
      for (size_t r = 0; r < rows; ++r)
        groupOf[r] = bp.offsets[groupOf[r]] + elem[r];
      groups = bp.flattened();
    }
    // Every element of the innermost row plate exactly once: a repeated id
    // is two values for one element, a missing one an element without data.
    std::vector<int64_t> seen(groups, -1);
    for (size_t r : order) {
      if (seen[groupOf[r]] >= 0) {
        errors_.push_back(t.path + ":" + std::to_string(t.line(r)) + ": the same element as line " +
                          std::to_string(t.line(size_t(seen[groupOf[r]]))) + " (each element of '" + first->name +
                          "' takes one row)");
        return;
      }
      seen[groupOf[r]] = static_cast<int64_t>(r);
    }
    for (int64_t e = 0; e < groups; ++e)
      if (seen[e] < 0) {
        const Value *inner = rowPlates.empty() ? nullptr : rowPlates.back();
        const BoundPlate &bp = out_.plates[inner];
        size_t g = std::upper_bound(bp.offsets.begin(), bp.offsets.end(), e) - bp.offsets.begin() - 1;
        errors_.push_back(t.path + ": no row for element " + std::to_string(e - bp.offsets[g]) + (bp.sizes.size() > 1 ? " of group " + std::to_string(g) : std::string()) +
                          " of plate %" + (inner ? inner->name : std::string("?")) +
                          " (the ids of an index column must run 0, 1, ... without gaps)");
        return;
      }
    // Values, checked against each variable's support, in element order.
    const std::vector<double> *weights = opts_.weight ? t.column(*opts_.weight) : nullptr;
    Column weightCol;
    if (weights) {
      weightCol = Column{weights, *opts_.weight, position(t, *opts_.weight)};
      used.insert(weightCol.name);
    }
    for (const Value *v : vars) {
      std::vector<Column> cols = valueColumns(t, v);
      for (const Column &c : cols) {
        used.insert(c.name);
        if (weights && c.name == weightCol.name)
          out_.warnings.push_back(t.path + ": column '" + c.name + "' is both the rows' --weight and the values of '" +
                                  v->name + "': each row counts as many times as its own value");
      }
      BoundVariable bv;
      bv.file = t.path;
      size_t width = cols.size();
      bv.values.assign(size_t(groups) * width, 0.0);
      const TrialsOf trials = trialsOf(t, v);
      for (size_t r = 0; r < rows; ++r) {
        double rowTotal = 0;
        for (size_t c = 0; c < width; ++c) {
          double x = (*cols[c].values)[r];
          if (std::isnan(x)) {
            // A missing observation: marginalised out (weight 0 below), with
            // a placeholder in the support. Known inputs and vectors of
            // counts cannot be missing.
            std::string why = missingProblem(v, width, trials);
            if (!why.empty()) {
              errors_.push_back(where(t, r, cols[c]) + ": missing value (" + why + ")");
              return;
            }
            bv.missing.push_back(groupOf[r] * int64_t(width) + int64_t(c));
            bv.values[size_t(groupOf[r]) * width + c] = support_(v, 0.0).empty() ? 0.0 : 1.0;
            continue;
          }
          if (trials.column && std::isnan((*trials.column)[r])) {
            errors_.push_back(t.path + ":" + std::to_string(t.line(r)) + ": the trials of '" + v->name +
                              "' are missing (" + trials.what + ")");
            return;
          }
          std::string problem = support_(v, x);
          if (problem.empty() && trials.multinomial) {
            if (!(x >= 0 && x == std::floor(x)))
              problem =
                  valueText(x) + " is not a count (Multinomial '" + v->name + "' takes 0, 1, 2, ... per category)";
            rowTotal += x;
          } else if (problem.empty() && (trials.constant || trials.column)) {
            const double n = trials.column ? (*trials.column)[r] : *trials.constant;
            if (x > n)
              problem = valueText(x) + " successes out of " + valueText(n) + " trials (Binomial '" + v->name +
                        "', trials " + trials.what + ")";
          }
          if (!problem.empty()) {
            errors_.push_back(where(t, r, cols[c]) + ": " + problem);
            return;
          }
          bv.values[size_t(groupOf[r]) * width + c] = x;
        }
        if (trials.multinomial && (trials.constant || trials.column)) {
          const double n = trials.column ? (*trials.column)[r] : *trials.constant;
          if (rowTotal != n) {
            errors_.push_back(t.path + ":" + std::to_string(t.line(r)) + ": the counts of Multinomial '" + v->name +
                              "' add up to " + valueText(rowTotal) + ", not to its trials " + valueText(n) + " (" +
                              trials.what + ")");
            return;
          }
        }
      }
      if (weights) {
        bv.weights.assign(size_t(groups), 0.0);
        double total = 0;
        for (size_t r = 0; r < rows; ++r) {
          double w = (*weights)[r];
          if (std::isnan(w)) {
            errors_.push_back(where(t, r, weightCol) + ": empty value (a weight cannot be missing)");
            return;
          }
          if (w < 0) {
            errors_.push_back(where(t, r, weightCol) + ": a weight must be >= 0; got " + valueText(w));
            return;
          }
          // Weights multiply the data's sufficient statistics: past 2^53 their
          // sums are no longer exact in double precision and the ELBO's
          // changes drown in its rounding (docs/reliability.md).
          if (w > SupportCheck::kMaxWeight || total + w > SupportCheck::kMaxWeight) {
            errors_.push_back(where(t, r, weightCol) + ": " +
                              (w > SupportCheck::kMaxWeight
                                   ? "the weight " + valueText(w) + " is"
                                   : "the weights up to this row add up to " + valueText(total + w) + ", which is") +
                              " more than 2^53 = 9007199254740992, past which sums of weights are not exact in double "
                              "precision; scale the weights down");
            return;
          }
          total += w;
          bv.weights[groupOf[r]] = w;
        }
        if (total == 0 && !opts_.partition) {
          errors_.push_back(t.path + ": every weight in column '" + *opts_.weight + "' (" +
                            std::to_string(weightCol.position) + ") is 0, so there is no data to infer '" + v->name +
                            "' from");
          return;
        }
      }
      if (!bv.missing.empty()) {
        std::sort(bv.missing.begin(), bv.missing.end());
        if (bv.missing.size() == bv.values.size() && !opts_.partition && !opts_.allowAllMissing) {
          errors_.push_back(t.path + ": every value of '" + v->name +
                            "' is missing, so there is nothing to infer from (to predict them from a trained model, "
                            "give its posteriors: --given VAR=FILE)");
          return;
        }
      }
      out_.variables[v] = std::move(bv);
    }
  }

  /// A Binomial's trials as this file's rows see them: a constant, or the
  /// column of a known input bound from the same file (another file's rows
  /// are in another order; the run's ELBO would catch those).
  struct TrialsOf {
    std::optional<double> constant;
    const std::vector<double> *column = nullptr;
    std::string what;
    bool multinomial = false; ///< a row of counts adds up to the trials
  };

  /// Why a value of `v` cannot be missing ("" if it can).
  std::string missingProblem(const Value *v, size_t width, const TrialsOf &trials) const {
    const Op *def = elementDefinition(v);
    if (ir::isKnownInput(v) || !def || def->kind != OpKind::Random)
      return "'" + v->name + "' is a known input, which cannot be missing";
    // A scalar per column (a known-size plate spread over columns, --map
    // VAR=p*) may miss any cell; a vector's row is one element, whole.
    if (trials.multinomial || (width != 1 && !isScalarKind(v->type.kind)))
      return "a missing value is supported for a scalar observation, not in a row of '" + v->name + "'";
    return "";
  }
  TrialsOf trialsOf(const CsvTable &t, const Value *v) {
    TrialsOf out;
    const Op *def = elementDefinition(v);
    if (!def || def->kind != OpKind::Random ||
        (def->family != Family::Binomial && def->family != Family::Multinomial) || def->operands.empty())
      return out;
    out.multinomial = def->family == Family::Multinomial;
    const ir::Operand &o = def->operands[0];
    if (o.isLiteral()) {
      out.constant = o.literal();
      out.what = valueText(o.literal());
    } else if (auto c = ev_.valueOf(o.value); c && o.indices.empty()) {
      out.constant = *c;
      out.what = "'" + o.value->name + "' = " + valueText(*c);
    } else if (ir::isKnownInput(o.value) && o.value->dims == v->dims) {
      std::vector<Column> cols = valueColumns(t, o.value);
      if (cols.size() == 1) {
        out.column = cols[0].values;
        out.what = "in column '" + cols[0].name + "'";
      }
    }
    return out;
  }

  /// Elements of an outer row plate that no row's id names (ids 0, 1, 5: 2 to
  /// 4 are empty). They are valid, empty groups whose posteriors stay at the
  /// prior, but more often a gap in the ids than a choice.
  void warnUnmentionedElements(const CsvTable &t, const Value *plate, const Column &col,
                               const std::vector<int64_t> &ids, const std::vector<int64_t> &groupOf,
                               const std::vector<int64_t> &sizes) {
    std::vector<int64_t> offsets(sizes.size() + 1, 0);
    for (size_t g = 0; g < sizes.size(); ++g)
      offsets[g + 1] = offsets[g] + sizes[g];
    std::vector<bool> mentioned(size_t(offsets.back()), false);
    for (size_t r = 0; r < ids.size(); ++r)
      mentioned[size_t(offsets[size_t(groupOf[r])] + ids[r])] = true;
    std::vector<int64_t> missing;
    for (size_t g = 0; g < sizes.size(); ++g)
      for (int64_t e = 0; e < sizes[g]; ++e)
        if (!mentioned[size_t(offsets[g] + e)])
          missing.push_back(e);
    if (missing.empty())
      return;
    const std::string list = firstFew(missing);
    out_.warnings.push_back(t.path + ": " + std::to_string(missing.size()) + " of the " +
                            std::to_string(offsets.back()) + " elements of plate %" + plate->name +
                            " have no rows (id" + (missing.size() > 1 ? "s " : " ") + list + " in column '" +
                            col.name + "'); they are empty and their posteriors stay at the prior");
  }

  /// The advice for the first column named like a latent variable.
  std::string latentColumnHint(const std::vector<std::string> &columns) const {
    for (const std::string &name : columns)
      if (std::string advice = latentColumnAdvice(m_, name); !advice.empty())
        return "; " + advice;
    return "";
  }

  const ir::Module &m_;
  const ir::Evaluation &ev_;
  const BindingOptions &opts_;
  std::vector<std::string> &errors_;
  std::map<size_t, std::vector<const Value *>> byFile_;
  std::set<std::string> observedNames_;
  SupportCheck support_{m_, ev_};
  BoundData out_;
};

} // namespace

bool ByValueName::operator()(const ir::Value *a, const ir::Value *b) const { return a->name < b->name; }

std::optional<BatchPlan> planBatches(const ir::Module &m, const ir::Evaluation &params, const BindingOptions &opts,
                                     int64_t batchElements, std::vector<std::string> &errors) {
  return Binder(m, params, opts, errors).batches(batchElements);
}

std::vector<std::string> discreteObservations(const ir::Module &m) {
  std::vector<std::string> names;
  for (const Value *v : observedVariables(m)) {
    const TypeKind k = v->type.kind;
    if (k != TypeKind::Cat && k != TypeKind::Bool && k != TypeKind::Count)
      return {};
    names.push_back(v->name);
  }
  return names;
}

std::optional<BoundData> bindData(const ir::Module &m, const ir::Evaluation &params, const BindingOptions &opts,
                                  std::vector<std::string> &errors) {
  return Binder(m, params, opts, errors).run();
}

} // namespace ppc::rt
