//===- codegen/llvm/LLVMCodegen.cpp - plan -> LLVM IR -> ORC JIT ----------===//
//
// Each block of the plan becomes one function
//
//   double ppc_block_<name>(ptr %buffers)
//
// whose loops are LLVM loops over i64 induction variables, whose kernel calls
// are direct calls to the runtime (resolved by the JIT session's symbol
// table, declared with the kernel's C signature) and which returns the sum
// of its ELBO terms. Buffer base pointers are loaded once at entry. The
// kernels' bitcode is linked into the module, so LLVM's O3 pipeline inlines
// them into the plate loops, hoists the index arithmetic and vectorizes for
// the host CPU.
//
//===----------------------------------------------------------------------===//
#include "codegen/exec/Executor.h"
#include "codegen/llvm/Jit.h"
#include "codegen/llvm/LLVMCodegen.h"
#include "runtime/Symbols.h"

#include <llvm/Bitcode/BitcodeReader.h>
#include <llvm/ExecutionEngine/Orc/Core.h>
#include <llvm/Linker/Linker.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

// The runtime's kernels as LLVM bitcode (runtime/CMakeLists.txt).
extern const unsigned char ppc_runtime_bitcode[];
extern const unsigned long ppc_runtime_bitcode_size;

namespace ppc::codegen {
namespace {

/// Links the definitions of the kernels the module calls from the runtime's
/// bitcode, as private copies, so that O3 inlines them into the loops and
/// vectorizes them for the host. Kernels without bitcode (those built on
/// Eigen) stay calls to the precompiled runtime.
constexpr unsigned kInlineLimit = 200;
/// The section runtime/VecMath.h's PPC_ROW_KERNEL puts kernels in, in the bitcode.
/// Rows at most this wide are zeroed and copied by scalar stores, not by
/// memset/memcpy calls (which the loop vectorizer does not widen).
constexpr int64_t kScalarRowLimit = 4;
constexpr llvm::StringLiteral kPrecompiledSection = ".text.ppc.precompiled";

bool linkRuntimeKernels(llvm::Module &m, std::string &error) {
  llvm::MemoryBufferRef buffer(
      llvm::StringRef(reinterpret_cast<const char *>(ppc_runtime_bitcode), ppc_runtime_bitcode_size),
      "runtime_kernels.bc");
  auto runtime = llvm::parseBitcodeFile(buffer, m.getContext());
  if (!runtime) {
    error = "internal: cannot read the runtime's bitcode: " + llvm::toString(runtime.takeError());
    return false;
  }
  m.setDataLayout((*runtime)->getDataLayout());
  m.setTargetTriple((*runtime)->getTargetTriple());
  // Compiled for the baseline CPU; the JIT's target machine decides.
  for (llvm::Function &f : **runtime) {
    f.removeFnAttr("target-cpu");
    f.removeFnAttr("target-features");
    f.removeFnAttr("tune-cpu");
    // PPC_ROW_KERNEL (runtime/VecMath.h): call the precompiled kernel, built
    // for the CPU's vector width, rather than compile the body here.
    if (!f.isDeclaration() && f.getSection() == kPrecompiledSection) {
      f.deleteBody();
      f.setSection("");
      f.setComdat(nullptr);
    }
  }
  if (llvm::Linker::linkModules(m, std::move(*runtime), llvm::Linker::LinkOnlyNeeded)) {
    error = "internal: cannot link the runtime's bitcode";
    return false;
  }
  for (llvm::Function &f : m)
    if (!f.isDeclaration() && !f.getName().starts_with("ppc_block_")) {
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
      // Large kernels (a row of special functions: a Dirichlet's statistics,
      // entropy) do enough work per call to be called: optimized once, not
      // at every call site (compile latency).
      if (f.getInstructionCount() > kInlineLimit && !f.hasFnAttribute(llvm::Attribute::AlwaysInline))
        f.addFnAttr(llvm::Attribute::NoInline);
    }
  for (llvm::GlobalVariable &g : m.globals())
    if (!g.isDeclaration())
      g.setLinkage(llvm::GlobalValue::InternalLinkage);
  return true;
}

class Emitter {
public:
  /// `runner`: the engine's parallel-loop runner, whose address the code
  /// passes back to ppc_parallel_loop; null: parallel loops run in sequence.
  Emitter(const Plan &p, llvm::LLVMContext &ctx, llvm::Module &m, ParallelRunner *runner)
      : p_(p), ctx_(ctx), m_(m), b_(ctx), runner_(runner) {}

