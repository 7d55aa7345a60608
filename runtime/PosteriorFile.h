//===- runtime/PosteriorFile.h - reading a posterior --out wrote ----------===//
//
// `--init VAR=FILE` and `--given VAR=FILE` read a variable's posterior from
// the CSV `--out` writes for it (runtime/Output.h): the plates' index
// columns, the family's standard parameters, its summaries (checked to agree
// with the parameters, which are what is read). The
// older layout, parameters only, reads too. The file must fit the variable:
// its family's columns, one row per element (index columns, when present,
// naming the elements in order), and valid parameters (a Dirichlet's alpha
// > 0, a covariance positive definite); every error names the file, the line
// and the column.
//
//===----------------------------------------------------------------------===//
#pragma once

#include "runtime/Catalogue.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ppc::rt {

/// What a posterior file must hold to fit a variable.
struct PosteriorShape {
  std::string variable;
  Family family = Family::Gaussian;
  int64_t dimension = 1;
  int64_t rows = 0;
  std::vector<std::string> indexColumns; ///< the plates of its rows
  std::vector<int64_t> indices;          ///< rows x indexColumns.size(), row-major
};

/// Reads the posterior in `path` as natural parameters (rows x the family's
/// width, row-major) into `eta`; false with `error` set when the file does
/// not fit `shape`.
bool readPosteriorFile(const std::string &path, const PosteriorShape &shape, std::vector<double> &eta,
                       std::string &error);

} // namespace ppc::rt
