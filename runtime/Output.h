//===- runtime/Output.h - writing posteriors and the run summary -----------===//
//
// `--out DIR` writes, atomically (a temporary directory in the same place,
// fsync'ed, then renamed over DIR), one CSV per latent variable, one row per
// plate element: first the index of the element in each of its plates (a
// column named after the data's index column, e.g. `doc`, or the plate),
// then the standard parameters of its family, then summaries the
// parameters are not already (a Gamma's mean and variance):
//   Gaussian mean,variance   Gamma shape,rate,mean,variance
//   Beta alpha,beta,mean,variance   Dirichlet alpha_0..alpha_{K-1},mean_0..
//   Bernoulli p   Categorical p_0..p_{K-1}   Poisson rate
//   MvGaussian mean_i,cov_i_j   Wishart dof,scale_i_j,mean_i_j
// and summary.json (ELBO trace, cumulative times, iterations, convergence,
// compile and inference seconds, the options used, and which column of each
// posterior's file is which). Numbers are written in their shortest exact
// form (ir::formatDouble). An existing DIR is replaced in one step.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/Catalogue.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ppc::rt {

/// The posterior of one latent variable: `rows` elements, each with the
/// standard parameters of its family (posteriorColumns gives their names).
struct PosteriorTable {
  std::string variable;
  Family family = Family::Gaussian;
  int64_t dimension = 1; ///< K for Dirichlet and Categorical, D for MvGaussian and Wishart
  std::vector<double> values; ///< row-major, rows x columns
  /// The plates of its rows (the index columns) and each row's element in
  /// them: rows x indexColumns.size(), row-major.
  std::vector<std::string> indexColumns;
  std::vector<int64_t> indices;
  /// Set for a missing observation's posterior predictive
  /// (`<var>.predicted.csv`): its columns, written in place of the
  /// family's parameters and summaries.
  std::vector<std::string> columns;
  /// Over a data plate (LDA's documents), not a global: the report shows a
  /// few of its rows.
  bool overData = false;
};

std::vector<std::string> posteriorColumns(Family f, int64_t dimension);

struct RunSummary {
  std::vector<double> elbo;  ///< one value per evaluated iteration (--elbo-every: not all)
  std::vector<double> time;  ///< cumulative seconds at the end of each of those iterations
  std::vector<int64_t> elboIterations; ///< which iterations (1-based) those are
  int64_t iterations = 0;
  /// Cumulative seconds at the end of the last iteration, evaluated or not.
  double iterationSeconds = 0;
  bool converged = false;
  /// Model text to JIT-ready code (parsing, passes, plan, LLVM, JIT), and
  /// reading and binding the data files (not part of compiling).
  double compileSeconds = 0, inferenceSeconds = 0, dataSeconds = 0;
  /// The init block (random initialization, the first messages): before
  /// the first iteration, so not in `time` or `inferenceSeconds`.
  double initSeconds = 0;
  std::map<std::string, std::string> options; ///< the options used, as given
  /// A held-out evaluation (--heldout): the bound of the held-out data with
  /// the trained globals given, and per observation (weighted count).
  struct Heldout {
    std::string file;
    double elbo = 0, observations = 0, perObservation = 0;
    int64_t iterations = 0;
    bool converged = false;
    /// Compiling for the held-out data, reading it, and the run.
    double seconds = 0;
  };
  std::optional<Heldout> heldout;
  /// A stochastic run (--svi, docs/svi.md): its stream and steps (`elbo`
  /// then holds each step's estimate of the whole data's ELBO), and the
  /// held-out bound every --heldout-every steps.
  struct Stochastic {
    int64_t steps = 0, batches = 0, dataSize = 0, batchElements = 0;
    double epochs = 0;
    std::vector<double> rho;
    double scanSeconds = 0, scanBytes = 0;
    struct Point {
      int64_t step = 0;
      double seconds = 0, perObservation = 0;
    };
    std::vector<Point> heldout;
  };
  std::optional<Stochastic> stochastic;
};

/// Empty when this process can make a file or directory beside `path` (in
/// its parent, which exists): a directory named like writeOutputs' temporary
/// one is made there and removed at once, so that permissions, a read-only
/// file system or a name too long are found before a run, not after it;
/// else the system's reason.
std::string creationProblem(const std::string &path);

/// Empty when `--out dir` can be written: its parent exists and `dir` is new,
/// empty, or the output of an earlier run (summary.json and CSVs only, which
/// the new outputs replace); else why not. Checked before a run starts, so
/// that a long run does not end in an error, and never replacing a directory
/// that holds anything else (`--out .` in a home directory).
/// With `probe`, also whether the directory can be made there
/// (creationProblem).
std::string checkOutputDirectory(const std::string &dir, bool probe = true);
/// Whether `path` is the directory `dir` or lies inside it (links followed
/// as far as they exist).
bool pathWithin(const std::string &path, const std::string &dir);

/// Writes everything into `dir` atomically; on failure nothing is left
/// behind (no partial directory) and `error` says why.
bool writeOutputs(const std::string &dir, const RunSummary &summary, const std::vector<PosteriorTable> &posteriors,
                  std::string &error);

/// Writes `bytes` to `path.tmp`, fsyncs it, renames it to `path` and fsyncs
/// the directory: a reader sees the old file or the whole new one.
bool writeFileAtomically(const std::string &path, const std::string &bytes, std::string &error);

} // namespace ppc::rt