  llvm::Function *emitBlock(Plan::BlockId block) {
    auto *fnType = llvm::FunctionType::get(b_.getDoubleTy(), {b_.getPtrTy()}, false);
    auto *fn = llvm::Function::Create(fnType, llvm::Function::ExternalLinkage,
                                      std::string("ppc_block_") + Plan::kBlockNames[block], m_);
    fn->getArg(0)->setName("buffers");
    fn->addParamAttr(0, llvm::Attribute::NoAlias);
    vars_.assign(size_t(p_.loopVars) + 1, nullptr);
    runOnce_ = block == Plan::Init || block == Plan::Final;
    const std::vector<Stmt> &stmts = p_.blocks[block];
    if (stmts.size() <= kStatementsPerFunction) {
      emitFunction(fn, stmts.data(), stmts.data() + stmts.size());
      return fn;
    }
    // A long block (a model of many scalar variables) in parts, each its own
    // function: LLVM's code generation (register allocation above all)
    // takes time superlinear in a function's length (1,000 scalar variables
    // in one function: 5 s). The block calls its parts in order and adds
    // their ELBO terms.
    std::vector<llvm::Function *> parts;
    for (size_t i = 0; i < stmts.size(); i += kStatementsPerFunction) {
      auto *part = llvm::Function::Create(fnType, llvm::Function::InternalLinkage,
                                          fn->getName() + ".part" + std::to_string(parts.size()), m_);
      part->getArg(0)->setName("buffers");
      part->addParamAttr(0, llvm::Attribute::NoAlias);
      part->addFnAttr(llvm::Attribute::NoInline);
      const size_t end = std::min(stmts.size(), i + kStatementsPerFunction);
      emitFunction(part, stmts.data() + i, stmts.data() + end);
      parts.push_back(part);
    }
    llvm::IRBuilder<> at(llvm::BasicBlock::Create(ctx_, "entry", fn));
    llvm::Value *elbo = llvm::ConstantFP::get(b_.getDoubleTy(), 0.0);
    for (llvm::Function *part : parts)
      elbo = at.CreateFAdd(elbo, at.CreateCall(part, {fn->getArg(0)}));
    at.CreateRet(elbo);
    if (runOnce_)
      runOnceOnly(fn);
    return fn;
  }

private:
  /// Blocks that run once are not worth optimizing (compile latency); the
  /// kernels they call are optimized copies.
  static void runOnceOnly(llvm::Function *fn) {
    fn->addFnAttr(llvm::Attribute::OptimizeNone);
    fn->addFnAttr(llvm::Attribute::NoInline);
  }

  /// `fn` (a block's signature) runs the statements [begin, end).
  void emitFunction(llvm::Function *fn, const Stmt *begin, const Stmt *end) {
    bool parallel = false;
    for (const Stmt *s = begin; s != end; ++s)
      parallel = parallel || (s->kind == Stmt::Kind::Loop && s->parallel && runner_);
    enter(fn, 0, !parallel);
    emit(begin, end);
    b_.CreateRet(b_.CreateLoad(b_.getDoubleTy(), cur_.elbo));
    leave();
  }

