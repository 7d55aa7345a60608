//===- codegen/plan/PlanVerifier.cpp - the plan's invariants --------------===//
//
// What every plan must satisfy, whatever lowered or transformed it, so that
// both back ends can run it: buffers and expressions exist and have the
// right types, every loop variable is read only inside its loop, every call
// passes what its kernel's C signature takes, and the per-thread lists of a
// parallel loop name buffers. `--verify-each` checks it after the lowering
// and after every transformation.
//
//===----------------------------------------------------------------------===//
#include "codegen/plan/Plan.h"

#include "ir/IR.h"
#include "runtime/Symbols.h"

#include <set>

namespace ppc::codegen {
namespace {

class PlanVerifier {
public:
  explicit PlanVerifier(const Plan &p) : p_(p) {}

  bool run(std::string &error) {
    for (size_t b = 0; b < p_.buffers.size(); ++b) {
      const Buffer &buf = p_.buffers[b];
      const size_t filled = buf.isInt ? buf.ints.size() : buf.doubles.size();
      const size_t other = buf.isInt ? buf.doubles.size() : buf.ints.size();
      if (buf.size < 0 || other != 0 || (filled != 0 && filled != size_t(buf.size)))
        return fail(error, "buffer " + buf.name + " has " + std::to_string(filled) + " initial values for " +
                               std::to_string(buf.size) + " entries");
    }
    for (const Posterior &post : p_.posteriors)
      if (!isBuffer(post.eta, false) || !isBuffer(post.stats, false))
        return fail(error, "the posterior of %" + (post.variable ? post.variable->name : std::string("?")) +
                               " has no buffers");
    for (int b = 0; b < Plan::NumBlocks; ++b) {
      block_ = Plan::kBlockNames[b];
      inScope_.clear();
      loopDepth_ = 0;
      if (!body(p_.blocks[b]))
        return fail(error, why_);
    }
    return true;
  }

private:
  bool fail(std::string &error, const std::string &why) {
    error = why;
    return false;
  }
  bool bad(const std::string &why) {
    why_ = std::string(block_) + " block: " + why;
    return false;
  }
  bool isBuffer(int32_t b, std::optional<bool> isInt) const {
    return b >= 0 && size_t(b) < p_.buffers.size() && (!isInt || p_.buffers[size_t(b)].isInt == *isInt);
  }
  std::string name(int32_t b) const {
    return b >= 0 && size_t(b) < p_.buffers.size() ? p_.buffers[size_t(b)].name : "#" + std::to_string(b);
  }

  /// e is a valid expression of the wanted type whose loop variables are in scope.
  bool expr(ExprId e, bool wantDouble, const std::string &where) {
    if (e == kNoExpr || e < 0 || size_t(e) >= p_.exprs.size())
      return bad(where + ": no expression #" + std::to_string(e));
    const Expr &x = p_.exprs[size_t(e)];
    if (x.isDouble() != wantDouble)
      return bad(where + (wantDouble ? ": an integer expression where a floating-point one is needed"
                                     : ": a floating-point expression where an integer one is needed"));
    switch (x.kind) {
    case Expr::Kind::IntConst:
    case Expr::Kind::DoubleConst: return true;
    case Expr::Kind::LoopVar:
      if (!inScope_.count(x.var))
        return bad(where + ": i" + std::to_string(x.var) + " is read outside its loop");
      return true;
    case Expr::Kind::AddInt:
    case Expr::Kind::MulInt: return expr(x.a, false, where) && expr(x.b, false, where);
    case Expr::Kind::AddDouble:
    case Expr::Kind::MulDouble:
    case Expr::Kind::SubDouble: return expr(x.a, true, where) && expr(x.b, true, where);
    case Expr::Kind::IntToDouble: return expr(x.a, false, where);
    case Expr::Kind::LoadInt:
    case Expr::Kind::LoadDouble:
      if (!isBuffer(x.buffer, x.kind == Expr::Kind::LoadInt))
        return bad(where + ": a load from " + name(x.buffer) + ", which is not a buffer of that type");
      return expr(x.a, false, where);
    }
    return bad(where + ": an expression of unknown kind");
  }

  bool optionalDouble(ExprId e, const std::string &where) { return e == kNoExpr || expr(e, true, where); }

