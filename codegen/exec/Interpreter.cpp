//===- codegen/exec/Interpreter.cpp - the reference interpreter -----------===//
//
// Walks a plan and calls every kernel through the runtime's symbol table:
// slow, simple, and the reference the JIT-compiled code is tested against
// (the same kernels in the same order, so the same numbers).
//
//===----------------------------------------------------------------------===//
#include "codegen/exec/Executor.h"

#include "ir/IR.h"
#include "runtime/Symbols.h"

#include <cstring>

namespace ppc::codegen {

namespace {

class Interpreter final : public Engine {
public:
  explicit Interpreter(const Plan &p) : Engine(p), p_(p), vars_(size_t(p.loopVars) + 1, 0) {}

  double execute(Plan::BlockId block, void *const *buffers) override {
    buffers_ = buffers;
    double elbo = 0;
    run(p_.blocks[block], elbo);
    return elbo;
  }
  std::string_view name() const override { return "interp"; }

private:
  int64_t evalInt(ExprId id) const {
    const Expr &e = p_.exprs[size_t(id)];
    switch (e.kind) {
    case Expr::Kind::IntConst: return e.value;
    case Expr::Kind::LoopVar: return vars_[size_t(e.var)];
    case Expr::Kind::AddInt: return evalInt(e.a) + evalInt(e.b);
    case Expr::Kind::MulInt: return evalInt(e.a) * evalInt(e.b);
    case Expr::Kind::LoadInt: return static_cast<const int64_t *>(buffers_[e.buffer])[evalInt(e.a)];
    default: return 0;
    }
  }
  double evalDouble(ExprId id) const {
    if (id == kNoExpr)
      return 1.0;
    const Expr &e = p_.exprs[size_t(id)];
    switch (e.kind) {
    case Expr::Kind::DoubleConst: return e.number;
    case Expr::Kind::LoadDouble: return static_cast<const double *>(buffers_[e.buffer])[evalInt(e.a)];
    case Expr::Kind::IntToDouble: return double(evalInt(e.a));
    case Expr::Kind::AddDouble: return evalDouble(e.a) + evalDouble(e.b);
    case Expr::Kind::MulDouble: return evalDouble(e.a) * evalDouble(e.b);
    case Expr::Kind::SubDouble: return evalDouble(e.a) - evalDouble(e.b);
    default: return double(evalInt(id));
    }
  }

  /// Runs loop s's iterations [begin, end), one at a time or in batches.
  void runRange(const Stmt &s, int64_t begin, int64_t end, double &elbo) {
    const int64_t step = s.batch ? s.batch : 1;
    for (int64_t i = begin; i < end; i += step) {
      vars_[size_t(s.var)] = i;
      if (s.batch)
        vars_[size_t(s.batchVar)] = std::min(s.batch, end - i);
      if (!run(s.body, elbo))
        break;
    }
  }

  /// Runs `body`; false when an ExitBelow left the enclosing loop.
  bool run(const std::vector<Stmt> &body, double &elbo) {
    for (const Stmt &s : body) {
      switch (s.kind) {
      case Stmt::Kind::Loop: {
        int64_t n = evalInt(s.bound);
        if (s.parallel) {
          void *const *shared = buffers_;
          elbo += parallel.run(
              s, shared, n,
              [&](void *const *table, int64_t begin, int64_t end) {
                buffers_ = table;
                double sum = 0;
                runRange(s, begin, end, sum);
                buffers_ = shared;
                return sum;
              },
              /*concurrent=*/false);
          break;
        }
        runRange(s, 0, n, elbo);
        break;
      }
      case Stmt::Kind::ExitBelow:
        if (static_cast<const double *>(buffers_[s.buffer])[evalInt(s.index)] < s.threshold)
          return false;
        break;
      case Stmt::Kind::Zero:
        std::memset(static_cast<double *>(buffers_[s.buffer]) + evalInt(s.index), 0, size_t(s.count) * sizeof(double));
        break;
      case Stmt::Kind::Call: {
        rt::KernelValue args[16];
        double temps[16];
        for (size_t i = 0; i < s.args.size(); ++i) {
          const Arg &a = s.args[i];
          switch (a.kind) {
          case Arg::Kind::Int: args[i].i = evalInt(a.expr); break;
          case Arg::Kind::Double: args[i].d = evalDouble(a.expr); break;
          case Arg::Kind::Null: args[i].p = nullptr; break;
          case Arg::Kind::Pointer: {
            int64_t idx = evalInt(a.expr);
            args[i].p = p_.buffers[size_t(a.buffer)].isInt
                            ? static_cast<void *>(static_cast<int64_t *>(buffers_[a.buffer]) + idx)
                            : static_cast<void *>(static_cast<double *>(buffers_[a.buffer]) + idx);
            break;
          }
          case Arg::Kind::TempPointer:
            temps[i] = evalDouble(a.expr);
            args[i].p = &temps[i];
            break;
          }
        }
        double r = s.kernel->call(args);
        if (s.result == Stmt::Result::Elbo)
          elbo += evalDouble(s.scale) * r;
        else if (s.result == Stmt::Result::Slot)
          static_cast<double *>(buffers_[s.buffer])[evalInt(s.index)] += evalDouble(s.scale) * r;
        else if (s.result == Stmt::Result::SlotProduct)
          static_cast<double *>(buffers_[s.buffer])[evalInt(s.index)] *= r;
        break;
      }
      }
    }
    return true;
  }

  const Plan &p_;
  std::vector<int64_t> vars_;
  void *const *buffers_ = nullptr;
};

} // namespace

std::unique_ptr<Engine> createInterpreter(const Plan &plan) { return std::make_unique<Interpreter>(plan); }

} // namespace ppc::codegen