  /// Starts emitting the code of `wrapper` (arguments: the buffer table,
  /// then `extra` i64s) into an internal implementation with the same
  /// arguments, whose argument 0 is the table and 1.. the i64s; leave()
  /// ends it. Buffers are loaded from the table as the code first uses them
  /// (base()).
  void enter(llvm::Function *wrapper, unsigned extra, bool noAlias) {
    std::vector<llvm::Type *> params{b_.getPtrTy()};
    params.insert(params.end(), extra, b_.getInt64Ty());
    cur_.fn = llvm::Function::Create(llvm::FunctionType::get(b_.getDoubleTy(), params, false),
                                 llvm::Function::InternalLinkage, wrapper->getName() + ".body", m_);
    cur_.wrapper = wrapper;
    cur_.extra = extra;
    cur_.noAlias = noAlias;
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", cur_.fn));
    cur_.elbo = b_.CreateAlloca(b_.getDoubleTy(), nullptr, "elbo");
    b_.CreateStore(llvm::ConstantFP::get(b_.getDoubleTy(), 0.0), cur_.elbo);
    cur_.bases.assign(p_.buffers.size(), nullptr);
  }

  /// The address of `buffer` in the function being emitted: loaded from the
  /// table at its entry, once.
  llvm::Value *base(int32_t buffer) {
    llvm::Value *&address = cur_.bases[size_t(buffer)];
    if (!address) {
      llvm::BasicBlock &entry = cur_.fn->getEntryBlock();
      llvm::IRBuilder<> at(&entry, entry.begin());
      address = at.CreateLoad(b_.getPtrTy(), at.CreateConstGEP1_64(b_.getPtrTy(), cur_.fn->getArg(0), uint64_t(buffer)),
                              p_.buffers[size_t(buffer)].name);
    }
    return address;
  }

  /// Ends the function enter() began. Where `noAlias`, the implementation
  /// takes each buffer it uses as its own `noalias` argument, which the
  /// wrapper loads from the table: the buffers are distinct allocations,
  /// and saying so lets LLVM vectorize the inlined kernels' loops without
  /// runtime alias checks. Not for a block that runs parallel loops (their
  /// bodies reach the same buffers through the table, behind the block's
  /// back), nor past kMaxBufferArguments: LLVM's interprocedural passes
  /// take time quadratic in a function's arguments (a model of 500 scalar
  /// variables, 2,000 buffers, every one an argument of every function,
  /// took 3.4 s to compile, 1,000 variables 18 s). Only the buffers used:
  /// a parallel loop's body reads a few.
  void leave() {
    llvm::Function *impl = cur_.fn;
    std::vector<size_t> used;
    for (size_t i = 0; i < cur_.bases.size(); ++i)
      if (cur_.bases[i])
        used.push_back(i);
    const bool arguments = cur_.noAlias && used.size() <= kMaxBufferArguments;
    if (arguments) {
      std::vector<llvm::Type *> params(impl->getFunctionType()->params().begin(),
                                       impl->getFunctionType()->params().end());
      params.insert(params.end(), used.size(), b_.getPtrTy());
      auto *withArgs = llvm::Function::Create(llvm::FunctionType::get(b_.getDoubleTy(), params, false),
                                              llvm::Function::InternalLinkage, "", m_);
      withArgs->takeName(impl);
      // The attributes as one list (one call per argument copies the list each time).
      std::vector<llvm::AttributeSet> argAttrs(params.size());
      const auto noAlias = llvm::AttributeSet::get(ctx_, {llvm::Attribute::get(ctx_, llvm::Attribute::NoAlias)});
      for (size_t k = 0; k < used.size(); ++k)
        argAttrs[1 + cur_.extra + k] = noAlias;
      withArgs->setAttributes(llvm::AttributeList::get(ctx_, llvm::AttributeSet(), llvm::AttributeSet(), argAttrs));
      withArgs->splice(withArgs->end(), impl);
      for (unsigned a = 0; a < 1 + cur_.extra; ++a)
        impl->getArg(a)->replaceAllUsesWith(withArgs->getArg(a));
      for (size_t k = 0; k < used.size(); ++k) {
        auto *load = llvm::cast<llvm::LoadInst>(cur_.bases[used[k]]);
        llvm::Argument *arg = withArgs->getArg(unsigned(1 + cur_.extra + k));
        arg->setName(p_.buffers[used[k]].name);
        auto *slot = llvm::dyn_cast<llvm::Instruction>(load->getPointerOperand());
        load->replaceAllUsesWith(arg);
        load->eraseFromParent();
        if (slot && slot->use_empty())
          slot->eraseFromParent();
      }
      impl->eraseFromParent();
      impl = withArgs;
    }
    llvm::IRBuilder<> w(llvm::BasicBlock::Create(ctx_, "entry", cur_.wrapper));
    std::vector<llvm::Value *> args;
    for (unsigned a = 0; a < 1 + cur_.extra; ++a)
      args.push_back(cur_.wrapper->getArg(a));
    if (arguments)
      for (size_t i : used)
        args.push_back(w.CreateLoad(b_.getPtrTy(), w.CreateConstGEP1_64(b_.getPtrTy(), cur_.wrapper->getArg(0), i)));
    w.CreateRet(w.CreateCall(impl, args));
    if (runOnce_) {
      runOnceOnly(cur_.wrapper);
      runOnceOnly(impl);
    }
  }

