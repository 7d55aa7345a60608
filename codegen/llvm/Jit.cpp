#include "codegen/llvm/Jit.h"

#include "codegen/exec/Executor.h"

#include "runtime/Symbols.h"
#include "runtime/VectorIsa.h"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <unistd.h>
#include <llvm/ExecutionEngine/JITLink/JITLink.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h>
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

namespace {
/// Appends the link graph's functions to /tmp/perf-PID.map.
llvm::Error writePerfMap(llvm::jitlink::LinkGraph &g) {
  static std::mutex lock;
  std::lock_guard<std::mutex> guard(lock);
  std::string path = "/tmp/perf-" + std::to_string(::getpid()) + ".map";
  if (FILE *f = std::fopen(path.c_str(), "a")) {
    for (llvm::jitlink::Symbol *sym : g.defined_symbols())
      if (sym->hasName() && sym->getSize() > 0) // functions, and a few constants (harmless in the map)
        std::fprintf(f, "%llx %llx %s\n", static_cast<unsigned long long>(sym->getAddress().getValue()),
                     static_cast<unsigned long long>(sym->getSize()), sym->getName().str().c_str());
    std::fclose(f);
  }
  return llvm::Error::success();
}

/// PPC_PERF_MAP=1: every JIT-compiled function goes into /tmp/perf-PID.map,
/// the file `perf report` reads to name code it found no symbols for, so
/// that generated loops show up by name in profiles.
class PerfMapPlugin final : public llvm::orc::ObjectLinkingLayer::Plugin {
public:
  void modifyPassConfig(llvm::orc::MaterializationResponsibility &, llvm::jitlink::LinkGraph &,
                        llvm::jitlink::PassConfiguration &config) override {
    config.PostFixupPasses.emplace_back(&writePerfMap);
  }
  llvm::Error notifyFailed(llvm::orc::MaterializationResponsibility &) override { return llvm::Error::success(); }
  llvm::Error notifyRemovingResources(llvm::orc::JITDylib &, llvm::orc::ResourceKey) override {
    return llvm::Error::success();
  }
  void notifyTransferringResources(llvm::orc::JITDylib &, llvm::orc::ResourceKey, llvm::orc::ResourceKey) override {}
};
} // namespace

namespace {
/// The host, or the generic CPU of the vector ISA level `ppc --cpu` chose
/// (runtime/VectorIsa.h): x86-64-v3 code on an AVX-512 host, for instance.
llvm::Expected<llvm::orc::JITTargetMachineBuilder> targetMachineBuilder() {
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (jtmb && rt::vectorIsaOverridden()) {
    jtmb->setCPU(std::string(rt::cpuNameOf(rt::vectorIsa())));
    jtmb->getFeatures() = llvm::SubtargetFeatures();
  }
  if (jtmb)
    jtmb->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  return jtmb;
}
} // namespace

std::unique_ptr<JitSession> JitSession::create(std::string &error) {
  static bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)initialized;
  auto jtmb = targetMachineBuilder();
  if (!jtmb) {
    error = llvm::toString(jtmb.takeError());
    return nullptr;
  }
  llvm::orc::LLJITBuilder builder;
  builder.setJITTargetMachineBuilder(std::move(*jtmb));
  const char *perf = std::getenv("PPC_PERF_MAP");
  bool perfMap = perf && *perf && std::string_view(perf) != "0";
  if (perfMap)
    builder.setObjectLinkingLayerCreator([](llvm::orc::ExecutionSession &es, const llvm::Triple &) {
      auto layer = std::make_unique<llvm::orc::ObjectLinkingLayer>(es);
      layer->addPlugin(std::make_unique<PerfMapPlugin>());
      return layer;
    });
  auto jit = builder.create();
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
  session->perfMap_ = perfMap;
  return session;
}

JitSession::~JitSession() = default;

void JitSession::optimize(llvm::Module &m, std::string *printed) {
  auto jtmb = targetMachineBuilder();
  std::unique_ptr<llvm::TargetMachine> tm;
  if (jtmb) {
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
  if (perfMap_) // JITLink names only global symbols: make the optimized code's functions global
    for (llvm::Function &f : *m)
      if (!f.isDeclaration() && f.hasLocalLinkage()) {
        f.setLinkage(llvm::GlobalValue::ExternalLinkage);
        f.setVisibility(llvm::GlobalValue::HiddenVisibility);
      }
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
