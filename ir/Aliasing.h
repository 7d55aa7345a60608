//===- ir/Aliasing.h - may two reads name one random variable? ------------===//
//
// Mean-field VMP treats the operands of a deterministic factor (sum,
// product, dot) as independent under q, so one variable may reach such a
// factor through one operand only: `m(k) + m(0)` is `2 * m(0)` where k = 0,
// and its messages would then be wrong without a sign. The frontend rejects
// reads that name one element for some or every element of the loops
// (frontend/LowerArithmetic.cpp); reads that do so only where Data ids agree
// (`s(a(i)) - s(b(i))`, `m(j(i)) + m(0)`) are checked row by row when the
// data are bound (runtime/Binding.cpp). Different elements of one plate are
// a separate matter: ppc updates a plate's elements together, which is an
// ascent for two of them in one sum but not in a product (the frontend
// refuses it) nor, in general, for three in one sum (coupledElements).
//
//===----------------------------------------------------------------------===//
#pragma once

#include "ir/IR.h"

#include <string>
#include <vector>

namespace ppc::ir {

/// The latent variables a random value is computed from through
/// deterministic factors, each read with the indices of the loops around
/// that factor (w(0) and w(1) are different variables under q; the same
/// loop index names the same element). Known inputs are not latent.
void latentLeaves(const Operand &o, std::vector<Operand> &out);

enum class Overlap {
  Never,          ///< different variables, or constant indices that differ
  Always,         ///< the same element at every element of the loops
  WhereDataEqual, ///< the same element in the rows whose Data ids agree (checked at binding)
  Sometimes,      ///< the same element for some values of loop indices or latent switches
};

/// Whether two reads of random variables may name one element.
Overlap overlap(const Operand &a, const Operand &b);

/// Two latent reads of one factor, through different operands, that name
/// one element where Data ids agree.
struct DataAlias {
  const Op *factor = nullptr;
  Operand left, right;
};
/// Every such pair in the module's deterministic factors.
std::vector<DataAlias> dataDependentAliases(const Module &m);

/// Plate variables with three or more elements in one linear combination
/// (w(0) * x0(i) + w(1) * x1(i) + w(2) * x2(i)), a sentence each naming the
/// reads and the factor's position. ppc updates a plate's elements
/// together; for two elements in one combination that step is an ascent,
/// for three it need not be (it is when the coupling is weak, as with
/// standardized regressors), so a decreasing ELBO in such a model is
/// explained by them rather than called a bug.
std::vector<std::string> coupledElements(const Module &m);

/// An operand as the model spells it: `u(a(i))` for %u[%a[%i]].
std::string sourceSpelling(const Operand &o);

} // namespace ppc::ir