  /// A parallel loop: its body becomes `double ppc_loop_<n>(ptr buffers,
  /// i64 begin, i64 end)`, which the runner calls on each thread's chunk with
  /// that thread's buffer table; the block adds the returned ELBO terms.
  void emitParallelLoop(const Stmt &s) {
    int64_t id = int64_t(runner_->loops.size());
    runner_->loops.push_back(&s);
    llvm::Value *bound = intExpr(s.bound);
    auto *type = llvm::FunctionType::get(b_.getDoubleTy(), {b_.getPtrTy(), b_.getInt64Ty(), b_.getInt64Ty()}, false);
    auto *body = llvm::Function::Create(type, llvm::Function::InternalLinkage, "ppc_loop_" + std::to_string(id), m_);
    // Emit the outlined function, then come back.
    FunctionState outer = std::move(cur_);
    cur_ = FunctionState();
    auto ip = b_.saveIP();
    enter(body, 2, /*noAlias=*/true); // parallel loops do not nest
    emitLoopRange(s, cur_.fn->getArg(1), cur_.fn->getArg(2));
    b_.CreateRet(b_.CreateLoad(b_.getDoubleTy(), cur_.elbo));
    leave();
    cur_ = std::move(outer);
    b_.restoreIP(ip);
    auto *runnerPtr = b_.CreateIntToPtr(b_.getInt64(reinterpret_cast<uint64_t>(runner_)), b_.getPtrTy());
    auto callee = m_.getOrInsertFunction(
        "ppc_parallel_loop", llvm::FunctionType::get(b_.getDoubleTy(),
                                                     {b_.getPtrTy(), b_.getInt64Ty(), b_.getPtrTy(),
                                                      b_.getInt64Ty(), b_.getPtrTy()},
                                                     false));
    llvm::Value *r = b_.CreateCall(callee, {runnerPtr, b_.getInt64(uint64_t(id)), cur_.fn->getArg(0), bound, body});
    b_.CreateStore(b_.CreateFAdd(b_.CreateLoad(b_.getDoubleTy(), cur_.elbo), r), cur_.elbo);
  }

