//===- codegen/transforms/EntropySharing.cpp - share-entropy -------------===//
//
// A plan transformation. A posterior's statistics (in the iteration block)
// and its entropy (in the ELBO block) compute the same thing twice:
//   * a Dirichlet's statistics are digammas of its parameters and its
//     entropy needs their lgammas: two passes over the rows, each shifting
//     every entry up by ten and taking logarithms of the same numbers (LDA's
//     topics at K = 100 on AP are 1M entries, and the two kernels were 20% of
//     a sweep's samples);
//   * an MvGaussian's or a Wishart's statistics invert a D x D matrix by its
//     Cholesky factor, and its entropy needs that matrix's log-determinant,
//     from a second factorization (D = 64 mixtures: 5% of an iteration).
//
// The statistics call becomes the family's variant that also stores, in a
// buffer of one entry per row, what the entropy needs (the Dirichlet's log
// normalizer, from the digammas' shifts and logarithms; the log-determinant),
// and the entropy call becomes the variant that reads it: the ELBO
// block always runs right after the iteration block (codegen/exec/Executor.cpp,
// Inference::iterate), so the stored sums are those of the parameters the
// entropy reads when
//   * the entropy call is the ELBO block's only use of the parameters, at
//     top level or directly in a top-level loop over rows;
//   * the iteration block's last statistics of the same rows (the same row
//     width, rows per call and offsets for every iteration), at top level or
//     directly in a top-level loop without exits, come after its last other
//     use of the parameters (in a parallel loop, the element's own update
//     before the call counts as before: LDA's topics at small K, whose
//     counts are added in the loop itself);
//   * neither loop has private rows, sums, batches or processes to sum over.
// The statistics are the same bit for bit; the entropy adds the same terms in
// another order (InferenceTest: equal traces to 1e-13).
//
//===----------------------------------------------------------------------===//
#include "codegen/transforms/Transforms.h"
#include "runtime/Catalogue.h"
#include "runtime/Symbols.h"

#include <optional>

namespace ppc::codegen {
namespace {

/// The families whose statistics and entropy share work: the kernels, and
/// the variants that store and read the shared values.
struct SharedKernels {
  Family family;
  const char *stats, *statsShared, *entropy, *entropyShared;
  const char *buffer;                      ///< the shared values' buffer: <posterior>.<buffer>
  const char *statsNote, *entropyNote;
  /// The shared values cost the statistics work of their own (a Dirichlet's
  /// log normalizers: an lgamma per entry), which iterations that do not
  /// evaluate the ELBO would do for nothing: shared only where every
  /// iteration evaluates it (--elbo-every 1). A log-determinant comes from
  /// the Cholesky factor the statistics compute anyway.
  bool ownCost;
};
constexpr SharedKernels kShared[] = {
    {Family::Dirichlet, "ppc_dirichlet_stats_n", "ppc_dirichlet_stats_lognorm_n", "ppc_dirichlet_entropy_n",
     "ppc_dirichlet_entropy_lognorm_n", "lognorm", " (and its rows' log normalizers)",
     " (from the log normalizers of its statistics)", true},
    {Family::MvGaussian, "ppc_mvgaussian_stats_n", "ppc_mvgaussian_stats_logdet_n", "ppc_mvgaussian_entropy_n",
     "ppc_mvgaussian_entropy_logdet_n", "logdet", " (and its rows' log-determinants)",
     " (from the log-determinants of its statistics)", false},
    {Family::Wishart, "ppc_wishart_stats_n", "ppc_wishart_stats_logdet_n", "ppc_wishart_entropy_n",
     "ppc_wishart_entropy_logdet_n", "logdet", " (and its rows' log-determinants)",
     " (from the log-determinants of its statistics)", false},
};

/// A call of `kernel(n, K, &eta[..][, &stats[..]])` on whole rows (each
/// `width(K)` doubles), at top level or directly in a top-level loop: the
/// rows it covers.
struct RowSite {
  Stmt *call = nullptr;
  const Stmt *loop = nullptr; ///< null: a top-level call
  int32_t eta = -1, stats = -1; ///< stats: -1 where the call takes none
  int64_t n = 0, K = 0, width = 0, iterations = 1, first = 0; ///< rows first + v * n .. + n for v < iterations
};

std::optional<RowSite> rowSite(Plan &p, Stmt &call, const Stmt *loop, const char *kernel, Family family) {
  if (call.kind != Stmt::Kind::Call || call.kernel->name != kernel || call.args.size() < 3 ||
      call.args.size() > 4 || call.args[2].kind != Arg::Kind::Pointer ||
      (call.args.size() == 4 && call.args[3].kind != Arg::Kind::Pointer))
    return std::nullopt;
  RowSite site;
  site.call = &call;
  site.loop = loop;
  site.eta = call.args[2].buffer;
  site.stats = call.args.size() == 4 ? call.args[3].buffer : -1;
  auto n = p.constantOf(call.args[0].expr), K = p.constantOf(call.args[1].expr);
  if (!n || !K || *n < 1 || *K < 1)
    return std::nullopt;
  site.n = *n;
  site.K = *K;
  site.width = factorEntry(family).width(*K);
  if (p.buffers[size_t(site.eta)].size % site.width != 0)
    return std::nullopt;
  if (loop) {
    auto bound = p.constantOf(loop->bound);
    if (!bound || *bound < 1 || loop->batch || !loop->privates.empty() || !loop->reductions.empty() ||
        loop->distributed)
      return std::nullopt;
    for (const Stmt &s : loop->body)
      if (s.kind == Stmt::Kind::ExitBelow)
        return std::nullopt;
    site.iterations = *bound;
  }
  // The same offset into both buffers, whole rows, n rows further each iteration.
  const int32_t var = loop ? loop->var : -1;
  for (int64_t v = 0; v < site.iterations; ++v) {
    auto eta = p.evaluate(call.args[2].expr, var, v);
    auto stats = site.stats >= 0 ? p.evaluate(call.args[3].expr, var, v) : eta;
    if (!eta || !stats || *eta != *stats || *eta % site.width != 0)
      return std::nullopt;
    if (v == 0)
      site.first = *eta / site.width;
    else if (*eta / site.width != site.first + v * site.n)
      return std::nullopt;
  }
  if ((site.first + site.iterations * site.n) * site.width > p.buffers[size_t(site.eta)].size)
    return std::nullopt;
  return site;
}

/// The same rows of the same posterior (an entropy that takes no statistics
/// matches any statistics buffer).
bool sameRows(const RowSite &a, const RowSite &b) {
  return a.eta == b.eta && (a.stats == b.stats || a.stats < 0 || b.stats < 0) && a.n == b.n && a.K == b.K &&
         a.iterations == b.iterations && a.first == b.first;
}

/// The sites of `kernel` in a block (top-level calls and calls directly in
/// top-level loops), with the index of their top-level statement.
std::vector<std::pair<size_t, RowSite>> sitesIn(Plan &p, std::vector<Stmt> &block, const char *kernel,
                                                Family family) {
  std::vector<std::pair<size_t, RowSite>> sites;
  for (size_t i = 0; i < block.size(); ++i) {
    Stmt &top = block[i];
    if (top.kind == Stmt::Kind::Call) {
      if (auto s = rowSite(p, top, nullptr, kernel, family))
        sites.emplace_back(i, *s);
    } else if (top.kind == Stmt::Kind::Loop) {
      for (Stmt &c : top.body)
        if (auto s = rowSite(p, c, &top, kernel, family))
          sites.emplace_back(i, *s);
    }
  }
  return sites;
}

class Sharing {
public:
  explicit Sharing(Plan &p) : p_(p) {}

