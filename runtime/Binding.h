//===- runtime/Binding.h - binding CSV data to a model's observed variables -===//
//
// The rules (docs/data.md):
//   * an observed variable takes its values from the column named like it,
//     or the one given by `--map VAR=COLUMN`;
//   * the variables a file binds range over the same plates; each row is one
//     element of them;
//   * a plate's element comes from an index column (0-based ids) named like
//     the plate (`theta` for the plate of `val theta = ?.map(...)`, or the
//     plate's IR name, or a loop index that iterates it), or given by
//     `--map PLATE=COLUMN`; without one, the innermost plate's elements are
//     the rows in order (within their group, for a ragged plate);
//   * a known-size innermost plate may instead be spread over columns
//     (wide format): `--map VAR=p*` reads p0, p1, ..., p{n-1};
//   * `--weight COLUMN` repeats rows (bag-of-words counts).
// Data-sized (`?`) plates get their sizes from the data; every value is
// checked against its variable's support; errors name file, line and column.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/Csv.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ppc {
namespace ir { class Module; class Value; struct Evaluation; }

namespace rt {

/// A data-parallel run (docs/distributed.md): this process binds part
/// `part` of `parts` of `plate`, the outermost data plate. The file holding
/// the plate's data is cut into byte ranges of about equal size at row
/// boundaries, keeping each element's rows together (rows must then be
/// grouped by the plate's index column, in increasing order); only this
/// part of it is read. Element ids are renumbered from the part's first
/// element. Files over other plates are read whole.
struct Partition {
  const ir::Value *plate = nullptr;
  int part = 0, parts = 1;
  /// A stochastic run's batch (docs/svi.md): exactly these rows of the
  /// file (as planBatches cut it), in place of part/parts.
  std::optional<CsvBatch> batch;
};

struct BindingOptions {
  std::vector<std::string> files;           ///< --infer FILE (in order)
  std::string filesFlag = "--infer";        ///< the flag that gave them, for messages (--heldout)
  std::map<std::string, std::string> map;   ///< --map NAME=COLUMN
  std::optional<std::string> weight;        ///< --weight COLUMN
  std::optional<Partition> partition;
  /// Every value of an observed variable may be missing: with posteriors
  /// given (--given), a run that only predicts them (applying a trained model
  /// to new rows). Otherwise a column with no value at all is an error.
  bool allowAllMissing = false;
};

/// The plate a data-parallel run splits: the model's one data-sized plate
/// at the top level. Null with `error` set when there is none or several.
/// With `stochastic`, the errors speak of --svi's batches.
const ir::Value *partitionPlate(const ir::Module &m, std::string &error, bool stochastic = false);

/// A plate's sizes once data is bound. For a plate inside other plates (a
/// ragged or nested plate), one size per element of its parents, flattened;
/// `offsets` has one more entry (CSR).
struct BoundPlate {
  std::vector<int64_t> sizes;
  std::vector<int64_t> offsets;
  /// The index column its elements came from (as the file names it), empty
  /// when rows in order gave them: the index column of outputs over it.
  std::string column;
  int64_t flattened() const { return offsets.empty() ? 0 : offsets.back(); }
};

/// An observed variable's values, in plate order (the flattened index of
/// its innermost plate), with their weights.
struct BoundVariable {
  std::string file;
  std::vector<double> values;
  std::vector<double> weights; ///< empty: every weight is 1
  /// Elements whose value is missing (an empty cell or NA), with a
  /// placeholder value in the support: the plan multiplies their factor's
  /// messages and ELBO terms by 0 (a mask of the variable's own, unlike
  /// the row weights), so they add nothing to the likelihood (marginalised
  /// out exactly); their posterior predictive is an output
  /// (`<var>.predicted.csv`).
  std::vector<int64_t> missing;
};

/// Orders values by name (unique in a module), so that walking the bound
/// data never depends on heap addresses (--emit=data, the plan's buffers).
struct ByValueName {
  bool operator()(const ir::Value *a, const ir::Value *b) const;
};

struct BoundData {
  std::map<const ir::Value *, BoundPlate, ByValueName> plates; ///< data-sized plates (and known ones, for reference)
  std::map<const ir::Value *, BoundVariable, ByValueName> variables;
  /// What binds but may not be what the user meant, a sentence each naming
  /// the file: columns nothing reads, elements of a plate no row mentions.
  std::vector<std::string> warnings;
  /// Gaussian observations far from zero for their spread (one of the
  /// warnings): rounding, not a bug, may then make the ELBO decrease.
  std::vector<std::string> farFromZero;
};

/// Binds the files to the model's observed variables. Errors (a sentence
/// each, naming file, line, column) go to `errors`; returns nullopt if any.
std::optional<BoundData> bindData(const ir::Module &m, const ir::Evaluation &params, const BindingOptions &opts,
                                  std::vector<std::string> &errors);

/// A stochastic run's stream (docs/svi.md): the file holding the data of
/// `opts.partition->plate` (the outermost data plate) cut into batches of
/// `batchElements` elements, by the plate's index column when it has one.
/// With opts.partition's part/parts, only this process's part is cut.
struct BatchPlan {
  std::string file, key;
  std::vector<CsvBatch> batches;
  int64_t elements = 0; ///< over every batch
};
std::optional<BatchPlan> planBatches(const ir::Module &m, const ir::Evaluation &params, const BindingOptions &opts,
                                     int64_t batchElements, std::vector<std::string> &errors);

/// The observed variables' names when every one is discrete (Categorical,
/// Bernoulli, Poisson: a probability mass, so a log evidence <= 0 and an ELBO
/// that cannot be positive); empty when any has a density.
std::vector<std::string> discreteObservations(const ir::Module &m);

} // namespace rt
} // namespace ppc
