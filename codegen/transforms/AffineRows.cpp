//===- codegen/transforms/AffineRows.cpp - messages affine in a datum ----===//
//
// A plan transformation after batch-dot (BatchDot.cpp). The message of an
// inner product with known rows to its vector operand is
//
//   sum_i (e0_i x_i, e1_i x_i x_i^T),
//
// one pass over X an iteration (ppc_dot_to_operand_rows). In a regression
// the rows e_i are affine in one data column with the same coefficients for
// every row: a Gaussian child y_i with a global precision tau and intercept
// b sends e_i = (E tau (y_i - E b), -E tau / 2). Then the sum is
// a0 X^T 1 + b0 X^T y and a1 X^T X (b1 = 0), from tables of the data made
// once: its sufficient statistics, as the mixtures' (BatchStatistics.cpp).
//
// The rows stay as they are (other statements read them); each buffer of
// such rows also gets two one-row shadows, its row at y = 0 and at y = 1,
// kept by running every statement that writes the rows again on the
// shadows after its loop (the datum replaced by 0, then by 1). Applied only
// where every statement that writes such rows is one of kAffine (affine in
// its row inputs and the datum, the rest the same for every row) directly in
// a loop over all rows, in a plan that is not partitioned (its sums would be
// per process). Same sums in another order: results agree to rounding.
//
//===----------------------------------------------------------------------===//
#include "codegen/plan/PlanEdits.h"
#include "codegen/transforms/Transforms.h"
#include "runtime/Symbols.h"

#include <array>
#include <map>
#include <set>
#include <string>
#include <string_view>

namespace ppc::codegen {
namespace {

/// A kernel affine in its row inputs and the datum, one letter per argument:
///   S  a row input (rows affine in the datum, or one row for every element)
///   x  the datum of the element (a data column's entry)
///   c  the same for every row, or null
///   o  the output row
///   0  null; 1, 2: that integer
struct AffineKernel {
  std::string_view kernel, args;
};

constexpr AffineKernel kAffine[] = {
    {"ppc_copy", "2So"},
    {"ppc_axpy", "2cSo"},
    {"ppc_sum_to_left", "Scco"},
    {"ppc_sum_to_right", "Scco"},
    {"ppc_difference_to_left", "Scco"},
    {"ppc_difference_to_right", "Scco"},
    // (w t0 x, -w t0 / 2) (runtime/factors/Gaussian.cpp)
    {"ppc_gaussian_mean_avglog_obs_n", "1x0cco"},
};

const AffineKernel *affineOf(const Stmt &s) {
  if (s.kind != Stmt::Kind::Call || !s.kernel || s.result != Stmt::Result::Discard)
    return nullptr;
  for (const AffineKernel &k : kAffine)
    if (k.kernel == s.kernel->name && k.args.size() == s.args.size())
      return &k;
  return nullptr;
}

constexpr std::string_view kConsumer = "ppc_dot_to_operand_rows";

class AffineRows {
public:
  explicit AffineRows(Plan &p) : p_(p) {}

  int run() {
    if (p_.partitionedPlate)
      return 0;
    int changed = 0;
    // One consumer's rows at a time (a model with two inner products has two).
    std::set<int32_t> etas;
    for (int b = 0; b < Plan::NumBlocks; ++b)
      for (const Stmt &top : p_.blocks[b])
        if (const Stmt *c = consumerIn(top))
          etas.insert(c->args[2].buffer);
    for (int32_t eta : etas) {
      slice_.clear();
      data_ = -1;
      if (!collect(eta) || !validate(eta))
        continue;
      apply(eta);
      ++changed;
    }
    return changed;
  }

private:
  bool isConsumer(const Stmt &s) const {
    return s.kind == Stmt::Kind::Call && s.kernel && s.kernel->name == kConsumer &&
           s.result == Stmt::Result::Discard;
  }
  const Stmt *consumerIn(const Stmt &top) const {
    if (isConsumer(top))
      return &top;
    if (top.kind == Stmt::Kind::Loop && !top.distributed && top.body.size() == 1 && isConsumer(top.body[0]))
      return &top.body[0];
    return nullptr;
  }

  bool atRow(const Arg &a, int32_t var, int64_t width) const {
    return a.kind == Arg::Kind::Pointer && edit::isElementRow(p_, a.expr, var, width);
  }

  bool invariant(const Arg &a, int32_t var) const {
    return a.kind == Arg::Kind::Null || a.expr == kNoExpr || !p_.usesVar(a.expr, var);
  }

