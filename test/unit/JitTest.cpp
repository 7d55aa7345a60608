// The JIT session: compiled code calls the runtime's kernels, is optimized for
// the host, and is released when the module is dropped.
#include "codegen/llvm/Jit.h"
#include "runtime/Special.h"

#include <cmath>
#include <fstream>
#include <gtest/gtest.h>
#include <llvm/AsmParser/Parser.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Support/SourceMgr.h>
#include <sstream>
#include <unistd.h>

using namespace ppc;

namespace {

struct Parsed {
  std::unique_ptr<llvm::LLVMContext> ctx = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> module;
};

Parsed parse(const std::string &ir) {
  Parsed p;
  llvm::SMDiagnostic diag;
  p.module = llvm::parseAssemblyString(ir, diag, *p.ctx);
  EXPECT_TRUE(p.module) << diag.getMessage().str();
  return p;
}

const char *kAxpy = R"(
declare void @ppc_digamma_n(i64, ptr, ptr)

define void @digammas(i64 %n, ptr %x, ptr %out) {
  call void @ppc_digamma_n(i64 %n, ptr %x, ptr %out)
  ret void
}

define void @axpy(i64 %n, double %a, ptr noalias %x, ptr noalias %y) {
entry:
  %empty = icmp eq i64 %n, 0
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %px = getelementptr double, ptr %x, i64 %i
  %py = getelementptr double, ptr %y, i64 %i
  %vx = load double, ptr %px
  %vy = load double, ptr %py
  %ax = fmul double %a, %vx
  %s = fadd double %ax, %vy
  store double %s, ptr %py
  %next = add i64 %i, 1
  %end = icmp eq i64 %next, %n
  br i1 %end, label %done, label %loop
done:
  ret void
}
)";

long residentKB() {
  std::ifstream in("/proc/self/statm");
  long size = 0, resident = 0;
  in >> size >> resident;
  return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

} // namespace

TEST(Jit, CompiledCodeCallsRuntimeKernels) {
  std::string error;
  auto jit = codegen::JitSession::create(error);
  ASSERT_TRUE(jit) << error;
  Parsed p = parse(kAxpy);
  codegen::CompiledModule cm = jit->add(std::move(p.module), std::move(p.ctx), error);
  ASSERT_TRUE(cm.live()) << error;
  auto digammas = reinterpret_cast<void (*)(int64_t, const double *, double *)>(cm.lookup("digammas"));
  ASSERT_NE(digammas, nullptr);
  double x[3] = {0.5, 1.0, 10.0}, out[3] = {0, 0, 0};
  digammas(3, x, out);
  for (int i = 0; i < 3; ++i)
    EXPECT_NEAR(out[i], rt::digamma(x[i]), 1e-14 * std::max(1.0, std::fabs(out[i])));
  auto axpy = reinterpret_cast<void (*)(int64_t, double, const double *, double *)>(cm.lookup("axpy"));
  ASSERT_NE(axpy, nullptr);
  std::vector<double> a(1000), b(1000);
  for (int i = 0; i < 1000; ++i) {
    a[i] = i;
    b[i] = 1;
  }
  axpy(1000, 2.0, a.data(), b.data());
  for (int i = 0; i < 1000; ++i)
    ASSERT_EQ(b[i], 1.0 + 2.0 * i);
  std::string name = cm.sessionName("axpy");
  EXPECT_NE(jit->lookupSymbol(name), nullptr);
  cm.release();
  EXPECT_EQ(cm.lookup("axpy"), nullptr);
  // The session itself no longer has the code.
  EXPECT_EQ(jit->lookupSymbol(name), nullptr);
}

TEST(Jit, DestroyingACompiledModuleRemovesItsCode) {
  std::string error;
  auto jit = codegen::JitSession::create(error);
  ASSERT_TRUE(jit) << error;
  std::string name;
  {
    Parsed p = parse(kAxpy);
    codegen::CompiledModule cm = jit->add(std::move(p.module), std::move(p.ctx), error);
    ASSERT_TRUE(cm.live()) << error;
    name = cm.sessionName("digammas");
    ASSERT_NE(jit->lookupSymbol(name), nullptr);
  }
  EXPECT_EQ(jit->lookupSymbol(name), nullptr);
}

TEST(Jit, OptimizationVectorizesForTheHost) {
  std::string error;
  auto jit = codegen::JitSession::create(error);
  ASSERT_TRUE(jit) << error;
  Parsed p = parse(kAxpy);
  std::string optimized;
  jit->optimize(*p.module, &optimized);
  EXPECT_NE(optimized.find(" x double>"), std::string::npos) << optimized;
}

TEST(Jit, DroppingModulesReleasesTheirCode) {
  std::string error;
  auto jit = codegen::JitSession::create(error);
  ASSERT_TRUE(jit) << error;
  // A module of 400 functions; the compile-and-drop cycles would keep tens of
  // megabytes if the code were not released.
  std::ostringstream big;
  big << "declare void @ppc_digamma_n(i64, ptr, ptr)\n";
  for (int f = 0; f < 400; ++f) {
    big << "define double @f" << f << "(double %x) {\n  %a = fmul double %x, " << f + 1 << ".0\n";
    for (int k = 0; k < 8; ++k)
      big << "  %t" << k << " = call double @llvm.sqrt.f64(double %" << (k ? "t" + std::to_string(k - 1) : "a")
          << ")\n";
    big << "  %b = fadd double %a, 1.0\n  %c = fdiv double %b, %x\n  ret double %c\n}\n";
  }
  big << "declare double @llvm.sqrt.f64(double)\n";
  auto cycle = [&] {
    Parsed p = parse(big.str());
    codegen::CompiledModule cm = jit->add(std::move(p.module), std::move(p.ctx), error);
    ASSERT_TRUE(cm.live()) << error;
    auto f7 = reinterpret_cast<double (*)(double)>(cm.lookup("f7"));
    ASSERT_NE(f7, nullptr);
    ASSERT_EQ(f7(2.0), (2.0 * 8 + 1) / 2.0);
  };
  for (int i = 0; i < 5; ++i)
    cycle();
  long before = residentKB();
  for (int i = 0; i < 20; ++i)
    cycle();
  long growth = residentKB() - before;
  EXPECT_LT(growth, 16 * 1024) << "resident memory grew by " << growth << " KB over 20 compile-and-drop cycles";
}