  bool call(const Stmt &s) {
    if (!s.kernel)
      return bad("a call without a kernel");
    const std::string where = "call of " + std::string(s.kernel->name);
    if (s.elboOnly && s.result != Stmt::Result::Elbo)
      return bad(where + ": marked an ELBO term only, but its result does not go to the ELBO");
    const std::string_view sig = s.kernel->signature;
    if (sig.size() != s.args.size() + 1)
      return bad(where + ": " + std::to_string(s.args.size()) + " arguments for a kernel of " +
                 std::to_string(sig.size() - 1));
    for (size_t i = 0; i < s.args.size(); ++i) {
      const Arg &a = s.args[i];
      const char want = sig[i + 1];
      const std::string at = where + ", argument " + std::to_string(i + 1);
      switch (a.kind) {
      case Arg::Kind::Int:
        if (want != 'l')
          return bad(at + ": an integer where the kernel takes '" + std::string(1, want) + "'");
        if (!expr(a.expr, false, at))
          return false;
        break;
      case Arg::Kind::Double:
        if (want != 'd')
          return bad(at + ": a double where the kernel takes '" + std::string(1, want) + "'");
        if (!expr(a.expr, true, at))
          return false;
        break;
      case Arg::Kind::Null:
        if (want != 'p')
          return bad(at + ": a null pointer where the kernel takes '" + std::string(1, want) + "'");
        break;
      case Arg::Kind::Pointer:
        if (want != 'p' || !isBuffer(a.buffer, std::nullopt))
          return bad(at + ": a pointer into " + name(a.buffer) + " where the kernel takes '" +
                     std::string(1, want) + "'");
        if (!expr(a.expr, false, at))
          return false;
        break;
      case Arg::Kind::TempPointer:
        if (want != 'p')
          return bad(at + ": a temporary's address where the kernel takes '" + std::string(1, want) + "'");
        if (!expr(a.expr, true, at))
          return false;
        break;
      }
    }
    if (s.result != Stmt::Result::Discard && sig[0] != 'd')
      return bad(where + ": its result is used but the kernel returns '" + std::string(1, sig[0]) + "'");
    if (s.result == Stmt::Result::Slot || s.result == Stmt::Result::SlotProduct) {
      if (!isBuffer(s.buffer, false))
        return bad(where + ": its result goes to " + name(s.buffer) + ", not a floating-point buffer");
      if (!expr(s.index, false, where + " (result slot)"))
        return false;
    }
    return optionalDouble(s.scale, where + " (scale)");
  }

  bool loop(const Stmt &s) {
    const std::string where = "loop i" + std::to_string(s.var);
    if (!expr(s.bound, false, where + " (bound)"))
      return false;
    if (inScope_.count(s.var))
      return bad(where + " is nested in a loop of the same variable");
    if ((!s.privates.empty() || !s.reductions.empty() || s.distributed || s.costs >= 0) && !s.parallel)
      return bad(where + " has per-thread buffers, costs or processes but is not parallel");
    for (const auto *list : {&s.privates, &s.reductions})
      for (int32_t b : *list)
        if (!isBuffer(b, false))
          return bad(where + ": its per-thread list names " + name(b) + ", not a floating-point buffer");
    if (s.costs >= 0 && !isBuffer(s.costs, true))
      return bad(where + ": its costs are in " + name(s.costs) + ", not an integer buffer");
    if (s.batch < 0 || (s.batch > 0) != (s.batchVar >= 0))
      return bad(where + ": a batch size without its variable, or the reverse");
    inScope_.insert(s.var);
    if (s.batchVar >= 0)
      inScope_.insert(s.batchVar);
    ++loopDepth_;
    const bool ok = body(s.body);
    --loopDepth_;
    inScope_.erase(s.var);
    if (s.batchVar >= 0)
      inScope_.erase(s.batchVar);
    return ok;
  }

  bool body(const std::vector<Stmt> &stmts) {
    for (const Stmt &s : stmts) {
      if (s.elboOnly && s.kind != Stmt::Kind::Call)
        return bad("a statement other than a call marked an ELBO term only");
      switch (s.kind) {
      case Stmt::Kind::Loop:
        if (!loop(s))
          return false;
        break;
      case Stmt::Kind::Call:
        if (!call(s))
          return false;
        break;
      case Stmt::Kind::Zero:
        if (!isBuffer(s.buffer, std::nullopt) || s.count <= 0)
          return bad("a zero-fill of " + std::to_string(s.count) + " entries of " + name(s.buffer));
        if (!expr(s.index, false, "zero-fill of " + name(s.buffer)))
          return false;
        break;
      case Stmt::Kind::ExitBelow:
        if (loopDepth_ == 0)
          return bad("an exit outside any loop");
        if (!isBuffer(s.buffer, false) || !expr(s.index, false, "exit test"))
          return bad("an exit test on " + name(s.buffer) + ", not a floating-point buffer");
        break;
      }
    }
    return true;
  }

  const Plan &p_;
  const char *block_ = "";
  std::set<int32_t> inScope_;
  int loopDepth_ = 0;
  std::string why_;
};

} // namespace

bool verifyPlan(const Plan &p, std::string &error) { return PlanVerifier(p).run(error); }

} // namespace ppc::codegen
