//===- codegen/exec/Inference.cpp - the state and the iterations ----------===//
//
// The variational state (the plan's buffers), initialization, iterations
// to convergence with the ELBO checked, saving and restoring the state, and
// the posteriors in their families' standard parameters.
//
//===----------------------------------------------------------------------===//
#include "codegen/exec/Executor.h"

#include "codegen/exec/Distributed.h"
#include "ir/IR.h"
#include "runtime/Symbols.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>

namespace ppc::codegen {

Inference::Inference(const Plan &plan) : plan_(plan) {
  doubles_.resize(plan.buffers.size());
  ints_.resize(plan.buffers.size());
  bases_.resize(plan.buffers.size());
}

bool Inference::initialize(Engine &engine, uint64_t seed, const std::map<std::string, std::vector<double>> &start,
                           std::string &error) {
  // Buffers filled at bind time (data, plate sizes, constants) are only
  // read by the plan: the state points at the plan's copy (one copy of the
  // data in memory, not two).
  for (size_t b = 0; b < plan_.buffers.size(); ++b) {
    const Buffer &buf = plan_.buffers[b];
    if (buf.isInt) {
      if (!buf.ints.empty()) {
        bases_[b] = const_cast<int64_t *>(buf.ints.data());
        continue;
      }
      ints_[b].assign(size_t(buf.size), 0);
      bases_[b] = ints_[b].data();
    } else {
      if (!buf.doubles.empty()) {
        bases_[b] = const_cast<double *>(buf.doubles.data());
        continue;
      }
      doubles_[b].assign(size_t(buf.size), 0.0);
      bases_[b] = doubles_[b].data();
    }
  }
  // The init block draws the gate conditions' random initial posteriors.
  if (plan_.seedBuffer >= 0)
    ints_[size_t(plan_.seedBuffer)][0] = static_cast<int64_t>(seed);
  if (plan_.localRestart >= 0)
    doubles_[size_t(plan_.localRestart)][0] = 1.0;
  if (plan_.randomLocals >= 0)
    doubles_[size_t(plan_.randomLocals)][0] = drawRandomLocals ? 1.0 : 0.0;
  if (plan_.elboSwitch >= 0)
    doubles_[size_t(plan_.elboSwitch)][0] = 1.0;
  // The user's posteriors (--init, --given), before the init block, which
  // reads them and leaves them alone.
  for (const Posterior &post : plan_.posteriors) {
    auto it = start.find(post.variable->name);
    if (it == start.end() || post.scratch || !(post.userInit || post.given))
      continue;
    if (!startFrom(post, it->second, error))
      return false;
  }
  for (const Posterior &post : plan_.posteriors)
    if ((post.userInit || post.given) && !start.count(post.variable->name)) {
      error = "internal error: no values for '" + post.variable->name + "', which the plan expects from the user";
      return false;
    }
  engine.runBlock(Plan::Init, bases_.data());
  return true;
}

void Inference::initialize(Engine &engine, uint64_t seed) {
  std::string error;
  initialize(engine, seed, {}, error);
}

double Inference::iterate(Engine &engine, const std::function<void()> &beforeElbo) {
  elboInIteration_ = engine.runBlock(Plan::Iteration, bases_.data());
  if (beforeElbo)
    beforeElbo();
  return elbo(engine);
}

void Inference::finish(Engine &engine) { engine.runBlock(Plan::Final, bases_.data()); }

double Inference::elbo(Engine &engine) { return elboInIteration_ + engine.runBlock(Plan::Elbo, bases_.data()); }

bool Inference::run(Engine &engine, const RunOptions &opts, rt::RunSummary &summary,
                    const std::function<void(const IterationReport &)> &progress, std::string &error) {
  auto start = std::chrono::steady_clock::now();
  double previous = summary.elbo.empty() ? 0 : summary.elbo.back();
  // The iteration of the last evaluated ELBO (0: none yet), and the seconds
  // before a resumed run.
  int64_t evaluated = summary.elboIterations.empty() ? int64_t(summary.elbo.size()) : summary.elboIterations.back();
  double earlier = summary.iterationSeconds;
  for (int64_t it = summary.iterations + 1; it <= opts.maxIterations; ++it) {
    const bool evaluate = it == opts.maxIterations || plan_.onePass || (opts.elboEvery > 0 && it % opts.elboEvery == 0);
    if (plan_.elboSwitch >= 0)
      doubles_[size_t(plan_.elboSwitch)][0] = evaluate ? 1.0 : 0.0;
    double value = 0;
    if (evaluate)
      value = iterate(engine);
    else
      engine.runBlock(Plan::Iteration, bases_.data());
    double seconds = earlier + std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    summary.iterations = it;
    summary.iterationSeconds = seconds;
    if (!evaluate) {
      if (opts.interrupt && opts.interrupt->load())
        break;
      if (opts.afterIteration && !opts.afterIteration(summary, error))
        return false;
      continue;
    }
    IterationReport r;
    r.iteration = it;
    r.elbo = value;
    r.seconds = seconds;
    // Relative, per iteration since the last evaluated ELBO.
    r.change = evaluated == 0 ? 0
                              : (value - previous) / std::max(std::abs(value), 1e-300) / double(it - evaluated);
    const bool first = evaluated == 0;
    r.first = first;
    evaluated = it;
    summary.elbo.push_back(value);
    summary.time.push_back(seconds);
    summary.elboIterations.push_back(it);
    if (progress)
      progress(r);
    if (!std::isfinite(value)) {
      error = "the ELBO is not finite at iteration " + std::to_string(it) +
              " (a posterior became improper: check priors and data)";
      return false;
    }
    if (!opts.discreteObservations.empty() && value > 1e-6) {
      std::string names;
      for (const std::string &n : opts.discreteObservations)
        names += (names.empty() ? "'" : ", '") + n + "'";
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.17g", value);
      error = std::string("the ELBO is positive (") + buf + ") at iteration " + std::to_string(it) +
              ", but every observation (" + names +
              ") is discrete, so the log evidence it bounds is at most 0: the numbers went past double "
              "precision (check the data's weights and counts)";
      return false;
    }
    if (!first && r.change < -opts.decreaseTolerance) {
      char buf[256];
      std::snprintf(buf, sizeof buf,
                    "the ELBO decreased at iteration %lld: %.17g -> %.17g (relative %.3g); variational message "
                    "passing never decreases it, so ",
                    static_cast<long long>(it), previous, value, r.change);
      error = buf;
      if (opts.farFromZero.empty() && !opts.coupledElements.empty()) {
        std::string reads;
        for (const std::string &c : opts.coupledElements)
          reads += (reads.empty() ? "" : "; ") + c;
        error += "this comes from elements of one plate in one linear combination (" + reads +
                 "): ppc updates a plate's elements together, which is coordinate ascent for at most two of them "
                 "in one combination; give those elements variables of their own, or standardize the columns "
                 "that multiply them";
      } else if (opts.farFromZero.empty()) {
        error += "this is a bug in ppc";
      } else {
        std::string names;
        for (const std::string &n : opts.farFromZero)
          names += (names.empty() ? "'" : ", '") + n + "'";
        error += "this is rounding: the values of " + names + " are far from zero for their spread (the warning above); "
                 "center the data and run again";
      }
      return false;
    }
    if ((!first && std::abs(r.change) < opts.tolerance) || plan_.onePass) {
      summary.converged = true;
      previous = value;
      break;
    }
    previous = value;
    if (opts.interrupt && opts.interrupt->load())
      break;
    if (!first && plan_.localRestart >= 0 && std::abs(r.change) < opts.restartUntil)
      doubles_[size_t(plan_.localRestart)][0] = 0.0; // from now on, strict coordinate ascent
    if (opts.afterIteration && !opts.afterIteration(summary, error))
      return false;
  }
  finish(engine);
  summary.inferenceSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return true;
}

namespace {
constexpr char kStateMagic[8] = {'P', 'P', 'C', 'S', 'T', 'A', 'T', '1'};
} // namespace

std::string Inference::saveState() const {
  std::string out(kStateMagic, sizeof kStateMagic);
  auto put = [&](const void *p, size_t n) {
    if (n) // an empty buffer's data() may be null
      out.append(static_cast<const char *>(p), n);
  };
  put(&elboInIteration_, sizeof elboInIteration_);
  for (size_t b = 0; b < plan_.buffers.size(); ++b) {
    // Every buffer, in order, so that a state fits only its plan; memos
    // (restored empty) as their size alone.
    uint64_t n = plan_.buffers[b].isInt ? ints_[b].size() : doubles_[b].size();
    if (plan_.buffers[b].memo) {
      put(&n, sizeof n);
      continue;
    }
    put(&n, sizeof n);
    if (plan_.buffers[b].isInt)
      put(ints_[b].data(), n * sizeof(int64_t));
    else
      put(doubles_[b].data(), n * sizeof(double));
  }
  return out;
}

bool Inference::restoreState(const std::string &bytes, std::string &error) {
  size_t at = 0;
  auto get = [&](void *p, size_t n) {
    if (bytes.size() - at < n)
      return false;
    if (n == 0) // an empty buffer's data() may be null, which memcpy must not get
      return true;
    std::memcpy(p, bytes.data() + at, n);
    at += n;
    return true;
  };
  char magic[sizeof kStateMagic];
  double elbo = 0;
  if (!get(magic, sizeof magic) || std::memcmp(magic, kStateMagic, sizeof magic) != 0 || !get(&elbo, sizeof elbo)) {
    error = "not a ppc state (a damaged checkpoint?)";
    return false;
  }
  for (size_t b = 0; b < plan_.buffers.size(); ++b) {
    bool isInt = plan_.buffers[b].isInt;
    uint64_t n = 0;
    uint64_t expected = isInt ? ints_[b].size() : doubles_[b].size();
    if (!get(&n, sizeof n) || n != expected) {
      error = "the state does not fit this plan (buffer " + plan_.buffers[b].name + ")";
      return false;
    }
    if (plan_.buffers[b].memo)
      continue; // not saved: emptied below
    if (!(isInt ? get(ints_[b].data(), n * sizeof(int64_t)) : get(doubles_[b].data(), n * sizeof(double)))) {
      error = "the state is truncated (buffer " + plan_.buffers[b].name + ")";
      return false;
    }
  }
  if (at != bytes.size()) {
    error = "the state does not fit this plan (extra bytes)";
    return false;
  }
  for (size_t b = 0; b < plan_.buffers.size(); ++b)
    if (plan_.buffers[b].memo)
      std::fill(doubles_[b].begin(), doubles_[b].end(), 0.0);
  elboInIteration_ = elbo;
  return true;
}

std::vector<std::string> Inference::adoptMatchingState(const Inference &old) {
  auto isState = [](const Buffer &b) { return b.doubles.empty() && b.ints.empty() && !b.memo; };
  std::map<std::string, size_t> byName;
  for (size_t b = 0; b < old.plan_.buffers.size(); ++b)
    if (isState(old.plan_.buffers[b]))
      byName[old.plan_.buffers[b].name] = b;
  std::vector<bool> copied(plan_.buffers.size(), false);
  // The user's posteriors (--init, --given) keep the values they were given.
  std::vector<bool> fromUser(plan_.buffers.size(), false);
  for (const Posterior &post : plan_.posteriors)
    if (post.given || post.userInit)
      for (int32_t b : {post.eta, post.stats, post.expRows, post.expRowShifts})
        if (b >= 0) // (their derived tables too: the init block filled them from the user's values)
          fromUser[size_t(b)] = true;
  for (size_t b = 0; b < plan_.buffers.size(); ++b) {
    const Buffer &buf = plan_.buffers[b];
    auto it = byName.find(buf.name);
    if (!isState(buf) || it == byName.end() || fromUser[b])
      continue;
    const Buffer &from = old.plan_.buffers[it->second];
    if (from.isInt != buf.isInt || from.size != buf.size)
      continue;
    if (buf.isInt)
      ints_[b] = old.ints_[it->second];
    else
      doubles_[b] = old.doubles_[it->second];
    bases_[b] = buf.isInt ? static_cast<void *>(ints_[b].data()) : static_cast<void *>(doubles_[b].data());
    copied[b] = true;
  }
  // Memos describe this plan's own earlier calls (its init block may have
  // filled them from other values than those adopted): start them empty.
  for (size_t b = 0; b < plan_.buffers.size(); ++b)
    if (plan_.buffers[b].memo)
      std::fill(doubles_[b].begin(), doubles_[b].end(), 0.0);
  elboInIteration_ = 0;
  std::vector<std::string> kept;
  for (const Posterior &post : plan_.posteriors)
    if (!post.scratch && copied[size_t(post.eta)] && copied[size_t(post.stats)])
      kept.push_back(post.variable->name);
  return kept;
}

std::vector<int64_t> rowIndices(const Plan &plan, const Posterior &post) { return rowIndices(plan, post.rowDims); }

std::vector<int64_t> rowIndices(const Plan &plan, const std::vector<Posterior::RowDim> &dims) {
  // Rows in flat order: element i of a plate of known size follows its
  // parent's row times the size; a ragged plate's elements are consecutive
  // runs (CSR), one per parent row, so walking the parents in order and
  // each one's elements in order gives the rows in order.
  std::vector<std::vector<int64_t>> rows(1); // each row's ids so far
  for (const Posterior::RowDim &d : dims) {
    std::vector<std::vector<int64_t>> next;
    for (size_t parent = 0; parent < rows.size(); ++parent) {
      const int64_t n = d.sizes >= 0 ? plan.buffers[size_t(d.sizes)].ints[parent] : d.size;
      for (int64_t i = 0; i < n; ++i) {
        next.push_back(rows[parent]);
        next.back().push_back(i);
      }
    }
    rows = std::move(next);
  }
  std::vector<int64_t> out;
  if (dims.empty())
    return out;
  out.reserve(rows.size() * dims.size());
  for (const std::vector<int64_t> &r : rows)
    out.insert(out.end(), r.begin(), r.end());
  return out;
}

bool Inference::startFrom(const Posterior &post, const std::vector<double> &eta, std::string &error) {
  if (int64_t(eta.size()) != post.elements * post.width) {
    error = "internal error: the values for '" + post.variable->name + "' do not fit its posterior";
    return false;
  }
  const FactorEntry &entry = factorEntry(post.family);
  const rt::RuntimeSymbol *stats = rt::findRuntimeKernel(entry.statsKernel);
  if (!stats) {
    error = "internal error: no statistics kernel for '" + post.variable->name + "'";
    return false;
  }
  std::vector<double> &e = doubles_[size_t(post.eta)], &s = doubles_[size_t(post.stats)];
  e = eta;
  s.assign(e.size(), 0.0);
  std::vector<rt::KernelValue> args;
  rt::KernelValue v;
  v.i = post.elements;
  args.push_back(v);
  if (entry.statsTakesDimension) {
    v.i = post.dimension;
    args.push_back(v);
  }
  v.p = e.data();
  args.push_back(v);
  v.p = s.data();
  args.push_back(v);
  stats->call(args.data());
  for (double x : s)
    if (!std::isfinite(x)) {
      error = "the posterior given for '" + post.variable->name + "' has statistics that are not finite";
      return false;
    }
  return true;
}

std::vector<rt::PosteriorTable> Inference::predictions(Engine &engine) {
  std::vector<rt::PosteriorTable> out;
  if (plan_.predicted.empty())
    return out;
  engine.runBlock(Plan::Predict, bases_.data());
  for (const Plan::Predicted &pr : plan_.predicted) {
    const FactorEntry &entry = factorEntry(pr.family);
    rt::PosteriorTable t;
    t.variable = pr.variable->name + ".predicted";
    t.family = pr.family;
    t.dimension = pr.dimension;
    t.columns = entry.predictiveColumns(pr.dimension);
    t.overData = true; // a missing datum's
    for (const Posterior::RowDim &d : pr.rowDims)
      t.indexColumns.push_back(d.name);
    const std::vector<int64_t> ids = rowIndices(plan_, pr.rowDims);
    const std::vector<double> &sums = doubles_[size_t(pr.buffer)];
    const size_t n = pr.rowDims.size();
    for (int64_t e : pr.missing) {
      entry.predictive(pr.dimension, sums.data() + e * pr.width, t.values);
      t.indices.insert(t.indices.end(), ids.begin() + long(size_t(e) * n), ids.begin() + long(size_t(e + 1) * n));
    }
    out.push_back(std::move(t));
  }
  return out;
}

std::vector<rt::PosteriorTable> Inference::posteriors() const {
  std::vector<rt::PosteriorTable> out;
  for (const Posterior &post : plan_.posteriors) {
    if (post.scratch)
      continue; // rows of the last element only
    rt::PosteriorTable t;
    t.variable = post.variable->name;
    t.family = post.family;
    t.dimension = post.dimension;
    const std::vector<double> &eta = doubles_[size_t(post.eta)], &stats = doubles_[size_t(post.stats)];
    for (int64_t e = 0; e < post.elements; ++e) {
      const double *n = eta.data() + e * post.width, *s = stats.data() + e * post.width;
      factorEntry(post.family).standardParameters(post.dimension, n, s, t.values);
    }
    for (const Posterior::RowDim &d : post.rowDims)
      t.indexColumns.push_back(d.name);
    for (const ir::Value *plate : post.variable->dims)
      t.overData = t.overData || (plate->def && plate->def->plateKind == ir::Op::PlateKind::Data);
    t.indices = rowIndices(plan_, post);
    out.push_back(std::move(t));
  }
  return out;
}

} // namespace ppc::codegen