  llvm::Value *intExpr(ExprId id) {
    const Expr &e = p_.exprs[size_t(id)];
    switch (e.kind) {
    case Expr::Kind::IntConst: return b_.getInt64(uint64_t(e.value));
    case Expr::Kind::LoopVar: return vars_[size_t(e.var)];
    case Expr::Kind::AddInt: return b_.CreateAdd(intExpr(e.a), intExpr(e.b), "", /*NUW=*/false, /*NSW=*/true);
    case Expr::Kind::MulInt: return b_.CreateMul(intExpr(e.a), intExpr(e.b), "", false, true);
    case Expr::Kind::LoadInt:
      return b_.CreateLoad(b_.getInt64Ty(), b_.CreateInBoundsGEP(b_.getInt64Ty(), base(e.buffer), intExpr(e.a)));
    default: return b_.getInt64(0);
    }
  }
  llvm::Value *doubleExpr(ExprId id) {
    if (id == kNoExpr)
      return llvm::ConstantFP::get(b_.getDoubleTy(), 1.0);
    const Expr &e = p_.exprs[size_t(id)];
    switch (e.kind) {
    case Expr::Kind::DoubleConst: return llvm::ConstantFP::get(b_.getDoubleTy(), e.number);
    case Expr::Kind::LoadDouble:
      return b_.CreateLoad(b_.getDoubleTy(), b_.CreateInBoundsGEP(b_.getDoubleTy(), base(e.buffer), intExpr(e.a)));
    case Expr::Kind::IntToDouble: return b_.CreateSIToFP(intExpr(e.a), b_.getDoubleTy());
    case Expr::Kind::AddDouble: return b_.CreateFAdd(doubleExpr(e.a), doubleExpr(e.b));
    case Expr::Kind::MulDouble: return b_.CreateFMul(doubleExpr(e.a), doubleExpr(e.b));
    case Expr::Kind::SubDouble: return b_.CreateFSub(doubleExpr(e.a), doubleExpr(e.b));
    default: return b_.CreateSIToFP(intExpr(id), b_.getDoubleTy());
    }
  }

  llvm::Type *typeOf(char c) {
    switch (c) {
    case 'v': return b_.getVoidTy();
    case 'i': return b_.getInt32Ty();
    case 'l': return b_.getInt64Ty();
    case 'd': return b_.getDoubleTy();
    default: return b_.getPtrTy();
    }
  }

  llvm::FunctionCallee kernel(const rt::RuntimeSymbol &sym) {
    std::vector<llvm::Type *> params;
    for (char c : sym.signature.substr(1))
      params.push_back(typeOf(c));
    auto *type = llvm::FunctionType::get(typeOf(sym.signature[0]), params, false);
    return m_.getOrInsertFunction(llvm::StringRef(sym.name.data(), sym.name.size()), type);
  }

  llvm::Value *element(int32_t buffer, ExprId index) {
    llvm::Type *t = p_.buffers[size_t(buffer)].isInt ? b_.getInt64Ty() : b_.getDoubleTy();
    return b_.CreateInBoundsGEP(t, base(buffer), intExpr(index));
  }

  void emit(const std::vector<Stmt> &body) { emit(body.data(), body.data() + body.size()); }
  void emit(const Stmt *begin, const Stmt *end) {
    for (const Stmt *it = begin; it != end; ++it) {
      const Stmt &s = *it;
      switch (s.kind) {
      case Stmt::Kind::Loop: emitLoop(s); break;
      case Stmt::Kind::Zero:
        if (s.count <= kScalarRowLimit) { // stores the loop vectorizer can widen; a memset it cannot
          llvm::Value *row = element(s.buffer, s.index);
          for (int64_t j = 0; j < s.count; ++j)
            b_.CreateStore(llvm::ConstantFP::get(b_.getDoubleTy(), 0.0),
                           b_.CreateConstInBoundsGEP1_64(b_.getDoubleTy(), row, uint64_t(j)));
        } else {
          b_.CreateMemSet(element(s.buffer, s.index), b_.getInt8(0), uint64_t(s.count) * sizeof(double),
                          llvm::MaybeAlign(8));
        }
        break;
      case Stmt::Kind::Call: emitCall(s); break;
      case Stmt::Kind::ExitBelow: {
        llvm::Value *v = b_.CreateLoad(b_.getDoubleTy(), element(s.buffer, s.index));
        auto *cont = llvm::BasicBlock::Create(ctx_, "continue", cur_.fn);
        b_.CreateCondBr(b_.CreateFCmpOLT(v, llvm::ConstantFP::get(b_.getDoubleTy(), s.threshold)), cur_.exits.back(), cont);
        b_.SetInsertPoint(cont);
        break;
      }
      }
    }
  }

  void emitLoop(const Stmt &s) {
    if (s.parallel && runner_) {
      emitParallelLoop(s);
      return;
    }
    emitLoopRange(s, b_.getInt64(0), intExpr(s.bound));
  }

