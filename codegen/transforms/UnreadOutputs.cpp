//===- codegen/transforms/UnreadOutputs.cpp - outputs nothing reads are not computed ---===//
//
// A plan transformation (dead-store elimination). Some kernels compute an
// optional output only when given a row for it: the random initialization
// of a categorical writes q and, for a softmax-form update that reads them,
// the natural parameters log q (one logarithm per case: LDA's 302,031
// tokens x 20 topics). When the row belongs to a scratch posterior (rows of
// one element of the nested plate, never an output of the run) and no
// statement of any block reads that buffer, the kernel gets null instead.
//
//===----------------------------------------------------------------------===//
#include "codegen/transforms/Transforms.h"
#include "runtime/Symbols.h"

#include <set>
#include <string_view>

namespace ppc::codegen {
namespace {

/// The argument of a kernel that may be null (the kernel then skips it).
int optionalOutput(std::string_view kernel) {
  if (kernel == "ppc_random_simplex")
    return 4;
  return -1;
}

struct Uses {
  const Plan &p;
  std::set<int32_t> read; ///< buffers named anywhere but in an optional output

  void expr(ExprId e) {
    if (e == kNoExpr)
      return;
    const Expr &x = p.exprs[size_t(e)];
    if (x.kind == Expr::Kind::LoadDouble || x.kind == Expr::Kind::LoadInt)
      read.insert(x.buffer);
    expr(x.a);
    expr(x.b);
  }
  void stmt(const Stmt &s) {
    if (s.buffer >= 0)
      read.insert(s.buffer);
    expr(s.index);
    expr(s.bound);
    expr(s.scale);
    int optional = s.kernel ? optionalOutput(s.kernel->name) : -1;
    for (size_t i = 0; i < s.args.size(); ++i) {
      expr(s.args[i].expr);
      if (s.args[i].buffer >= 0 && int(i) != optional)
        read.insert(s.args[i].buffer);
    }
    for (const Stmt &c : s.body)
      stmt(c);
  }
};

void drop(std::vector<Stmt> &body, const std::set<int32_t> &unread, int &dropped) {
  for (Stmt &s : body) {
    drop(s.body, unread, dropped);
    int optional = s.kernel ? optionalOutput(s.kernel->name) : -1;
    if (optional < 0 || size_t(optional) >= s.args.size() || !unread.count(s.args[size_t(optional)].buffer))
      continue;
    s.args[size_t(optional)] = Arg{Arg::Kind::Null, kNoExpr, -1};
    ++dropped;
  }
}

} // namespace

int dropUnreadOutputs(Plan &p) {
  Uses uses{p, {}};
  for (const auto &block : p.blocks)
    for (const Stmt &s : block)
      uses.stmt(s);
  std::set<int32_t> unread;
  for (const Posterior &post : p.posteriors)
    if (post.scratch && !uses.read.count(post.eta))
      unread.insert(post.eta);
  int dropped = 0;
  for (auto &block : p.blocks)
    drop(block, unread, dropped);
  return dropped;
}

} // namespace ppc::codegen
