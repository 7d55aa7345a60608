//===- codegen/plan/Lowering.h - a scheduled module -> its plan ----------===//
//
// The step from the Model IR to the plan (DESIGN.md §4, step 11; Halide's
// lowering of Funcs to Stmts): the schedule's `update`, `fuse` and `local`
// statements, bound to data, become loop nests of kernel calls over buffers,
// and the gated model's factors and posteriors become the ELBO block. The
// plan's own transformations run afterwards (codegen/transforms/).
//
//===----------------------------------------------------------------------===//
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>

namespace ppc {
class DiagnosticEngine;
namespace ir { class Module; class Value; struct Evaluation; }
namespace rt { struct BoundData; }
} // namespace ppc

namespace ppc::codegen {

struct Plan;

/// Choices made while lowering (the transformations after it have their
/// own list, codegen/transforms/PlanPipeline.cpp).
struct LoweringOptions {
  /// `product-form`: categorical posteriors whose messages are rows or
  /// entries of Dirichlet parents' statistics are computed as normalized
  /// products of exponential tables (codegen/plan/ProductForm.cpp); off,
  /// every categorical is a softmax of summed messages.
  bool productForm = true;
  /// Plan a data-parallel run that splits this plate (the data bound is
  /// this process's part of it).
  const ir::Value *partitionedPlate = nullptr;
  /// The per-core L2 cache the plan is sized to (bytes), recorded in the
  /// plan for the transformations that block for it; 0: this machine's.
  int64_t l2CacheBytes = 0;
  /// The threads the plan will run on (--threads), for the transformations
  /// that split one call into calls that run at once (CaseSplitting.cpp);
  /// the numbers computed never depend on it.
  int64_t threads = 1;
  /// Whether every iteration evaluates the ELBO (--elbo-every 1): where not,
  /// statistics do not also compute what only the ELBO block reads at a
  /// cost of their own (EntropySharing.cpp).
  bool elboEveryIteration = true;
  /// Latent variables whose posteriors start from the user's values
  /// (--init): not drawn at random by the init block.
  std::set<std::string> userInitialized;
  /// A data-parallel run: the observed variables whose values some process
  /// misses (every process gets the same predict block); one process
  /// predicts the variables it misses values of.
  std::set<std::string> predicted;
};

/// Lowers a scheduled module bound to data to a plan. Unsupported constructs
/// are errors in `diags` (with the statement's position); returns null then.
/// With `randomInitConditions`, the latent conditions of gates (the targets
/// of evidence messages) start from random posteriors; the scheduler must
/// have been told the same (passes::PassContext).
std::unique_ptr<Plan> lowerSchedule(const ir::Module &m, const ir::Evaluation &eval, const rt::BoundData &data,
                                    bool randomInitConditions, DiagnosticEngine &diags,
                                    const LoweringOptions &options = {});

/// This machine's per-core L2 cache in bytes (sysconf); 0 when unknown.
int64_t hostL2CacheBytes();

} // namespace ppc::codegen
