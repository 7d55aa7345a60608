//===- runtime/BoundDataChecks.cpp - checks of the data once bound ----------===//
#include "runtime/BoundDataChecks.h"
#include "runtime/SupportCheck.h"

#include "ir/Aliasing.h"
#include "ir/Evaluate.h"
#include "ir/IR.h"
#include "ir/Printer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

namespace ppc::rt {
namespace {

using ir::Op;
using ir::OpKind;
using ir::TypeKind;
using ir::Value;

int64_t vectorDimension(const Value *v, const ir::Evaluation &ev) {
  const ir::Dim &d = v->type.dim;
  return d.isConstant() ? d.constant : ev.valueOf(d.value).value_or(0);
}

/// The plate whose elements the Data ids of an aliasing pair are read at.
std::string plateOfRead(const ir::Operand &l, const ir::Operand &r) {
  for (const ir::Operand *o : {&l, &r})
    for (const ir::Operand &i : o->indices)
      if (i.isValue() && !i.value->dims.empty())
        return i.value->dims.back()->name;
  return "?";
}

} // namespace

/// A weight repeats a row's element (docs/data.md); along a chain an
/// element is one step of a sequence, which cannot be repeated alone: the
/// chain's posterior (forward-backward, the smoother) reads every step
/// once while the globals' updates would count it w times, a fixed point
/// of no model. A weight constant along each sequence repeats the
/// sequence, which is exact; a weight that changes along one is refused.
void checkChainWeights(const ir::Module &m, const BoundData &data, const std::string &weight,
                       std::vector<std::string> &errors) {
  std::set<const Value *> chainPlates;
  ir::walk(m.body, [&](const Op &op) {
    if (op.isRandom() && isChainFamily(op.family) && !op.results.empty() && !op.result()->dims.empty())
      chainPlates.insert(op.result()->dims.back());
  });
  for (const auto &[v, bv] : data.variables) {
    if (bv.weights.empty())
      continue;
    for (const Value *plate : v->dims) {
      auto bp = data.plates.find(plate);
      if (!chainPlates.count(plate) || bp == data.plates.end() || bp->second.offsets.size() < 2)
        continue;
      const BoundPlate &steps = bp->second;
      const size_t n = size_t(steps.flattened());
      if (n == 0 || bv.weights.size() % n != 0)
        continue;
      const size_t per = bv.weights.size() / n; // weights per step (a plate inside the chain's steps)
      for (size_t g = 0; g + 1 < steps.offsets.size(); ++g) {
        const size_t from = size_t(steps.offsets[g]) * per, to = size_t(steps.offsets[g + 1]) * per;
        for (size_t e = from + 1; e < to; ++e)
          if (bv.weights[e] != bv.weights[from]) {
            errors.push_back(bv.file + ": --weight " + weight + " is " + valueText(bv.weights[from]) + " and " +
                             valueText(bv.weights[e]) + " within sequence " + std::to_string(g) +
                             " of the chain over %" + plate->name +
                             ": a weight repeats a row's element, and a chain's step cannot be "
                             "repeated alone (give each sequence one weight, which repeats the whole sequence)");
            return;
          }
      }
    }
  }
}

/// Two reads of one latent variable in one deterministic factor that are
/// one element where Data ids agree (s(a(i)) - s(b(i)) with a = b):
/// mean-field takes the operands as independent, so such a row would give
/// wrong posteriors without a sign (ir/Aliasing.h). The rows are refused.
void checkDataAliases(const ir::Module &m, const BoundData &data, std::vector<std::string> &errors) {
  for (const ir::DataAlias &alias : ir::dataDependentAliases(m)) {
    // The ids of the element each read names, by position; a constant
    // index is the same at every row.
    const ir::Operand &l = alias.left, &r = alias.right;
    const BoundVariable *ids = nullptr;
    size_t rows = 0;
    auto idAt = [&](const ir::Operand &o, size_t row) -> double {
      if (o.isLiteral())
        return o.literal();
      return data.variables.at(o.value).values[row];
    };
    std::vector<std::pair<const ir::Operand *, const ir::Operand *>> differing;
    bool unbound = false;
    for (size_t j = 0; j < l.indices.size(); ++j) {
      const ir::Operand &x = l.indices[j], &y = r.indices[j];
      if (x.isLiteral() && y.isLiteral())
        continue;
      if (ir::toString(x) == ir::toString(y))
        continue;
      differing.push_back({&x, &y});
      for (const ir::Operand *d : {&x, &y})
        if (d->isValue()) {
          auto it = data.variables.find(d->value);
          if (it == data.variables.end()) {
            unbound = true; // not bound by these files: nothing to check
            continue;
          }
          ids = &it->second;
          rows = it->second.values.size();
        }
    }
    if (!ids || unbound)
      continue;
    std::vector<size_t> same;
    for (size_t row = 0; row < rows; ++row) {
      bool aliased = true;
      for (auto [x, y] : differing)
        aliased = aliased && idAt(*x, row) == idAt(*y, row);
      if (aliased)
        same.push_back(row);
    }
    if (same.empty())
      continue;
    const std::string list = firstFew(same);
    const SourceLoc at = alias.factor->loc.begin;
    errors.push_back(ids->file + ": in " + std::string(same.size() == 1 ? "element " : "elements ") + list +
                      " of plate %" + plateOfRead(l, r) + ", '" + ir::sourceSpelling(l) +
                      "' and '" + ir::sourceSpelling(r) + "' are the same variable, which the " +
                      displayName(alias.factor->family) + " at model line " + std::to_string(at.line) + ":" +
                      std::to_string(at.col) +
                      " takes as two operands; variational message passing treats the operands of arithmetic "
                      "as independent, so a variable may enter it only once (drop those rows, or model them "
                      "with a factor of their own)");
  }
}

/// Gaussian observations far from zero for their spread. A Gaussian's
/// statistics are E x and E x^2, so a factor computes E (x - mu)^2 as
/// x^2 - 2 x E mu + E mu^2, which cancels about 2 log10(|mean| / sd) of a
/// double's 16 digits: at a mean 10^4 times the spread the updates' noise
/// is about 1e-8 and can make the ELBO decrease; at 10^8 nothing is left.
/// Centering the data (and the prior's mean) avoids it.
void warnFarFromZero(const ir::Module &m, const ir::Evaluation &ev, BoundData &data) {
  std::set<const Value *> gaussian;
  ir::walk(m.body, [&](const Op &op) {
    auto isGaussian = [](const Op *d) {
      return d && d->isRandom() && (d->family == Family::Gaussian || d->family == Family::MvGaussian);
    };
    if (isGaussian(&op))
      gaussian.insert(op.result());
    else if (op.kind == OpKind::GateExit && op.operands.size() > 1 && op.operands[1].isValue() &&
             isGaussian(op.operands[1].value->def))
      gaussian.insert(op.result());
  });
  for (const auto &[v, bound] : data.variables) {
    if (!gaussian.count(v) || bound.values.empty())
      continue;
    const int64_t D = v->type.kind == TypeKind::Vector ? std::max<int64_t>(1, vectorDimension(v, ev)) : 1;
    const size_t elements = bound.values.size() / size_t(D);
    std::vector<bool> missing(elements, false);
    for (int64_t e : bound.missing)
      missing[size_t(e)] = true;
    double worst = 0, worstMean = 0, worstSd = 0;
    for (int64_t d = 0; d < D; ++d) {
      double mean = 0, m2 = 0; // Welford: the spread itself must not cancel
      size_t n = 0;
      for (size_t e = 0; e < elements; ++e) {
        if (missing[e])
          continue;
        const double x = bound.values[e * size_t(D) + size_t(d)], delta = x - mean;
        mean += delta / double(++n);
        m2 += delta * (x - mean);
      }
      const double sd = n > 1 ? std::sqrt(m2 / double(n)) : 0.0;
      if (sd > 0 && std::fabs(mean) / sd > worst) {
        worst = std::fabs(mean) / sd;
        worstMean = mean;
        worstSd = sd;
      }
    }
    if (worst > 1e3) {
      data.farFromZero.push_back(v->name);
      char digits[16], mean[32], sd[32];
      snprintf(digits, sizeof digits, "%.0f", std::min(16.0, 2 * std::log10(worst)));
      snprintf(mean, sizeof mean, "%.6g", worstMean);
      snprintf(sd, sizeof sd, "%.6g", worstSd);
      data.warnings.push_back(bound.file + ": the values of '" + v->name + "' are far from zero for their spread " +
                              "(mean " + mean + ", standard deviation " + sd +
                              "): a Gaussian's updates compute x^2 - 2 x E[mu] + E[mu^2], which loses about " +
                              digits + " of a double's 16 digits; subtract the mean from the data (and from " +
                              "the prior's mean), and add it back to the posterior means");
    }
  }
}


} // namespace ppc::rt
