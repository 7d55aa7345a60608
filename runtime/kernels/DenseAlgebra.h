//===- runtime/kernels/DenseAlgebra.h - small SPD linear algebra ----------===//
//
// Inverses and log-determinants of small symmetric positive-definite
// matrices (row-major D x D) by Cholesky.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>

/// Scratch size (doubles) of the MvGaussian/Wishart kernels of dimension D.
#ifndef PPC_MV_SCRATCH
#define PPC_MV_SCRATCH(D) (3 * (D) * (D) + 2 * (D) + 1)
#endif

extern "C" {

// ===== Small SPD linear algebra (row-major D x D) =====
/// inv = A^-1 and *logdet = log|A| by Cholesky; scratch >= D*D. Returns 0, or
/// 1 when A is not (numerically) positive definite (inv, logdet then unspecified).
int ppc_spd_inverse_logdet(int64_t D, const double* A, double* inv, double* logdet, double* scratch);

}  // extern "C"