  void emitLoopRange(const Stmt &s, llvm::Value *start, llvm::Value *bound) {
    llvm::BasicBlock *pre = b_.GetInsertBlock();
    auto *header = llvm::BasicBlock::Create(ctx_, "loop", cur_.fn);
    auto *bodyBlock = llvm::BasicBlock::Create(ctx_, "body", cur_.fn);
    auto *exit = llvm::BasicBlock::Create(ctx_, "exit", cur_.fn);
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    llvm::PHINode *i = b_.CreatePHI(b_.getInt64Ty(), 2, "i" + std::to_string(s.var));
    i->addIncoming(start, pre);
    b_.CreateCondBr(b_.CreateICmpSLT(i, bound), bodyBlock, exit);
    b_.SetInsertPoint(bodyBlock);
    llvm::Value *saved = vars_[size_t(s.var)];
    vars_[size_t(s.var)] = i;
    if (s.batch) {
      // The batch's size: min(batch, bound - i).
      llvm::Value *left = b_.CreateSub(bound, i, "", false, true);
      vars_[size_t(s.batchVar)] =
          b_.CreateSelect(b_.CreateICmpSLT(left, b_.getInt64(uint64_t(s.batch))), left, b_.getInt64(uint64_t(s.batch)));
    }
    cur_.exits.push_back(exit);
    emit(s.body);
    cur_.exits.pop_back();
    vars_[size_t(s.var)] = saved;
    llvm::Value *next = b_.CreateAdd(i, b_.getInt64(uint64_t(s.batch ? s.batch : 1)), "", true, true);
    i->addIncoming(next, b_.GetInsertBlock());
    b_.CreateBr(header);
    b_.SetInsertPoint(exit);
  }

  /// A copy of a few doubles (a row of two statistics) as loads and stores:
  /// inlined, ppc_copy's loop becomes a memcpy, which keeps the loop around
  /// it from vectorizing.
  bool emitSmallCopy(const rt::RuntimeSymbol &sym, const std::vector<llvm::Value *> &args) {
    auto *n = args.size() == 3 && sym.name == "ppc_copy" ? llvm::dyn_cast<llvm::ConstantInt>(args[0]) : nullptr;
    if (!n || n->getSExtValue() > kScalarRowLimit)
      return false;
    for (int64_t j = 0; j < n->getSExtValue(); ++j)
      b_.CreateStore(b_.CreateLoad(b_.getDoubleTy(), b_.CreateConstInBoundsGEP1_64(b_.getDoubleTy(), args[1], uint64_t(j))),
                     b_.CreateConstInBoundsGEP1_64(b_.getDoubleTy(), args[2], uint64_t(j)));
    return true;
  }

  void emitCall(const Stmt &s) {
    std::vector<llvm::Value *> args;
    for (const Arg &a : s.args) {
      switch (a.kind) {
      case Arg::Kind::Int: args.push_back(intExpr(a.expr)); break;
      case Arg::Kind::Double: args.push_back(doubleExpr(a.expr)); break;
      case Arg::Kind::Null: args.push_back(llvm::ConstantPointerNull::get(b_.getPtrTy())); break;
      case Arg::Kind::Pointer: args.push_back(element(a.buffer, a.expr)); break;
      case Arg::Kind::TempPointer: {
        llvm::IRBuilder<> entry(&cur_.fn->getEntryBlock(), cur_.fn->getEntryBlock().begin());
        llvm::AllocaInst *tmp = entry.CreateAlloca(b_.getDoubleTy());
        b_.CreateStore(doubleExpr(a.expr), tmp);
        args.push_back(tmp);
        break;
      }
      }
    }
    if (emitSmallCopy(*s.kernel, args))
      return;
    llvm::CallInst *call = b_.CreateCall(kernel(*s.kernel), args);
    if (s.result == Stmt::Result::Discard)
      return;
    llvm::Value *r = call;
    if (!r->getType()->isDoubleTy())
      r = b_.CreateSIToFP(r, b_.getDoubleTy());
    if (s.scale != kNoExpr)
      r = b_.CreateFMul(doubleExpr(s.scale), r);
    llvm::Value *slot = s.result == Stmt::Result::Elbo ? static_cast<llvm::Value *>(cur_.elbo) : element(s.buffer, s.index);
    llvm::Value *old = b_.CreateLoad(b_.getDoubleTy(), slot);
    b_.CreateStore(s.result == Stmt::Result::SlotProduct ? b_.CreateFMul(old, r) : b_.CreateFAdd(old, r), slot);
  }

