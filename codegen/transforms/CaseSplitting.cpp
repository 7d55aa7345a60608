//===- codegen/transforms/CaseSplitting.cpp - dense products on threads --===//
//
// A plan transformation after batch-statistics and batch-linear
// (BatchStatistics.cpp, LinearStatistics.cpp). A Gaussian mixture's two
// dense products, the weighted moments of the data per case and the moment
// products of every datum with every case, are one call each at the top of
// a block, so they ran on one thread whatever --threads said: on digits
// (K = 10, D = 64) they are two thirds of an iteration; so are a Bernoulli
// mixture's W^T X and X H^T (ppc_binary_column_means, _linear_forms). Their
// cases are independent, so each becomes a parallel loop of calls on ranges
// of the cases, one range per thread:
//
//   ppc_weights_changed(N*K, w, memo, &changed)               (the memo, checked once)
//   parallel for r < R { ppc_gaussian_weighted_moments_cases(N, K, r*C, r*C + C, ..., &changed) }
//   parallel for r < R { ppc_gaussian_moment_products_cases(N, K, r*C, r*C + C, ...) }
//
// Every case's numbers are computed as by the whole call (the same bits);
// each range reads the data once more, so a plan for one thread, or a small
// product, is left alone.
//
//===----------------------------------------------------------------------===//
#include "codegen/plan/PlanEdits.h"
#include "codegen/transforms/Transforms.h"
#include "runtime/Symbols.h"

#include <algorithm>
#include <map>
#include <string>

namespace ppc::codegen {
namespace {

/// Below this many multiply-adds (N D^2 K; N D K for 0/1 data) a product
/// stays one call: a thread's start costs more than it saves.
constexpr int64_t kMinWork = int64_t(1) << 21;

class CaseSplitting {
public:
  explicit CaseSplitting(Plan &p) : p_(p) {}

  int run() {
    if (p_.threads < 2)
      return 0;
    int changed = 0;
    for (auto &block : p_.blocks) {
      std::vector<Stmt> out;
      for (Stmt &s : block) {
        if (split(s, out)) {
          ++changed;
          continue;
        }
        out.push_back(std::move(s));
      }
      block = std::move(out);
    }
    return changed;
  }

private:
  static bool isCall(const Stmt &s, std::string_view name) {
    return s.kind == Stmt::Kind::Call && s.kernel && s.kernel->name == name && s.result == Stmt::Result::Discard;
  }

  /// A parallel loop of `kernel` on ranges of the K cases: `args` with the
  /// range (r C, r C + C) inserted at `at`.
  Stmt rangesLoop(std::string_view kernel, std::vector<Arg> args, size_t at, int64_t K, std::string note) {
    const int64_t parts = std::min(K, p_.threads), C = (K + parts - 1) / parts;
    Stmt loop = edit::freshLoop(p_, (K + C - 1) / C);
    loop.parallel = true;
    const ExprId first = p_.mul(p_.loopVar(loop.var), p_.intConst(C));
    args.insert(args.begin() + long(at), {edit::intArg(first), edit::intArg(p_.add(first, p_.intConst(C)))});
    loop.body.push_back(edit::kernelCall(kernel, std::move(args), std::move(note) + " (cases by thread)"));
    return loop;
  }

  bool split(const Stmt &s, std::vector<Stmt> &out) {
    // The Gaussian products (N D^2 K multiply-adds) and the 0/1 data's
    // (N D K additions; codegen/transforms/LinearStatistics.cpp).
    const bool moments = isCall(s, "ppc_gaussian_weighted_moments"),
               products = isCall(s, "ppc_gaussian_moment_products"),
               binaryMeans = isCall(s, "ppc_binary_column_means"), binaryForms = isCall(s, "ppc_binary_linear_forms");
    if (!moments && !products && !binaryMeans && !binaryForms)
      return false;
    const auto N = p_.constantOf(s.args[0].expr), K = p_.constantOf(s.args[1].expr),
               D = p_.constantOf(s.args[moments || binaryMeans ? 3 : 2].expr);
    const bool binary = binaryMeans || binaryForms;
    if (!N || !K || !D || *K < 2 || *N * *D * (binary ? 1 : *D) * *K < kMinWork)
      return false;
    if (products || binaryForms) {
      out.push_back(rangesLoop(products ? "ppc_gaussian_moment_products_cases" : "ppc_binary_linear_forms_cases",
                               s.args, 2, *K, s.note));
      return true;
    }
    // (n, k, w, D, x (or the ones), means, totals, memo): the memo is
    // checked once, before the ranges.
    std::vector<Arg> args(s.args.begin(), s.args.end() - 1);
    const Arg &memo = s.args.back();
    if (memo.kind == Arg::Kind::Pointer) {
      auto [it, fresh] = changed_.try_emplace(memo.buffer, -1);
      if (fresh) // written before it is read, every time: a memo
        it->second = edit::addBuffer(p_, p_.buffers[size_t(memo.buffer)].name + ".changed", 1, true);
      const Arg flag = edit::pointerArg(it->second, p_.intConst(0));
      out.push_back(edit::kernelCall("ppc_weights_changed", {edit::intArg(p_.intConst(*N * *K)), s.args[2], memo, flag},
                                     "have the weights changed since the memo?"));
      args.push_back(flag);
    } else {
      args.push_back(memo); // null: always computed
    }
    out.push_back(rangesLoop(moments ? "ppc_gaussian_weighted_moments_cases" : "ppc_binary_column_means_cases",
                             std::move(args), 2, *K, s.note));
    return true;
  }

  Plan &p_;
  std::map<int32_t, int32_t> changed_; ///< memo -> its flag
};

} // namespace

int splitCasesOverThreads(Plan &p) { return CaseSplitting(p).run(); }

} // namespace ppc::codegen