  bool inSlice(const Arg &a) const { return a.kind == Arg::Kind::Pointer && slice_.count(a.buffer); }

  /// The output argument of an affine kernel.
  static size_t outputOf(const AffineKernel &k) { return k.args.find('o'); }

  /// The rows the consumer reads, and the rows their writers read, back to the data.
  bool collect(int32_t eta) {
    slice_.insert(eta);
    for (bool grew = true; grew;) {
      grew = false;
      for (int b = 0; b < Plan::NumBlocks; ++b)
        for (const Stmt &top : p_.blocks[b])
          for (const Stmt &c : top.body) {
            const AffineKernel *k = affineOf(c);
            if (!k || !inSlice(c.args[outputOf(*k)]))
              continue;
            for (size_t a = 0; a < k->args.size(); ++a)
              if (k->args[a] == 'S' && c.args[a].kind == Arg::Kind::Pointer && !invariant(c.args[a], top.var))
                grew |= slice_.insert(c.args[a].buffer).second;
          }
    }
    return true;
  }

  bool mentionsSlice(const Stmt &s) const {
    for (int32_t b : slice_)
      if (p_.mentions(s, b))
        return true;
    return false;
  }

  /// Every statement that names the rows: the consumer, or in a loop over
  /// all rows a zero of a row or an affine kernel (writing a row, or only
  /// reading rows).
  bool validate(int32_t eta) {
    const int64_t N = p_.buffers[size_t(eta)].size / 2;
    for (int32_t b : slice_)
      if (p_.buffers[size_t(b)].size != 2 * N || p_.isBoundData(b))
        return false;
    for (int b = 0; b < Plan::NumBlocks; ++b)
      for (const Stmt &top : p_.blocks[b]) {
        if (!mentionsSlice(top))
          continue;
        if (const Stmt *c = consumerIn(top)) {
          if (c->args[2].buffer != eta || !consumerArgs(*c, top))
            return false;
          continue;
        }
        if (top.kind != Stmt::Kind::Loop || top.distributed || top.batch || p_.constantOf(top.bound) != N)
          return false;
        for (int32_t r : top.privates)
          if (slice_.count(r))
            return false;
        for (int32_t r : top.reductions)
          if (slice_.count(r))
            return false;
        for (const Stmt &c : top.body) {
          if (!mentionsSlice(c))
            continue;
          if (c.kind == Stmt::Kind::Zero) {
            if (c.count != 2 || !edit::isElementRow(p_, c.index, top.var, 2))
              return false;
            continue;
          }
          const AffineKernel *k = affineOf(c);
          if (!k)
            return false;
          const bool writes = inSlice(c.args[outputOf(*k)]);
          for (size_t a = 0; a < k->args.size(); ++a) {
            const Arg &arg = c.args[a];
            const char letter = k->args[a];
            if (!writes) { // a reader: only its row inputs may be rows
              if (inSlice(arg) && (letter != 'S' || !atRow(arg, top.var, 2)))
                return false;
              continue;
            }
            switch (letter) {
            case 'S':
            case 'o':
              if (inSlice(arg) ? !atRow(arg, top.var, 2) : !invariant(arg, top.var))
                return false;
              break;
            case 'x':
              if (arg.kind != Arg::Kind::Pointer || !p_.isBoundData(arg.buffer) || !atRow(arg, top.var, 1) ||
                  p_.buffers[size_t(arg.buffer)].size != N || (data_ >= 0 && data_ != arg.buffer))
                return false;
              data_ = arg.buffer;
              break;
            case 'c':
              if (inSlice(arg) || !invariant(arg, top.var))
                return false;
              break;
            case '0':
              if (arg.kind != Arg::Kind::Null)
                return false;
              break;
            default:
              if (arg.kind != Arg::Kind::Int || p_.constantOf(arg.expr) != int64_t(letter - '0'))
                return false;
            }
          }
        }
      }
    return data_ >= 0;
  }

  bool consumerArgs(const Stmt &c, const Stmt &top) {
    const auto D = p_.constantOf(c.args[1].expr);
    if (!D || c.args[4].kind != Arg::Kind::Double || c.args[6].kind != Arg::Kind::Pointer)
      return false;
    const int32_t var = &c == &top ? -1 : top.var;
    if (var >= 0 && (p_.usesVar(c.args[4].expr, var) || p_.usesVar(c.args[6].expr, var)))
      return false;
    Consumer &k = consumers_[&c];
    k.D = *D;
    k.X = c.args[3].buffer;
    k.weight = c.args[4];
    k.dst = c.args[6];
    return p_.buffers[size_t(k.X)].size == p_.buffers[size_t(c.args[2].buffer)].size / 2 * *D;
  }