  const Plan &p_;
  llvm::LLVMContext &ctx_;
  llvm::Module &m_;
  llvm::IRBuilder<> b_;
  /// The most buffers a function takes as arguments (leave()).
  static constexpr size_t kMaxBufferArguments = 256;
  /// The most top-level statements of a block in one function (emitBlock).
  static constexpr size_t kStatementsPerFunction = 256;
  /// The function being emitted (enter() to leave()). A parallel loop's
  /// body is emitted as a function of its own, its block's set aside.
  struct FunctionState {
    llvm::Function *fn = nullptr, *wrapper = nullptr; ///< the implementation, and its wrapper
    unsigned extra = 0;                               ///< its i64 arguments
    bool noAlias = false;                             ///< its buffers may be noalias arguments
    llvm::AllocaInst *elbo = nullptr;                 ///< the ELBO terms it adds up
    std::vector<llvm::Value *> bases;                 ///< each buffer's address, once used (base())
    std::vector<llvm::BasicBlock *> exits;            ///< exit blocks of the enclosing loops
  } cur_;
  std::vector<llvm::Value *> vars_;
  ParallelRunner *runner_ = nullptr;
  bool runOnce_ = false; ///< emitting the init or final block
};

std::unique_ptr<llvm::Module> buildModule(const Plan &plan, llvm::LLVMContext &ctx, ParallelRunner *runner) {
  auto m = std::make_unique<llvm::Module>("ppc_plan", ctx);
  Emitter e(plan, ctx, *m, runner);
  for (int b = 0; b < Plan::NumBlocks; ++b)
    e.emitBlock(Plan::BlockId(b));
  return m;
}

class JitEngine final : public Engine {
public:
  explicit JitEngine(const Plan &plan) : Engine(plan) {}
  double execute(Plan::BlockId block, void *const *buffers) override { return fns_[block](buffers); }
  std::string_view name() const override { return "jit"; }

  CompiledModule code;
  double (*fns_[Plan::NumBlocks])(void *const *) = {};
};

} // namespace

std::string planToLLVMText(const Plan &plan) {
  llvm::LLVMContext ctx;
  auto m = buildModule(plan, ctx, nullptr);
  std::string text;
  llvm::raw_string_ostream os(text);
  m->print(os, nullptr);
  return text;
}

std::unique_ptr<Engine> createJitEngine(const Plan &plan, JitSession &session, std::string *optimizedIR,
                                        std::string &error) {
  auto ctx = std::make_unique<llvm::LLVMContext>();
  auto engine = std::make_unique<JitEngine>(plan);
  auto m = buildModule(plan, *ctx, &engine->parallel);
  if (!linkRuntimeKernels(*m, error))
    return nullptr;
  std::string verify;
  llvm::raw_string_ostream vs(verify);
  if (llvm::verifyModule(*m, &vs)) {
    error = "internal: generated LLVM IR does not verify: " + verify;
    return nullptr;
  }
  engine->code = session.add(std::move(m), std::move(ctx), error, optimizedIR);
  if (!engine->code.live())
    return nullptr;
  for (int b = 0; b < Plan::NumBlocks; ++b) {
    void *addr = engine->code.lookup(std::string("ppc_block_") + Plan::kBlockNames[b]);
    if (!addr) {
      error = std::string("internal: the JIT has no function for block ") + Plan::kBlockNames[b];
      return nullptr;
    }
    engine->fns_[b] = reinterpret_cast<double (*)(void *const *)>(addr);
  }
  return engine;
}

} // namespace ppc::codegen
