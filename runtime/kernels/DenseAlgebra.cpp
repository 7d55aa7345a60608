//===- runtime/kernels/DenseAlgebra.cpp - small SPD linear algebra --------===//
//
// Inverses and log-determinants of small symmetric positive-definite
// matrices (row-major D x D) by Cholesky.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/DenseAlgebra.h"

#include "runtime/kernels/KernelSupport.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

extern "C" {

// ===== SPD algebra =====

int ppc_spd_inverse_logdet(int64_t D, const double* A, double* inv, double* logdet, double* scratch) {
  for (int64_t i = 0; i < D * D; ++i) scratch[i] = A[i];
  if (!cholesky(D, scratch)) return 1;
  *logdet = logdetFromCholesky(D, scratch);
  choleskyInverse(D, scratch, inv);
  return 0;
}

}  // extern "C"

#ifndef PPC_RUNTIME_BITCODE
// ---- the catalogue's entry (not in the bitcode: kernels only) ----

#include "runtime/Catalogue.h"
#include "runtime/SymbolTable.h"

namespace ppc::rt::factors {

namespace {
const RuntimeSymbol kSymbols[] = {
    PPC_SYMBOL(ppc_spd_inverse_logdet),
};
} // namespace

extern const KernelGroup kDenseAlgebraKernels = {"DenseAlgebra", kSymbols};

} // namespace ppc::rt::factors
#endif // PPC_RUNTIME_BITCODE
