//===- test/fuzz/CsvBindingFuzzer.cpp - a CSV bound to a model's variables ===//
//
// Any bytes as the --infer file of five models (LDA with weights and index
// columns; a Gaussian mixture; a Bernoulli mixture over wide columns; matrix
// factorisation with ids from the data and scaled precisions; Multinomial
// counts with trials from the data; chosen by the first byte): the CSV
// reader and the binder must end in bound data or in errors; so must the
// first pass of a stochastic run (its batches) and each batch's binding.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"
#include "ir/Evaluate.h"
#include "ir/IR.h"
#include "runtime/Binding.h"

namespace {
struct Target {
  std::unique_ptr<ppc::ir::Module> module;
  std::optional<ppc::ir::Evaluation> eval;
  ppc::rt::BindingOptions options;
};

Target make(const std::string &source, std::map<std::string, std::string> params,
            std::map<std::string, std::string> map, std::optional<std::string> weight) {
  Target t;
  t.module = ppc::fuzz::compileOnce(source);
  ppc::DiagnosticEngine diags("model.ppl", source, llvm::errs());
  t.eval = ppc::ir::evaluate(*t.module, params, true, diags);
  if (!t.eval)
    abort();
  t.options.map = std::move(map);
  t.options.weight = std::move(weight);
  return t;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static Target targets[] = {
      make("@Model class LDA(K: Long = 3, V: Long = 10) {\n"
           "  val phi = (0L until K).map(_ => Dirichlet(0.1, V))\n"
           "  val theta = ?.map(_ => Dirichlet(0.1, K))\n"
           "  val x = theta.map(th => ?.map(_ => Categorical(phi)(Categorical(th))))\n}\n",
           {}, {{"theta", "doc"}, {"x", "word"}}, std::string("count")),
      make("@Model class G(K: Long = 2) {\n"
           "  val w = Dirichlet(1.0, K)\n"
           "  val mu = (0L until K).map(_ => Gaussian(0.0, 0.01))\n"
           "  val tau = (0L until K).map(_ => Gamma(1.0, 1.0))\n"
           "  val z = ?.map(_ => Categorical(w))\n"
           "  val x = z.map(k => Gaussian(mu(k), tau(k)))\n}\n",
           {}, {}, std::nullopt),
      make("@Model class B(K: Long = 2, D: Long = 4) {\n"
           "  val w = Dirichlet(1.0, K)\n"
           "  val p = (0L until K).map(_ => (0L until D).map(_ => Beta(1.0, 1.0)))\n"
           "  val x = ?.map(_ => {\n    val z = Categorical(w)\n    (0L until D).map(d => Bernoulli(p(z)(d)))\n  })\n}\n",
           {}, {{"x", "p*"}}, std::nullopt),
      // Ids from the data as indices and known inputs in arithmetic.
      make("@Model class MF(U: Long = 3, I: Long = 4, K: Long = 2) {\n"
           "  val u = (0L until U).map(_ => MvGaussian(0.0, 1.0, K))\n"
           "  val v = (0L until I).map(_ => MvGaussian(0.0, 1.0, K))\n"
           "  val tau = Gamma(1.0, 1.0)\n"
           "  val n = ?\n  val user = n.map(_ => Data)\n  val item = n.map(_ => Data)\n  val s = n.map(_ => Data)\n"
           "  val r = n.map(i => Gaussian(u(user(i)).dot(v(item(i))), tau * s(i)))\n}\n",
           {}, {}, std::nullopt),
      // Rows of counts adding up to trials read from the data.
      make("@Model class M(K: Long = 3) {\n"
           "  val p = Dirichlet(1.0, K)\n  val n = ?\n  val trials = n.map(_ => Data)\n"
           "  val x = n.map(i => Multinomial(trials(i), p))\n}\n",
           {}, {{"x", "x*"}}, std::nullopt),
  };
  if (size == 0)
    return 0;
  Target &t = targets[data[0] % 5];
  ppc::rt::BindingOptions options = t.options;
  options.files = {ppc::fuzz::scratchFile("data.csv", data + 1, size - 1)};
  std::vector<std::string> errors;
  std::optional<ppc::rt::BoundData> bound = ppc::rt::bindData(*t.module, *t.eval, options, errors);
  if (!bound && errors.empty())
    abort(); // a refusal must say why
  // The same bytes as a stochastic run's stream (--svi): cut into batches of
  // 1 to 4 elements by the first pass, then each batch bound on its own.
  std::string why;
  const ppc::ir::Value *plate = ppc::rt::partitionPlate(*t.module, why, true);
  if (!plate)
    return 0;
  options.partition = ppc::rt::Partition{plate, 0, 1, std::nullopt};
  errors.clear();
  std::optional<ppc::rt::BatchPlan> stream =
      ppc::rt::planBatches(*t.module, *t.eval, options, 1 + data[0] / 5 % 4, errors);
  if (!stream) {
    if (errors.empty())
      abort();
    return 0;
  }
  for (size_t b = 0; b < stream->batches.size() && b < 8; ++b) {
    options.partition->batch = stream->batches[b];
    errors.clear();
    if (!ppc::rt::bindData(*t.module, *t.eval, options, errors) && errors.empty())
      abort();
  }
  return 0;
}