  int run() {
    int changed = 0;
    for (const SharedKernels &k : kShared)
      changed += run(k);
    return changed;
  }

private:
  int run(const SharedKernels &k) {
    if (k.ownCost && !p_.elboEveryIteration)
      return 0;
    int changed = 0;
    std::vector<Stmt> &elbo = p_.blocks[Plan::Elbo], &iteration = p_.blocks[Plan::Iteration];
    for (auto &elboSite : sitesIn(p_, elbo, k.entropy, k.family)) {
      RowSite &entropy = elboSite.second;
      // The ELBO block reads the parameters in this call only.
      bool alone = true;
      for (const Stmt &s : elbo)
        alone = alone && !p_.mentions(s, entropy.eta, entropy.call);
      if (!alone)
        continue;
      // The iteration block's last statistics of the same rows, after which
      // nothing uses the parameters.
      std::vector<std::pair<size_t, RowSite>> stats;
      for (auto &site : sitesIn(p_, iteration, k.stats, k.family))
        if (sameRows(site.second, entropy))
          stats.push_back(site);
      if (stats.empty() || !lastUse(iteration, stats.back().first, stats.back().second))
        continue;
      const int32_t shared = sharedBuffer(entropy, k.buffer);
      rewrite(stats.back().second, k.statsShared, shared, k.statsNote);
      rewrite(entropy, k.entropyShared, shared, k.entropyNote);
      ++changed;
    }
    return changed;
  }

  /// Nothing after the statistics call `site` (in top-level statement
  /// `index`) uses its parameters. Before it in a parallel loop's body, the
  /// element's own statements may (its rows' update): iterations of a
  /// parallel loop use no row that another iteration's statistics read.
  bool lastUse(const std::vector<Stmt> &block, size_t index, const RowSite &site) const {
    for (size_t i = index + 1; i < block.size(); ++i)
      if (p_.mentions(block[i], site.eta))
        return false;
    if (!site.loop)
      return true;
    if (p_.loads(site.loop->bound, site.eta))
      return false;
    bool after = false;
    for (const Stmt &s : site.loop->body) {
      if (&s == site.call) {
        after = true;
        continue;
      }
      if (p_.mentions(s, site.eta) && (after || !site.loop->parallel))
        return false;
    }
    return true;
  }

  /// One entry per row of the posterior's parameters.
  int32_t sharedBuffer(const RowSite &site, const char *suffix) {
    Buffer b;
    std::string name = p_.buffers[size_t(site.eta)].name;
    if (name.size() > 4 && name.compare(name.size() - 4, 4, ".eta") == 0)
      name.resize(name.size() - 4);
    b.name = name + "." + suffix;
    b.size = p_.buffers[size_t(site.eta)].size / site.width;
    p_.buffers.push_back(std::move(b));
    return int32_t(p_.buffers.size() - 1);
  }

  void rewrite(RowSite &site, const char *kernel, int32_t shared, const char *note) {
    Stmt &call = *site.call;
    call.kernel = rt::findRuntimeKernel(kernel);
    Arg row;
    row.kind = Arg::Kind::Pointer;
    row.buffer = shared;
    row.expr = site.loop ? p_.add(p_.mul(p_.loopVar(site.loop->var), p_.intConst(site.n)), p_.intConst(site.first))
                         : p_.intConst(site.first);
    call.args.push_back(row);
    call.note += call.note.empty() ? note + 1 : note; // without the leading space
  }

  Plan &p_;
};

} // namespace

int shareEntropies(Plan &p) { return Sharing(p).run(); }

} // namespace ppc::codegen
