//===- runtime/kernels/LdaReference.cpp - LDA's token update by hand ------===//
//
// The token update of LDA written by hand: the reference the tests and the
// micro-benchmarks compare the compiled plans with.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/LdaReference.h"

#include "runtime/kernels/KernelSupport.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

extern "C" {

// ===== Mixture inner loop =====

double ppc_lda_token(int64_t K, const double* elog_theta, const double* elog_phi_w, double w, double* r,
                     double* dst_theta, double* dst_phi_w) {
  for (int64_t k = 0; k < K; ++k) r[k] = elog_theta[k] + elog_phi_w[k];
  const double m = max8(K, r);
  for (int64_t k = 0; k < K; ++k) r[k] = vm::exp(r[k] - m);
  const double s = reduce8(K, [&](int64_t k) { return r[k]; });
  const double inv = 1.0 / s;
  const double winv = w * inv;
  for (int64_t k = 0; k < K; ++k) {
    const double e = r[k];
    r[k] = e * inv;
    dst_theta[k] += winv * e;
    dst_phi_w[k] += winv * e;
  }
  return w * (m + vm::log(s));
}

double ppc_lda_doc(int64_t n, int64_t K, const int64_t* words, const double* counts, const double* elog_theta,
                   const double* elog_phi_t, double* r, double* dst_theta, double* dst_phi_t) {
  double total = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t v = words[i];
    total += ppc_lda_token(K, elog_theta, elog_phi_t + v * K, weight(counts, i), r, dst_theta, dst_phi_t + v * K);
  }
  return total;
}

}  // extern "C"

#ifndef PPC_RUNTIME_BITCODE
// ---- the catalogue's entry (not in the bitcode: kernels only) ----

#include "runtime/Catalogue.h"
#include "runtime/SymbolTable.h"

namespace ppc::rt::factors {

namespace {
const RuntimeSymbol kSymbols[] = {
    PPC_SYMBOL(ppc_lda_token),
    PPC_SYMBOL(ppc_lda_doc),
};
} // namespace

extern const KernelGroup kLdaReferenceKernels = {"LdaReference", kSymbols};

} // namespace ppc::rt::factors
#endif // PPC_RUNTIME_BITCODE
