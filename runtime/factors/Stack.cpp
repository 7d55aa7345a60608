//===- runtime/factors/Stack.cpp - values stacked into a plate ------------===//
//
// m = stack(v_0, ..., v_{K-1}) in a loop over a plate of K elements: element
// k is v_k (a constant, a Gaussian or arithmetic on them). It turns the
// softmax link's K arguments, softmax(e_0, ..., e_{K-1}), into the plate of K
// values the link reads whole (Softmax.cpp). Message lowering gives each
// operand k its own pair of statements on element k
// (passes/MessageLowering.cpp): the forward copies v_k's statistics (E v,
// E v^2) into element k of m, and the message to v_k is element k's
// natural parameters (its children's messages), unchanged.
//
//===----------------------------------------------------------------------===//
#include "runtime/factors/Arithmetic.h"

extern "C" {

void ppc_stack_forward(const double* stats_v, double* dst) {
  dst[0] += stats_v[0];
  dst[1] += stats_v[1];
}

void ppc_stack_to_value(const double* eta_m, double w, double* dst) {
  dst[0] += w * eta_m[0];
  dst[1] += w * eta_m[1];
}

}  // extern "C"

#ifndef PPC_RUNTIME_BITCODE
// ---- the catalogue's entry (not in the bitcode: kernels only) ----

#include "runtime/factors/ArithmeticEntry.h"

namespace ppc::rt::factors {

using namespace catalogue;

namespace {

constexpr OperatorInput kForward[] = {{1, DepKind::Required}};
constexpr OperatorInput kToValue[] = {{0, DepKind::Required}};

// One operator per side; each operand's statements use them (variadic).
constexpr MessageOperator kMessages[] = {{"ppc_stack_forward", "", kForward}, {"ppc_stack_to_value", "", kToValue}};

constexpr KernelPattern kPatterns[] = {
    {"ppc_stack_forward", "S1 d"},
    {"ppc_stack_to_value", "N0 w d"},
};

const RuntimeSymbol kSymbols[] = {
    PPC_SYMBOL(ppc_stack_forward),
    PPC_SYMBOL(ppc_stack_to_value),
};

} // namespace

extern const FactorEntry kStack = arithmeticEntry(Family::Stack, kMessages, kPatterns, kSymbols);

} // namespace ppc::rt::factors
#endif // PPC_RUNTIME_BITCODE