  int32_t addBuffer(std::string name, int64_t size, bool memo = false, std::vector<double> values = {}) {
    return edit::addBuffer(p_, std::move(name), size, memo, std::move(values));
  }
  Arg pointer(int32_t buffer) { return edit::pointerArg(buffer, p_.intConst(0)); }

  /// A statement of a loop writing rows, on the shadows (`at`: 0 or 1, the datum's value).
  Stmt onShadow(const Stmt &c, int at) {
    Stmt s = c;
    if (c.kind == Stmt::Kind::Zero) {
      s.buffer = shadows_[c.buffer][size_t(at)];
      s.index = p_.intConst(0);
      return s;
    }
    const AffineKernel &k = *affineOf(c);
    for (size_t a = 0; a < k.args.size(); ++a) {
      if (inSlice(c.args[a]))
        s.args[a] = pointer(shadows_[c.args[a].buffer][size_t(at)]);
      else if (k.args[a] == 'x')
        s.args[a] = pointer(datum_[size_t(at)]);
    }
    s.note = (c.note.empty() ? "" : c.note + " ") + "(its rows at y = " + std::to_string(at) + ")";
    return s;
  }

  void apply(int32_t eta) {
    const std::string column = p_.buffers[size_t(data_)].name;
    for (int32_t b : slice_)
      for (int at : {0, 1})
        shadows_[b][size_t(at)] =
            addBuffer(p_.buffers[size_t(b)].name + ".at" + std::to_string(at), 2);
    datum_[0] = addBuffer("datum.0", 1, false, {0.0});
    datum_[1] = addBuffer("datum.1", 1, false, {1.0});
    int32_t sums = -1;
    for (int b = 0; b < Plan::NumBlocks; ++b) {
      std::vector<Stmt> out;
      auto &block = p_.blocks[b];
      for (size_t t = 0; t < block.size(); ++t) {
        Stmt &top = block[t];
        if (const Stmt *c = consumerIn(top)) {
          const Consumer k = consumers_[c];
          const Stmt *next = t + 1 < block.size() ? consumerIn(block[t + 1]) : nullptr;
          if (next && next->args[2].buffer == eta)
            continue; // a group of calls on blocks of rows: one call for all, at its end
          if (sums < 0)
            sums = addBuffer("sums." + p_.buffers[size_t(k.X)].name + "." + column, 1 + 2 * k.D,
                               true);
          out.push_back(edit::kernelCall(
              "ppc_dot_to_operand_affine",
              {edit::intArg(p_.intConst(p_.buffers[size_t(eta)].size / 2)), edit::intArg(p_.intConst(k.D)),
               pointer(shadows_[eta][0]), pointer(shadows_[eta][1]), pointer(eta), pointer(k.X), pointer(data_),
               k.weight, pointer(sums), pointer(edit::dataGram(p_, k.X, k.D)), k.dst},
              c->note.substr(0, c->note.find(" (all rows)")) + " (from X^T 1, X^T " + column + " and X^T X)"));
          continue;
        }
        std::vector<Stmt> after;
        if (top.kind == Stmt::Kind::Loop && mentionsSlice(top))
          for (const Stmt &c : top.body) {
            const AffineKernel *k = c.kind == Stmt::Kind::Zero ? nullptr : affineOf(c);
            const bool writes = c.kind == Stmt::Kind::Zero ? slice_.count(c.buffer) > 0
                                                           : k && inSlice(c.args[outputOf(*k)]);
            if (writes)
              for (int at : {0, 1})
                after.push_back(onShadow(c, at));
          }
        out.push_back(std::move(top));
        for (Stmt &a : after)
          out.push_back(std::move(a));
      }
      block = std::move(out);
    }
  }

  struct Consumer {
    int64_t D = 0;
    int32_t X = -1;
    Arg weight, dst;
  };

  Plan &p_;
  std::set<int32_t> slice_;
  int32_t data_ = -1;
  std::map<const Stmt *, Consumer> consumers_;
  std::map<int32_t, std::array<int32_t, 2>> shadows_;
  std::array<int32_t, 2> datum_{-1, -1};
};

} // namespace

int sumAffineMessageRows(Plan &p) { return AffineRows(p).run(); }

} // namespace ppc::codegen
