//===- runtime/kernels/DenseAlgebra.cpp - small SPD linear algebra --------===//
//
// Inverses and log-determinants of small symmetric positive-definite
// matrices (row-major D x D) by Cholesky.
//
//===----------------------------------------------------------------------===//
#include "runtime/kernels/DenseAlgebra.h"

#include "runtime/kernels/IsaVectors.h"
#include "runtime/kernels/KernelSupport.h"

#include <cmath>
#include <cstdlib>
#include <cstring>

#ifdef PPC_SPD_WIDE
namespace ppc::rt::spd {
PPC_TARGET_AVX512 bool choleskyWide(int64_t D, double* L) { return choleskyLanes<8>(D, L); }
PPC_TARGET_AVX512 void choleskyInverseWide(int64_t D, double* L, double* inv) { choleskyInverseLanes<8>(D, L, inv); }
} // namespace ppc::rt::spd
#endif

extern "C" {

// ===== SPD algebra =====

PPC_KERNEL_INLINE int spdInverseLogdet(int64_t D, const double* A, double* inv, double* logdet, double* scratch) {
  for (int64_t i = 0; i < D * D; ++i) scratch[i] = A[i];
  if (!cholesky(D, scratch)) return 1;
  *logdet = logdetFromCholesky(D, scratch);
  choleskyInverse(D, scratch, inv);
  return 0;
}

PPC_ROW_KERNEL int ppc_spd_inverse_logdet(int64_t D, const double* A, double* inv, double* logdet, double* scratch) {
  return spdInverseLogdet(D, A, inv, logdet, scratch);
}

}  // extern "C"

#ifndef PPC_RUNTIME_BITCODE
// ---- the catalogue's entry (not in the bitcode: kernels only) ----

#include "runtime/Catalogue.h"
#include "runtime/SymbolTable.h"

// The copies per vector ISA of the row kernels (runtime/SymbolTable.h).
PPC_DECLARE_CLONES(ppc_spd_inverse_logdet)

namespace ppc::rt::factors {

namespace {
const RuntimeSymbol kSymbols[] = {
    PPC_ROW_SYMBOL(ppc_spd_inverse_logdet),
};
} // namespace

extern const KernelGroup kDenseAlgebraKernels = {"DenseAlgebra", kSymbols};

} // namespace ppc::rt::factors
#endif // PPC_RUNTIME_BITCODE
