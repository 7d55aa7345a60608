#include "codegen/Jit.h"

#include "codegen/Executor.h"

#include "runtime/Symbols.h"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>

namespace ppc::codegen {

CompiledModule::CompiledModule(CompiledModule &&o) noexcept
    : jit_(o.jit_), tracker_(std::move(o.tracker_)), prefix_(std::move(o.prefix_)) {
  o.tracker_.reset();
}

CompiledModule &CompiledModule::operator=(CompiledModule &&o) noexcept {
  if (this != &o) {
    release();
    jit_ = o.jit_;
    tracker_ = std::move(o.tracker_);
    prefix_ = std::move(o.prefix_);
    o.tracker_.reset();
  }
  return *this;
}

CompiledModule::~CompiledModule() { release(); }

void CompiledModule::release() {
  if (!tracker_)
    return;
  llvm::consumeError(tracker_->remove());
  tracker_.reset();
}

void *CompiledModule::lookup(const std::string &name) const {
  if (!tracker_)
    return nullptr;
  auto sym = jit_->lookup(name + prefix_);
  if (!sym) {
    llvm::consumeError(sym.takeError());
    return nullptr;
  }
  return sym->toPtr<void *>();
}

std::unique_ptr<JitSession> JitSession::create(std::string &error) {
  static bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)initialized;
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) {
    error = llvm::toString(jtmb.takeError());
    return nullptr;
  }
  jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*jtmb)).create();
  if (!jit) {
    error = llvm::toString(jit.takeError());
    return nullptr;
  }
  // The runtime's kernels, by name, for generated code to call.
  llvm::orc::SymbolMap symbols;
  for (const rt::RuntimeSymbol &s : rt::runtimeSymbols())
    symbols[(*jit)->mangleAndIntern(s.name)] = {llvm::orc::ExecutorAddr::fromPtr(s.address),
                                                 llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  symbols[(*jit)->mangleAndIntern("ppc_parallel_loop")] = {
      llvm::orc::ExecutorAddr::fromPtr(reinterpret_cast<void *>(&ppc_parallel_loop)),
      llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  if (auto err = (*jit)->getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(symbols)))) {
    error = llvm::toString(std::move(err));
    return nullptr;
  }
  // The C library's math functions (log, exp) that inlined kernels call.
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      (*jit)->getDataLayout().getGlobalPrefix());
  if (!process) {
    error = llvm::toString(process.takeError());
    return nullptr;
  }
  (*jit)->getMainJITDylib().addGenerator(std::move(*process));
  std::unique_ptr<JitSession> session(new JitSession());
  session->jit_ = std::move(*jit);
  return session;
}

JitSession::~JitSession() = default;

void JitSession::optimize(llvm::Module &m, std::string *printed) {
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  std::unique_ptr<llvm::TargetMachine> tm;
  if (jtmb) {
    jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
    if (auto created = jtmb->createTargetMachine())
      tm = std::move(*created);
    else
      llvm::consumeError(created.takeError());
  } else {
    llvm::consumeError(jtmb.takeError());
  }
  if (tm) {
    m.setDataLayout(tm->createDataLayout());
    m.setTargetTriple(tm->getTargetTriple().str());
  }
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm.get());
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(m, mam);
  if (printed) {
    printed->clear();
    llvm::raw_string_ostream os(*printed);
    m.print(os, nullptr);
  }
}

void *JitSession::lookupSymbol(const std::string &sessionName) {
  auto sym = jit_->lookup(sessionName);
  if (!sym) {
    llvm::consumeError(sym.takeError());
    return nullptr;
  }
  return sym->toPtr<void *>();
}

CompiledModule JitSession::add(std::unique_ptr<llvm::Module> m, std::unique_ptr<llvm::LLVMContext> ctx,
                               std::string &error, std::string *printed) {
  CompiledModule out;
  std::string prefix = ".ppc" + std::to_string(++counter_);
  for (llvm::Function &f : *m)
    if (!f.isDeclaration())
      f.setName(f.getName() + prefix);
  optimize(*m, printed);
  auto tracker = jit_->getMainJITDylib().createResourceTracker();
  if (auto err = jit_->addIRModule(tracker, llvm::orc::ThreadSafeModule(std::move(m), std::move(ctx)))) {
    error = llvm::toString(std::move(err));
    return out;
  }
  out.jit_ = jit_.get();
  out.tracker_ = std::move(tracker);
  out.prefix_ = prefix;
  return out;
}

} // namespace ppc::codegen
