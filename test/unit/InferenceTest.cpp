// End-to-end inference: model text + CSV -> compiled plan -> VMP, checked
// against closed forms (conjugate models: the posterior is exact and the
// ELBO equals the log evidence), published values (Infer.NET, BayesPy) and
// the reference interpreter (JIT = interpreter on every example).
#include "codegen/exec/Executor.h"
#include "codegen/llvm/Jit.h"
#include "codegen/llvm/LLVMCodegen.h"
#include "codegen/plan/Plan.h"
#include "codegen/transforms/PlanPassManager.h"
#include "ir/Diagnostics.h"
#include "ir/Evaluate.h"
#include "ir/IR.h"
#include "passes/PassManager.h"
#include "runtime/Binding.h"
#include "tools/Driver.h"

#include <Eigen/Dense>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <llvm/Support/raw_ostream.h>
#include <numeric>
#include <set>
#include <sstream>
#if defined(__SANITIZE_ADDRESS__)
// The allocator's statistics (libasan; GCC ships no header for them).
extern "C" size_t __sanitizer_get_current_allocated_bytes();
#endif
#include <unistd.h>

using namespace ppc;

namespace {

std::string examplePath(const std::string &rel) { return std::string(PPC_SOURCE_DIR) + "/examples/" + rel; }

std::string readAll(const std::string &path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// A fresh temporary directory for this test process, removed at its exit
/// (the suite leaves nothing behind).
struct TempDir {
  std::string path;
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "ppc-inference-test-XXXXXX").string();
    const char *d = ::mkdtemp(tmpl.data());
    if (!d)
      ADD_FAILURE() << "cannot make a temporary directory from " << tmpl;
    path = d ? d : tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

/// A file with `text` in this process's temporary directory.
std::string tempFile(const std::string &name, const std::string &text) {
  static TempDir dir;
  std::string path = dir.path + "/" + name;
  std::ofstream(path) << text;
  return path;
}

codegen::JitSession &session() {
  static std::unique_ptr<codegen::JitSession> s = [] {
    std::string error;
    auto j = codegen::JitSession::create(error);
    EXPECT_TRUE(j) << error;
    return j;
  }();
  return *s;
}

struct Fit {
  std::string source;
  std::unique_ptr<DiagnosticEngine> diags;
  std::unique_ptr<ir::Module> module;
  std::optional<ir::Evaluation> eval;
  std::optional<rt::BoundData> data;
  std::unique_ptr<codegen::Plan> plan;
  std::unique_ptr<codegen::Engine> engine;
  std::unique_ptr<codegen::Inference> inference;
  rt::RunSummary summary;
  std::string error;
  bool ok = false;

  const codegen::Posterior &posterior(const std::string &name) const {
    for (const codegen::Posterior &p : plan->posteriors)
      if (p.variable->name == name)
        return p;
    ADD_FAILURE() << "no posterior " << name;
    return plan->posteriors.front();
  }
  const double *stats(const std::string &name, int64_t element = 0) const {
    const codegen::Posterior &p = posterior(name);
    return inference->buffer(p.stats).data() + element * p.width;
  }
  const double *eta(const std::string &name, int64_t element = 0) const {
    const codegen::Posterior &p = posterior(name);
    return inference->buffer(p.eta).data() + element * p.width;
  }
  double elbo() const { return summary.elbo.empty() ? NAN : summary.elbo.back(); }
};

struct FitOptions {
  std::map<std::string, std::string> params, map;
  std::optional<std::string> weight;
  std::string engine = "jit";
  codegen::RunOptions run;
  std::string pipeline; ///< empty: the default
  int64_t localIterations = 1;
  bool localRestart = false;
  passes::PassContext::LocalSchedule localSchedule = passes::PassContext::LocalSchedule::Plain;
  double localTolerance = 0;
  /// Plan transformations and lowering choices turned off (--disable-plan-opt names).
  std::vector<std::string> disabled;
  int threads = 1;
};

std::unique_ptr<Fit> fit(const std::string &model, const std::vector<std::string> &files, const FitOptions &o) {
  auto f = std::make_unique<Fit>();
  f->source = model;
  f->diags = std::make_unique<DiagnosticEngine>("model.ppl", f->source, llvm::errs());
  f->module = compileModel(f->source, *f->diags);
  if (!f->module)
    return f;
  f->eval = ir::evaluate(*f->module, o.params, true, *f->diags);
  if (!f->eval)
    return f;
  rt::BindingOptions b;
  b.files = files;
  b.map = o.map;
  b.weight = o.weight;
  std::vector<std::string> errors;
  f->data = rt::bindData(*f->module, *f->eval, b, errors);
  for (auto &e : errors)
    ADD_FAILURE() << e;
  if (!f->data)
    return f;
  passes::PassManager pm;
  std::string error;
  EXPECT_TRUE(pm.addPipeline(o.pipeline.empty() ? passes::defaultPipeline() : o.pipeline, error)) << error;
  passes::PassContext ctx{*f->diags, &llvm::nulls(), {}, {}};
  ctx.randomInitConditions = true;
  ctx.localIterations = o.localIterations;
  ctx.localRestart = o.localRestart;
  ctx.localSchedule = o.localSchedule;
  ctx.localTolerance = o.localTolerance;
  if (!pm.run(*f->module, ctx, llvm::nulls(), llvm::nulls()))
    return f;
  codegen::PlanOptions planOptions;
  for (const std::string &name : o.disabled)
    EXPECT_TRUE(planOptions.disable(name)) << name;
  planOptions.lowering.l2CacheBytes = 2 << 20; // the same plans on every machine
  passes::PassManagerOptions checks;
  checks.verifyEach = true; // every plan of every test passes the plan verifier
  f->plan = codegen::buildPlan(*f->module, *f->eval, *f->data, true, *f->diags, planOptions, checks);
  if (!f->plan)
    return f;
  if (o.engine == "jit")
    f->engine = codegen::createJitEngine(*f->plan, session(), nullptr, f->error);
  else
    f->engine = codegen::createInterpreter(*f->plan);
  if (!f->engine)
    return f;
  f->engine->setThreads(o.threads);
  f->inference = std::make_unique<codegen::Inference>(*f->plan);
  f->inference->initialize(*f->engine, o.run.seed);
  f->ok = f->inference->run(*f->engine, o.run, f->summary, nullptr, f->error);
  return f;
}

/// A one-column CSV.
template <typename T> std::string column(const std::string &name, const std::vector<T> &values) {
  std::string csv = name + "\n";
  for (T v : values)
    csv += std::to_string(v) + "\n";
  return csv;
}

FitOptions tight() {
  FitOptions o;
  o.run.maxIterations = 1000;
  o.run.tolerance = 1e-15;
  return o;
}

double lbeta(double a, double b) { return std::lgamma(a) + std::lgamma(b) - std::lgamma(a + b); }

// ---- conjugate models: exact posteriors, ELBO = log evidence -----------------

TEST(Inference, BetaBernoulliIsExact) {
  std::vector<int> x = {1, 0, 1, 1, 0, 1, 1, 1, 0, 1};
  std::string csv = column("x", x);
  auto f = fit("@Model class M(a: Double = 2.0, b: Double = 3.0) {\n"
               "  val p = Beta(a, b)\n"
               "  val x = ?.map(_ => Bernoulli(p))\n"
               "}\n",
               {tempFile("bb.csv", csv)}, tight());
  ASSERT_TRUE(f->ok) << f->error;
  int heads = std::accumulate(x.begin(), x.end(), 0), tails = int(x.size()) - heads;
  const double *eta = f->eta("p");
  EXPECT_NEAR(eta[0] + 1, 2.0 + heads, 1e-12);
  EXPECT_NEAR(eta[1] + 1, 3.0 + tails, 1e-12);
  double logEvidence = lbeta(2.0 + heads, 3.0 + tails) - lbeta(2.0, 3.0);
  EXPECT_NEAR(f->elbo(), logEvidence, 1e-10);
}

// A model whose observations are all discrete has a log evidence <= 0, so a
// positive ELBO is a numerical failure: the run stops and names them
// (RunOptions::discreteObservations). A Gaussian of tightly clustered data has
// a positive ELBO (densities above 1), which this check would catch were its
// observations declared discrete; the same run without the declaration passes.
TEST(Inference, PositiveElboOfDiscreteObservationsStopsTheRun) {
  const std::string model = "@Model class M(m0: Double = 0.0, p0: Double = 1.0) {\n"
                            "  val mu = Gaussian(m0, p0)\n"
                            "  val x = ?.map(_ => Gaussian(mu, 1000000.0))\n"
                            "}\n";
  const std::string csv = tempFile("tight.csv", column("x", std::vector<double>{0.5, 0.5001, 0.4999, 0.5}));
  FitOptions o;
  o.run.maxIterations = 5;
  o.run.tolerance = 0;
  auto plain = fit(model, {csv}, o);
  ASSERT_TRUE(plain->ok) << plain->error;
  ASSERT_GT(plain->elbo(), 1.0); // a density: the ELBO may be positive
  o.run.discreteObservations = {"x"};
  auto declared = fit(model, {csv}, o);
  EXPECT_FALSE(declared->ok);
  EXPECT_NE(declared->error.find("the ELBO is positive"), std::string::npos) << declared->error;
  EXPECT_NE(declared->error.find("every observation ('x') is discrete"), std::string::npos) << declared->error;
}

TEST(Inference, DiscreteObservationsAreNamedOnlyWhenAllAreDiscrete) {
  const std::string lda = "@Model class L(K: Long = 2, V: Long = 3) {\n"
                          "  val phi = (0L until K).map(_ => Dirichlet(0.1, V))\n"
                          "  val theta = ?.map(_ => Dirichlet(0.1, K))\n"
                          "  val x = theta.map(th => ?.map(_ => Categorical(phi)(Categorical(th))))\n"
                          "}\n";
  DiagnosticEngine d1("lda.ppl", lda, llvm::errs());
  auto m1 = compileModel(lda, d1);
  ASSERT_TRUE(m1);
  EXPECT_EQ(rt::discreteObservations(*m1), std::vector<std::string>{"x"});
  const std::string gauss = "@Model class G() {\n  val mu = Gaussian(0.0, 1.0)\n  val y = ?.map(_ => Gaussian(mu, 1.0))\n}\n";
  DiagnosticEngine d2("g.ppl", gauss, llvm::errs());
  auto m2 = compileModel(gauss, d2);
  ASSERT_TRUE(m2);
  EXPECT_TRUE(rt::discreteObservations(*m2).empty());
}

TEST(Inference, DirichletCategoricalIsExact) {
  std::vector<int> x = {0, 2, 2, 1, 2, 0, 2, 3, 2, 2, 1};
  std::string csv = column("x", x);
  auto f = fit("@Model class M(K: Long = 4) {\n"
               "  val p = Dirichlet(1.5, K)\n"
               "  val x = ?.map(_ => Categorical(p))\n"
               "}\n",
               {tempFile("dc.csv", csv)}, tight());
  ASSERT_TRUE(f->ok) << f->error;
  std::vector<double> counts(4, 0);
  for (int v : x)
    counts[size_t(v)] += 1;
  double logEvidence = std::lgamma(4 * 1.5) - std::lgamma(4 * 1.5 + double(x.size()));
  for (int k = 0; k < 4; ++k) {
    EXPECT_NEAR(f->eta("p")[k] + 1, 1.5 + counts[size_t(k)], 1e-12);
    logEvidence += std::lgamma(1.5 + counts[size_t(k)]) - std::lgamma(1.5);
  }
  EXPECT_NEAR(f->elbo(), logEvidence, 1e-10);
}

TEST(Inference, GammaPoissonIsExact) {
  std::vector<int> x = {3, 0, 5, 2, 2, 7, 1, 4};
  std::string csv = column("x", x);
  auto f = fit("@Model class M(a: Double = 2.0, b: Double = 1.5) {\n"
               "  val l = Gamma(a, b)\n"
               "  val x = ?.map(_ => Poisson(l))\n"
               "}\n",
               {tempFile("gp.csv", csv)}, tight());
  ASSERT_TRUE(f->ok) << f->error;
  double a = 2.0, b = 1.5, n = double(x.size()), s = 0, logFact = 0;
  for (int v : x) {
    s += v;
    logFact += std::lgamma(v + 1.0);
  }
  const double *eta = f->eta("l");
  EXPECT_NEAR(eta[1] + 1, a + s, 1e-12);  // shape
  EXPECT_NEAR(-eta[0], b + n, 1e-12);     // rate
  double logEvidence = a * std::log(b) - std::lgamma(a) + std::lgamma(a + s) - (a + s) * std::log(b + n) - logFact;
  EXPECT_NEAR(f->elbo(), logEvidence, 1e-10);
}

// Multivariate: two points in R^2 with a known isotropic precision; the mean
// vector's posterior is exact, and the ELBO is the log evidence: each
// coordinate of the data is N(m0 1, I/c + 1 1^T/p0) on its own.
TEST(Inference, MvGaussianMeanWithKnownPrecisionIsExact) {
  const double X[3][2] = {{0.3, -1.2}, {2.0, 0.5}, {1.1, 0.4}};
  const double m0 = 0.5, p0 = 0.2, c = 3.0;
  std::string csv = "a,b\n";
  for (auto &x : X)
    csv += std::to_string(x[0]) + "," + std::to_string(x[1]) + "\n";
  FitOptions o = tight();
  o.map["x"] = "a,b";
  auto f = fit("@Model class M() {\n"
               "  val mu = MvGaussian(0.5, 0.2, 2)\n"
               "  val x = ?.map(_ => MvGaussian(mu, 3.0))\n"
               "}\n",
               {tempFile("mvknown.csv", csv)}, o);
  ASSERT_TRUE(f->ok) << f->error;
  const double n = 3, prec = p0 + n * c;
  double logEvidence = 0;
  for (int d = 0; d < 2; ++d) {
    double sum = 0;
    Eigen::MatrixXd C = Eigen::MatrixXd::Identity(3, 3) / c + Eigen::MatrixXd::Constant(3, 3, 1.0 / p0);
    Eigen::VectorXd r(3);
    for (int i = 0; i < 3; ++i) {
      sum += X[i][d];
      r[i] = X[i][d] - m0;
    }
    EXPECT_NEAR(f->stats("mu")[d], (p0 * m0 + c * sum) / prec, 1e-12);
    Eigen::LLT<Eigen::MatrixXd> llt(C);
    double logdet = 2 * Eigen::MatrixXd(llt.matrixL()).diagonal().array().log().sum();
    logEvidence += -0.5 * (3 * std::log(2 * M_PI) + logdet + r.dot(llt.solve(r)));
  }
  // Covariance of q(mu): I / prec.
  const double *s = f->stats("mu");
  EXPECT_NEAR(s[2] - s[0] * s[0], 1 / prec, 1e-12);
  EXPECT_NEAR(s[3] - s[0] * s[1], 0.0, 1e-12);
  EXPECT_NEAR(f->elbo(), logEvidence, 1e-10);
}

// A Wishart precision with a known mean: q(L) = Wishart(nu + n, (S^-1 + A)^-1)
// with A = sum (x - m)(x - m)^T, and the ELBO is the log evidence
//   -nD/2 log pi + log G_D((nu+n)/2) - log G_D(nu/2) + (nu+n)/2 log|S_n| - nu/2 log|S|.
TEST(Inference, WishartPrecisionWithKnownMeanIsExact) {
  const double X[4][2] = {{0.3, -1.2}, {2.0, 0.5}, {1.1, 0.4}, {-0.7, 1.9}};
  const double m = 1.0, nu = 4.0, s = 0.5;
  std::string csv = "x0,x1\n";
  Eigen::Matrix2d A = Eigen::Matrix2d::Zero();
  for (auto &x : X) {
    csv += std::to_string(x[0]) + "," + std::to_string(x[1]) + "\n";
    Eigen::Vector2d r(x[0] - m, x[1] - m);
    A += r * r.transpose();
  }
  auto f = fit("@Model class M() {\n"
               "  val L = Wishart(4.0, 0.5, 2)\n"
               "  val x = ?.map(_ => MvGaussian(1.0, L))\n"
               "}\n",
               {tempFile("wknown.csv", csv)}, tight());
  ASSERT_TRUE(f->ok) << f->error;
  const double n = 4;
  Eigen::Matrix2d Sn = (Eigen::Matrix2d::Identity() / s + A).inverse();
  const double *st = f->stats("L");
  for (int i = 0; i < 4; ++i)
    EXPECT_NEAR(st[i], (nu + n) * Sn(i / 2, i % 2), 1e-12);
  auto lmvgamma = [](double a) { return 0.5 * std::log(M_PI) + std::lgamma(a) + std::lgamma(a - 0.5); };
  double logEvidence = -n * std::log(M_PI) + lmvgamma((nu + n) / 2) - lmvgamma(nu / 2) +
                       (nu + n) / 2 * std::log(Sn.determinant()) - nu / 2 * 2 * std::log(s);
  EXPECT_NEAR(f->elbo(), logEvidence, 1e-10);
}

// ---- known inputs (Data): a constant per element -------------------------------

// y_i ~ N(mu, s_i) with known precisions s_i: q(mu) is exact, with precision
// p0 + sum s and mean (p0 m0 + sum s y) / (p0 + sum s), and the ELBO is the
// log evidence of y ~ N(m0 1, diag(1 / s) + 1 1^T / p0).
TEST(Inference, KnownPrecisionPerRowIsExact) {
  const std::vector<double> s = {1.0, 4.0, 0.25, 2.5}, y = {2.0, 3.0, 1.0, -0.5};
  const double m0 = 0.5, p0 = 0.1;
  std::string csv = "prec,y\n";
  for (size_t i = 0; i < y.size(); ++i)
    csv += std::to_string(s[i]) + "," + std::to_string(y[i]) + "\n";
  auto f = fit("@Model class M(m0: Double = 0.5, p0: Double = 0.1) {\n"
               "  val mu = Gaussian(m0, p0)\n"
               "  val prec = ?.map(_ => Data)\n"
               "  val y = prec.map(t => Gaussian(mu, t))\n"
               "}\n",
               {tempFile("knownprec.csv", csv)}, tight());
  ASSERT_TRUE(f->ok) << f->error;
  const size_t n = y.size();
  double P = p0, h = p0 * m0;
  Eigen::MatrixXd C = Eigen::MatrixXd::Constant(Eigen::Index(n), Eigen::Index(n), 1.0 / p0);
  Eigen::VectorXd r = Eigen::VectorXd::Zero(Eigen::Index(n));
  for (size_t i = 0; i < n; ++i) {
    P += s[i];
    h += s[i] * y[i];
    C(Eigen::Index(i), Eigen::Index(i)) += 1.0 / s[i];
    r[Eigen::Index(i)] = y[i] - m0;
  }
  EXPECT_NEAR(f->stats("mu")[0], h / P, 1e-12);
  EXPECT_NEAR(f->stats("mu")[1] - f->stats("mu")[0] * f->stats("mu")[0], 1 / P, 1e-12);
  Eigen::LLT<Eigen::MatrixXd> llt(C);
  const double logdet = 2 * Eigen::MatrixXd(llt.matrixL()).diagonal().array().log().sum();
  EXPECT_NEAR(f->elbo(), -0.5 * (double(n) * std::log(2 * M_PI) + logdet + r.dot(llt.solve(r))), 1e-10);
}

// y_i ~ N(m_i, tau) with known means m_i and tau ~ Gamma(a, b): q(tau) =
// Gamma(a + n/2, b + SS/2), SS = sum (y - m)^2, and the ELBO is the log
// evidence b^a / G(a) G(a + n/2) / (b + SS/2)^(a + n/2) (2 pi)^(-n/2).
TEST(Inference, KnownMeansPerRowWithGammaPrecisionIsExact) {
  const std::vector<double> m = {1.0, 4.0, -1.0, 0.5, 2.0}, y = {2.0, 3.0, 1.0, 0.25, 2.5};
  const double a = 2.0, b = 1.0;
  std::string csv = "m,y\n";
  double ss = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    csv += std::to_string(m[i]) + "," + std::to_string(y[i]) + "\n";
    ss += (y[i] - m[i]) * (y[i] - m[i]);
  }
  auto f = fit("@Model class M(a: Double = 2.0, b: Double = 1.0) {\n"
               "  val tau = Gamma(a, b)\n"
               "  val n = ?\n"
               "  val m = n.map(_ => Data)\n"
               "  val y = n.map(i => Gaussian(m(i), tau))\n"
               "}\n",
               {tempFile("knownmeans.csv", csv)}, tight());
  ASSERT_TRUE(f->ok) << f->error;
  const double n = double(y.size()), shape = a + n / 2, rate = b + ss / 2;
  EXPECT_NEAR(f->eta("tau")[1] + 1, shape, 1e-12);
  EXPECT_NEAR(-f->eta("tau")[0], rate, 1e-12);
  const double logEvidence =
      a * std::log(b) - std::lgamma(a) + std::lgamma(shape) - shape * std::log(rate) - n / 2 * std::log(2 * M_PI);
  EXPECT_NEAR(f->elbo(), logEvidence, 1e-10);
}

// x_i ~ MvGaussian(m_i, L) with known mean vectors m_i (Data(2)) and a
// Wishart L: q(L) = Wishart(nu + n, (S^-1 + A)^-1), A = sum (x - m)(x - m)^T.
TEST(Inference, KnownMeanVectorsPerRowWithWishartPrecisionIsExact) {
  const double X[4][2] = {{0.3, -1.2}, {2.0, 0.5}, {1.1, 0.4}, {-0.7, 1.9}};
  const double M[4][2] = {{0.0, -1.0}, {1.5, 1.0}, {1.0, 0.0}, {0.0, 2.0}};
  const double nu = 4.0, s = 0.5, n = 4;
  std::string csv = "m0,m1,x0,x1\n";
  Eigen::Matrix2d A = Eigen::Matrix2d::Zero();
  for (int i = 0; i < 4; ++i) {
    csv += std::to_string(M[i][0]) + "," + std::to_string(M[i][1]) + "," + std::to_string(X[i][0]) + "," +
           std::to_string(X[i][1]) + "\n";
    Eigen::Vector2d r(X[i][0] - M[i][0], X[i][1] - M[i][1]);
    A += r * r.transpose();
  }
  auto f = fit("@Model class M(D: Long = 2) {\n"
               "  val L = Wishart(4.0, 0.5, D)\n"
               "  val m = ?.map(_ => Data(D))\n"
               "  val x = m.map(mi => MvGaussian(mi, L))\n"
               "}\n",
               {tempFile("knownmeanvectors.csv", csv)}, tight());
  ASSERT_TRUE(f->ok) << f->error;
  Eigen::Matrix2d Sn = (Eigen::Matrix2d::Identity() / s + A).inverse();
  for (int i = 0; i < 4; ++i)
    EXPECT_NEAR(f->stats("L")[i], (nu + n) * Sn(i / 2, i % 2), 1e-12);
  auto lmvgamma = [](double a) { return 0.5 * std::log(M_PI) + std::lgamma(a) + std::lgamma(a - 0.5); };
  const double logEvidence = -n * std::log(M_PI) + lmvgamma((nu + n) / 2) - lmvgamma(nu / 2) +
                             (nu + n) / 2 * std::log(Sn.determinant()) - nu / 2 * 2 * std::log(s);
  EXPECT_NEAR(f->elbo(), logEvidence, 1e-10);
}

// x_i ~ Binomial(n_i, p) with trials from the data and p ~ Beta(a, b):
// q(p) = Beta(a + sum x, b + sum (n - x)), and the ELBO is the log evidence
// sum log C(n_i, x_i) + log B(a + sum x, b + sum (n - x)) - log B(a, b).
TEST(Inference, BetaBinomialWithTrialsFromDataIsExact) {
  const std::vector<int> n = {10, 5, 20, 1, 7}, x = {3, 0, 9, 1, 7};
  const double a = 1.5, b = 2.0;
  std::string csv = "trials,x\n";
  double successes = 0, failures = 0, logChoose = 0;
  for (size_t i = 0; i < n.size(); ++i) {
    csv += std::to_string(n[i]) + "," + std::to_string(x[i]) + "\n";
    successes += x[i];
    failures += n[i] - x[i];
    logChoose += std::lgamma(n[i] + 1.0) - std::lgamma(x[i] + 1.0) - std::lgamma(n[i] - x[i] + 1.0);
  }
  auto f = fit("@Model class M(a: Double = 1.5, b: Double = 2.0) {\n"
               "  val p = Beta(a, b)\n"
               "  val n = ?\n"
               "  val trials = n.map(_ => Data)\n"
               "  val x = n.map(i => Binomial(trials(i), p))\n"
               "}\n",
               {tempFile("betabinomial.csv", csv)}, tight());
  ASSERT_TRUE(f->ok) << f->error;
  EXPECT_NEAR(f->eta("p")[0] + 1, a + successes, 1e-12);
  EXPECT_NEAR(f->eta("p")[1] + 1, b + failures, 1e-12);
  EXPECT_NEAR(f->elbo(), logChoose + lbeta(a + successes, b + failures) - lbeta(a, b), 1e-10);
}

// The same with constant trials equals the Bernoulli model when n = 1.
TEST(Inference, BinomialOfOneTrialIsBernoulli) {
  const std::vector<int> x = {1, 0, 1, 1, 0, 1};
  const std::string csv = tempFile("binomialone.csv", column("x", x));
  auto binomial = fit("@Model class M() {\n  val p = Beta(2.0, 3.0)\n  val x = ?.map(_ => Binomial(1, p))\n}\n",
                      {csv}, tight());
  auto bernoulli = fit("@Model class M() {\n  val p = Beta(2.0, 3.0)\n  val x = ?.map(_ => Bernoulli(p))\n}\n",
                       {csv}, tight());
  ASSERT_TRUE(binomial->ok && bernoulli->ok) << binomial->error << bernoulli->error;
  EXPECT_NEAR(binomial->elbo(), bernoulli->elbo(), 1e-12);
  EXPECT_NEAR(binomial->eta("p")[0], bernoulli->eta("p")[0], 1e-12);
}

// WinBUGS's pumps with fixed hyperparameters: x_i ~ Poisson(rate_i t_i),
// rate_i ~ Gamma(a, b), exposure t_i from the data. q(rate_i) = Gamma(a +
// x_i, b + t_i) exactly, and the ELBO is the log evidence, the sum over
// pumps of a log b - lgamma(a) + lgamma(a + x) - (a + x) log(b + t) + x log t
// - lgamma(x + 1).
TEST(Inference, PumpsWithExposuresAreExact) {
  const std::vector<double> x = {5, 1, 5, 14, 3, 19, 1, 1, 4, 22};
  const std::vector<double> t = {94.3, 15.7, 62.9, 126, 5.24, 31.4, 1.05, 1.05, 2.1, 10.5};
  const double a = 1.5, b = 0.5;
  std::string csv = "t,x\n";
  for (size_t i = 0; i < x.size(); ++i)
    csv += std::to_string(t[i]) + "," + std::to_string(x[i]) + "\n";
  auto f = fit("@Model class Pumps(a: Double = 1.5, b: Double = 0.5) {\n"
               "  val n = ?\n"
               "  val t = n.map(_ => Data)\n"
               "  val rate = n.map(_ => Gamma(a, b))\n"
               "  val x = n.map(i => Poisson(rate(i) * t(i)))\n"
               "}\n",
               {tempFile("pumps.csv", csv)}, tight());
  ASSERT_TRUE(f->ok) << f->error;
  double logEvidence = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_NEAR(f->eta("rate", int64_t(i))[1] + 1, a + x[i], 1e-12) << i;
    EXPECT_NEAR(-f->eta("rate", int64_t(i))[0], b + t[i], 1e-12) << i;
    logEvidence += a * std::log(b) - std::lgamma(a) + std::lgamma(a + x[i]) - (a + x[i]) * std::log(b + t[i]) +
                   x[i] * std::log(t[i]) - std::lgamma(x[i] + 1);
  }
  EXPECT_NEAR(f->elbo(), logEvidence, 1e-10);
}

// One shared rate, the exposure on the left or given as a second argument:
// q(rate) = Gamma(a + sum x, b + sum t) in every spelling.
TEST(Inference, SharedRateWithExposuresInEverySpelling) {
  const std::string csv = tempFile("exposures.csv", "t,x\n2.0,3\n0.5,0\n4.0,9\n");
  for (const char *call : {"Poisson(rate * t(i))", "Poisson(t(i) * rate)", "Poisson(rate, t(i))"}) {
    SCOPED_TRACE(call);
    auto f = fit(std::string("@Model class M() {\n  val rate = Gamma(2.0, 1.0)\n  val n = ?\n"
                             "  val t = n.map(_ => Data)\n  val x = n.map(i => ") +
                     call + ")\n}\n",
                 {csv}, tight());
    ASSERT_TRUE(f->ok) << f->error;
    EXPECT_NEAR(f->eta("rate")[1] + 1, 2.0 + 12, 1e-12);
    EXPECT_NEAR(-f->eta("rate")[0], 1.0 + 6.5, 1e-12);
  }
}

// A mixture whose rows have known precisions: with every precision equal to
// c it runs exactly as the model with the constant c (the same seed, the same
// trace); with different ones the trace differs and never decreases.
TEST(Inference, KnownPrecisionsInAMixture) {
  const std::string withData = "@Model class M(K: Long = 2) {\n"
                               "  val w = Dirichlet(1.0, K)\n"
                               "  val mu = (0L until K).map(_ => Gaussian(0.0, 0.01))\n"
                               "  val n = ?\n"
                               "  val prec = n.map(_ => Data)\n"
                               "  val z = n.map(_ => Categorical(w))\n"
                               "  val y = n.map(i => Gaussian(mu(z(i)), prec(i)))\n"
                               "}\n";
  const std::string constant = "@Model class M(K: Long = 2) {\n"
                               "  val w = Dirichlet(1.0, K)\n"
                               "  val mu = (0L until K).map(_ => Gaussian(0.0, 0.01))\n"
                               "  val z = ?.map(_ => Categorical(w))\n"
                               "  val y = z.map(k => Gaussian(mu(k), 2.0))\n"
                               "}\n";
  std::string same = "prec,y\n", varied = "prec,y\n";
  for (int i = 0; i < 40; ++i) {
    const double y = (i % 2 ? 3.0 : -3.0) + 0.1 * std::sin(i * 1.7);
    same += "2.0," + std::to_string(y) + "\n";
    varied += std::to_string(i % 3 ? 0.5 : 8.0) + "," + std::to_string(y) + "\n";
  }
  FitOptions o;
  o.run.maxIterations = 30;
  o.run.tolerance = 0;
  auto a = fit(withData, {tempFile("mixsame.csv", same)}, o);
  auto b = fit(constant, {tempFile("mixconst.csv", same)}, o);
  auto c = fit(withData, {tempFile("mixvaried.csv", varied)}, o);
  ASSERT_TRUE(a->ok && b->ok && c->ok) << a->error << b->error << c->error;
  ASSERT_EQ(a->summary.elbo.size(), b->summary.elbo.size());
  for (size_t i = 0; i < a->summary.elbo.size(); ++i)
    EXPECT_NEAR(a->summary.elbo[i], b->summary.elbo[i], 1e-9 * std::fabs(b->summary.elbo[i])) << i;
  EXPECT_GT(std::fabs(c->elbo() - a->elbo()), 1.0);
  for (size_t i = 1; i < c->summary.elbo.size(); ++i)
    EXPECT_GE(c->summary.elbo[i], c->summary.elbo[i - 1] - 1e-9 * std::fabs(c->summary.elbo[i])) << i;
}

// ---- published values -----------------------------------------------------------

// Infer.NET's VMP test "Gaussian with unknown mean and precision, one point".
TEST(Inference, InferNetGaussianOnePoint) {
  auto f = fit("@Model class M() {\n"
               "  val prec = Gamma(1.0, 1.0)\n"
               "  val m = Gaussian(0.0, 10.0)\n"
               "  val x = ?.map(_ => Gaussian(m, prec))\n"
               "}\n",
               {tempFile("one.csv", "x\n0.5\n")}, tight());
  ASSERT_TRUE(f->ok) << f->error;
  EXPECT_NEAR(f->stats("prec")[0], 1.31365592, 1e-6);
  EXPECT_NEAR(f->stats("prec")[1], -0.09616110, 1e-6);
  EXPECT_NEAR(f->stats("m")[0], 0.05805621, 1e-6);
  EXPECT_NEAR(f->stats("m")[1], 0.09175928, 1e-6);
  EXPECT_NEAR(f->elbo(), -1.2592065, 1e-6);
}

// BayesPy's quickstart: converged lower bound -58.20288.
TEST(Inference, BayesPyQuickstart) {
  const double z[] = {1.62434536, -0.61175641, -0.52817175, -1.07296862, 0.86540763,
                      -2.3015387, 1.74481176,  -0.7612069,  0.3190391,   -0.24937038};
  std::string csv = "x\n";
  for (double v : z) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g\n", 5 + 10 * v);
    csv += buf;
  }
  auto f = fit("@Model class M() {\n"
               "  val mu = Gaussian(0.0, 1e-6)\n"
               "  val tau = Gamma(1e-6, 1e-6)\n"
               "  val x = ?.map(_ => Gaussian(mu, tau))\n"
               "}\n",
               {tempFile("bayespy.csv", csv)}, tight());
  ASSERT_TRUE(f->ok) << f->error;
  EXPECT_NEAR(f->elbo(), -58.20288, 1e-5);
}

// The clinical trial of the examples: exact Bayes over two conjugate branches.
TEST(Inference, ClinicalTrialModelSelection) {
  FitOptions o = tight();
  o.map["g"] = "group";
  auto f = fit(readAll(examplePath("clinical_trial.ppl")), {examplePath("data/clinical_trial.csv")}, o);
  ASSERT_TRUE(f->ok) << f->error;
  EXPECT_NEAR(f->stats("effective")[0], 2772.0 / 3672.0, 1e-12);
  // log p(data) = log(0.5 B(5,2) B(2,5) + 0.5 B(6,6)) with Beta(1, 1) priors.
  double logEvidence = std::log(0.5 * std::exp(lbeta(5, 2) + lbeta(2, 5)) + 0.5 * std::exp(lbeta(6, 6)));
  EXPECT_NEAR(f->elbo(), logEvidence, 1e-10);
}

// ---- mixtures ---------------------------------------------------------------------

TEST(Inference, OldFaithfulHasTwoClusters) {
  auto f = fit(readAll(examplePath("gaussian_mixture.ppl")), {examplePath("data/faithful.csv")}, FitOptions{});
  ASSERT_TRUE(f->ok) << f->error;
  EXPECT_TRUE(f->summary.converged);
  double m0 = f->stats("eruptionMean", 0)[0], m1 = f->stats("eruptionMean", 1)[0];
  double w0 = f->stats("waitingMean", 0)[0], w1 = f->stats("waitingMean", 1)[0];
  if (m0 > m1) {
    std::swap(m0, m1);
    std::swap(w0, w1);
  }
  // The short and the long eruptions (R's faithful: about 2.04 / 54.5 and 4.29 / 80.0).
  EXPECT_NEAR(m0, 2.04, 0.05);
  EXPECT_NEAR(w0, 54.5, 0.5);
  EXPECT_NEAR(m1, 4.29, 0.05);
  EXPECT_NEAR(w1, 80.0, 0.5);
}

// In one dimension a Wishart(2a, 1/(2b)) precision is a Gamma(a, b) one and
// MvGaussian is Gaussian: the full-covariance mixture on one column of Old
// Faithful must run the univariate mixture's iterations exactly.
TEST(Inference, OneDimensionalFullMixtureIsTheUnivariateMixture) {
  FitOptions o;
  o.run.maxIterations = 30;
  o.run.tolerance = 0;
  auto uni = fit("@Model class M(K: Long = 2) {\n"
                 "  val weights = Dirichlet(1.0, K)\n"
                 "  val mean = (0L until K).map(_ => Gaussian(3.5, 0.1))\n"
                 "  val prec = (0L until K).map(_ => Gamma(1.5, 2.0))\n"
                 "  val cluster = ?.map(_ => Categorical(weights))\n"
                 "  val eruptions = cluster.map(z => Gaussian(mean(z), prec(z)))\n"
                 "}\n",
                 {examplePath("data/faithful.csv")}, o);
  o.map["eruptions"] = "eruptions";
  auto full = fit("@Model class M(K: Long = 2) {\n"
                  "  val weights = Dirichlet(1.0, K)\n"
                  "  val mean = (0L until K).map(_ => MvGaussian(3.5, 0.1, 1))\n"
                  "  val prec = (0L until K).map(_ => Wishart(3.0, 0.25, 1))\n"
                  "  val cluster = ?.map(_ => Categorical(weights))\n"
                  "  val eruptions = cluster.map(z => MvGaussian(mean(z), prec(z)))\n"
                  "}\n",
                  {examplePath("data/faithful.csv")}, o);
  ASSERT_TRUE(uni->ok) << uni->error;
  ASSERT_TRUE(full->ok) << full->error;
  ASSERT_EQ(uni->summary.elbo.size(), full->summary.elbo.size());
  for (size_t i = 0; i < uni->summary.elbo.size(); ++i)
    EXPECT_NEAR(full->summary.elbo[i], uni->summary.elbo[i], 1e-9 * std::abs(uni->summary.elbo[i])) << i;
  for (int k = 0; k < 2; ++k) {
    EXPECT_NEAR(full->stats("mean", k)[0], uni->stats("mean", k)[0], 1e-9);
    EXPECT_NEAR(full->stats("prec", k)[0], uni->stats("prec", k)[0], 1e-9);
  }
}

// Full covariance on both columns: the two eruption types, now with their
// correlation (R's faithful: about 2.04 / 54.5 and 4.29 / 80.0).
TEST(Inference, OldFaithfulFullCovarianceHasTwoClusters) {
  FitOptions o;
  o.map["x"] = "eruptions,waiting";
  o.params = {{"K", "2"}};
  auto f = fit(readAll(examplePath("gaussian_mixture_full.ppl")), {examplePath("data/faithful.csv")}, o);
  ASSERT_TRUE(f->ok) << f->error;
  EXPECT_TRUE(f->summary.converged);
  const double *a = f->stats("mean", 0), *b = f->stats("mean", 1);
  if (a[0] > b[0])
    std::swap(a, b);
  EXPECT_NEAR(a[0], 2.04, 0.05);
  EXPECT_NEAR(a[1], 54.5, 0.5);
  EXPECT_NEAR(b[0], 4.29, 0.05);
  EXPECT_NEAR(b[1], 80.0, 0.5);
  // Within each cluster, duration and waiting time are positively correlated:
  // the precision matrix's off-diagonal entry is negative.
  for (int k = 0; k < 2; ++k)
    EXPECT_LT(f->stats("precision", k)[1], 0.0);
}

// codegen/transforms/BatchStatistics.cpp: the data-plate sums of a full-covariance
// mixture as weighted moments and moment products give the iterations of the
// call-per-(datum, case) plan, to rounding, on 64-dimensional digits.
TEST(Inference, BatchedGaussianStatisticsEqualPerDatumCalls) {
  FitOptions o;
  o.map["x"] = "p*";
  o.params = {{"K", "4"}, {"D", "64"}, {"nu0", "64"}, {"s0", "0.01"}, {"p0", "0.01"}};
  o.run.maxIterations = 8;
  o.run.tolerance = 0;
  auto batched = fit(readAll(examplePath("gaussian_mixture_full.ppl")), {examplePath("data/digits_counts.csv")}, o);
  o.disabled.push_back("batch-statistics");
  auto perDatum = fit(readAll(examplePath("gaussian_mixture_full.ppl")), {examplePath("data/digits_counts.csv")}, o);
  ASSERT_TRUE(batched->ok) << batched->error;
  ASSERT_TRUE(perDatum->ok) << perDatum->error;
  std::string plan = codegen::printPlan(*batched->plan), plain = codegen::printPlan(*perDatum->plan);
  EXPECT_NE(plan.find("ppc_gaussian_weighted_moments"), std::string::npos);
  EXPECT_NE(plan.find("ppc_gaussian_moment_products"), std::string::npos);
  EXPECT_EQ(plan.find("ppc_mvgaussian_avglogfactor_obs_n"), std::string::npos);
  EXPECT_NE(plain.find("ppc_mvgaussian_avglogfactor_obs_n"), std::string::npos);
  // One set of moment buffers, memoized on the weights, for the iteration and
  // the ELBO: the ELBO's moments are those the next iteration starts with.
  auto count = [&](const std::string &what) {
    size_t n = 0;
    for (size_t at = plan.find(what); at != std::string::npos; at = plan.find(what, at + 1))
      ++n;
    return n;
  };
  EXPECT_EQ(count("(memo)\n"), 1u);
  EXPECT_EQ(count("ppc_gaussian_weighted_moments("), 2u);
  EXPECT_EQ(count("&data.x.memo."), 2u);
  ASSERT_EQ(batched->summary.elbo.size(), perDatum->summary.elbo.size());
  for (size_t i = 0; i < batched->summary.elbo.size(); ++i)
    EXPECT_NEAR(batched->summary.elbo[i], perDatum->summary.elbo[i], 1e-9 * std::abs(perDatum->summary.elbo[i])) << i;
  for (size_t i = 1; i < batched->summary.elbo.size(); ++i)
    EXPECT_GE(batched->summary.elbo[i], batched->summary.elbo[i - 1] - 1e-9 * std::abs(batched->summary.elbo[i]));
}

TEST(Inference, SameSeedSameAnswerOtherSeedOtherStart) {
  FitOptions o;
  o.run.maxIterations = 3;
  auto a = fit(readAll(examplePath("gaussian_mixture.ppl")), {examplePath("data/faithful.csv")}, o);
  auto b = fit(readAll(examplePath("gaussian_mixture.ppl")), {examplePath("data/faithful.csv")}, o);
  o.run.seed = 7;
  auto c = fit(readAll(examplePath("gaussian_mixture.ppl")), {examplePath("data/faithful.csv")}, o);
  ASSERT_TRUE(a->ok && b->ok && c->ok);
  EXPECT_EQ(a->summary.elbo, b->summary.elbo);
  EXPECT_NE(a->summary.elbo, c->summary.elbo);
}

// ---- JIT = interpreter on every example -------------------------------------------

struct Example {
  std::string model;
  std::vector<std::string> files;
  std::map<std::string, std::string> map, params;
  std::optional<std::string> weight;
};

std::vector<Example> examples() {
  std::string coins = "x\n", noise = "y\n";
  for (int i = 0; i < 40; ++i)
    coins += std::to_string((i * 7 + i / 3) % 3 == 0 ? 1 : 0) + "\n";
  for (int i = 0; i < 60; ++i)
    noise += std::to_string(i % 3 == 2 ? 5.0 + 0.1 * (i % 7) : 0.3 * std::sin(double(i))) + "\n";
  return {
      {"lda.ppl", {examplePath("data/ap_small_d200_w500.csv")}, {{"theta", "doc"}, {"x", "word"}},
       {{"V", "500"}, {"K", "5"}}, "count"},
      {"dirichlet_multinomial_mixture.ppl", {examplePath("data/ap_small_d200_w500.csv")},
       {{"z", "doc"}, {"x", "word"}}, {{"V", "500"}}, "count"},
      {"gaussian_mixture.ppl", {examplePath("data/faithful.csv")}, {}, {}, std::nullopt},
      {"gaussian_mixture_full.ppl", {examplePath("data/faithful.csv")}, {{"x", "eruptions,waiting"}}, {}, std::nullopt},
      {"gaussian_mixture_full.ppl", {examplePath("data/digits_counts.csv")}, {{"x", "p*"}},
       {{"K", "4"}, {"D", "64"}, {"nu0", "64"}, {"s0", "0.01"}, {"p0", "0.01"}}, std::nullopt},
      {"clinical_trial.ppl", {examplePath("data/clinical_trial.csv")}, {{"g", "group"}}, {}, std::nullopt},
      {"bernoulli_mixture.ppl", {examplePath("data/digits_binary.csv")}, {{"x", "p*"}}, {}, std::nullopt},
      {"poisson_gamma.ppl", {examplePath("data/digits_counts.csv")}, {{"x", "p*"}}, {}, std::nullopt},
      {"two_coins.ppl", {tempFile("coins.csv", coins)}, {}, {}, std::nullopt},
      {"noise_models.ppl", {tempFile("noise.csv", noise)}, {}, {}, std::nullopt},
      {"pumps.ppl", {examplePath("data/pumps.csv")}, {}, {}, std::nullopt},
  };
}

/// An example's run: its mapping, parameters and weights, 5 iterations, no
/// tolerance.
FitOptions exampleOptions(const Example &ex, int threads = 1) {
  FitOptions o;
  o.map = ex.map;
  o.params = ex.params;
  o.weight = ex.weight;
  o.threads = threads;
  o.run.maxIterations = 5;
  o.run.tolerance = 0;
  return o;
}

/// Two runs of one model agree: ELBO traces to `elboTol` relative, every
/// posterior's statistics entry by entry to `statsTol` relative (0: equal);
/// scratch posteriors (the last element's rows only) only if `withScratch`.
void expectSameRun(const Fit &a, const Fit &b, double elboTol, double statsTol, bool withScratch) {
  ASSERT_EQ(a.summary.elbo.size(), b.summary.elbo.size());
  for (size_t i = 0; i < a.summary.elbo.size(); ++i)
    EXPECT_NEAR(a.summary.elbo[i], b.summary.elbo[i], elboTol * std::abs(b.summary.elbo[i]));
  for (const codegen::Posterior &p : a.plan->posteriors) {
    if (p.scratch && !withScratch)
      continue;
    const std::vector<double> &x = a.inference->buffer(p.stats), &y = b.inference->buffer(p.stats);
    ASSERT_EQ(x.size(), y.size());
    for (size_t i = 0; i < x.size(); ++i)
      ASSERT_NEAR(x[i], y[i], statsTol * std::max(1.0, std::abs(y[i]))) << p.variable->name << "[" << i << "]";
  }
}

TEST(Inference, JitEqualsInterpreterOnEveryExample) {
  for (const Example &ex : examples()) {
    SCOPED_TRACE(ex.model);
    FitOptions o = exampleOptions(ex);
    auto jit = fit(readAll(examplePath(ex.model)), ex.files, o);
    o.engine = "interp";
    auto interp = fit(readAll(examplePath(ex.model)), ex.files, o);
    ASSERT_TRUE(jit->ok) << jit->error;
    ASSERT_TRUE(interp->ok) << interp->error;
    ASSERT_EQ(jit->summary.elbo.size(), interp->summary.elbo.size());
    for (size_t i = 0; i < jit->summary.elbo.size(); ++i)
      EXPECT_NEAR(jit->summary.elbo[i], interp->summary.elbo[i], 1e-12 * std::abs(interp->summary.elbo[i]));
    // Every posterior, element by element.
    for (const codegen::Posterior &p : jit->plan->posteriors) {
      const std::vector<double> &a = jit->inference->buffer(p.eta), &b = interp->inference->buffer(p.eta);
      ASSERT_EQ(a.size(), b.size());
      for (size_t i = 0; i < a.size(); ++i)
        ASSERT_NEAR(a[i], b[i], 1e-12 * std::max(1.0, std::abs(b[i]))) << p.variable->name << "[" << i << "]";
    }
    // VMP never decreases the ELBO (the run checks it; make sure it ran).
    for (size_t i = 1; i < jit->summary.elbo.size(); ++i)
      EXPECT_GE(jit->summary.elbo[i], jit->summary.elbo[i - 1] - 1e-9 * std::abs(jit->summary.elbo[i]));
  }
}

// codegen/transforms/LinearStatistics.cpp: a mixture of product-Bernoulli
// components (the 8x8 binarised digits) with its per-(datum, pixel, case)
// messages, ELBO terms and evidence as weighted column means and linear
// forms gives the iterations of the call-per-entry plan, to rounding; every
// example with and without it, one thread and two, runs the same.
TEST(Inference, BatchedLinearStatisticsEqualPerEntryCalls) {
  FitOptions o;
  o.map["x"] = "p*";
  o.run.maxIterations = 10;
  o.run.tolerance = 0;
  auto batched = fit(readAll(examplePath("bernoulli_mixture.ppl")), {examplePath("data/digits_binary.csv")}, o);
  o.disabled.push_back("batch-linear");
  auto perEntry = fit(readAll(examplePath("bernoulli_mixture.ppl")), {examplePath("data/digits_binary.csv")}, o);
  ASSERT_TRUE(batched->ok) << batched->error;
  ASSERT_TRUE(perEntry->ok) << perEntry->error;
  std::string plan = codegen::printPlan(*batched->plan), plain = codegen::printPlan(*perEntry->plan);
  EXPECT_NE(plan.find("ppc_binary_column_means"), std::string::npos);
  EXPECT_NE(plan.find("ppc_binary_linear_forms"), std::string::npos);
  EXPECT_EQ(plan.find("ppc_bernoulli_avglogfactor_obs_n"), std::string::npos);
  EXPECT_EQ(plan.find("ppc_bernoulli_p_avglog_obs_n"), std::string::npos);
  EXPECT_NE(plain.find("ppc_bernoulli_avglogfactor_obs_n"), std::string::npos);
  expectSameRun(*batched, *perEntry, 1e-10, 1e-8, /*withScratch=*/false);
  for (size_t i = 1; i < batched->summary.elbo.size(); ++i)
    EXPECT_GE(batched->summary.elbo[i], batched->summary.elbo[i - 1] - 1e-9 * std::abs(batched->summary.elbo[i]));
  for (const Example &ex : examples())
    for (int threads : {1, 2}) {
      SCOPED_TRACE(ex.model + " threads " + std::to_string(threads));
      FitOptions e = exampleOptions(ex, threads);
      auto with = fit(readAll(examplePath(ex.model)), ex.files, e);
      e.disabled.push_back("batch-linear");
      auto without = fit(readAll(examplePath(ex.model)), ex.files, e);
      ASSERT_TRUE(with->ok && without->ok);
      expectSameRun(*with, *without, 1e-10, 1e-8, /*withScratch=*/false);
    }
}

// codegen/transforms/RowKernelFission.cpp: statistics and entropies of all rows after
// the loop give the same posteriors as one row per iteration of it (the ELBO
// terms summed in another order), on one thread and on two; and it applies
// (the mixtures' indicators and the documents' topic mixes).
TEST(Inference, RowKernelFissionKeepsEveryExamplesIterations) {
  size_t hoisted = 0;
  for (const Example &ex : examples()) {
    for (int threads : {1, 2}) {
      SCOPED_TRACE(ex.model + " threads " + std::to_string(threads));
      FitOptions o = exampleOptions(ex, threads);
      auto whole = fit(readAll(examplePath(ex.model)), ex.files, o);
      o.disabled.push_back("row-fission");
      auto perRow = fit(readAll(examplePath(ex.model)), ex.files, o);
      ASSERT_TRUE(whole->ok) << whole->error;
      ASSERT_TRUE(perRow->ok) << perRow->error;
      if (threads == 1 && codegen::printPlan(*whole->plan).find("(all rows)") != std::string::npos)
        ++hoisted;
      expectSameRun(*whole, *perRow, 1e-12, 1e-12, /*withScratch=*/true);
    }
  }
  EXPECT_GE(hoisted, 6u);
}

// codegen/transforms/ProductNormalizerFusion.cpp: products normalized and sent on in
// one call (rows never stored; a factor common to a sum multiplied in after
// it) give the same traces and posteriors as the three calls with stored
// rows, on one thread and on two; and it applies (LDA's sweeps and refresh).
TEST(Inference, ProductNormalizerFusionKeepsEveryExamplesIterations) {
  size_t factored = 0, scattered = 0;
  for (const Example &ex : examples()) {
    for (int threads : {1, 2}) {
      SCOPED_TRACE(ex.model + " threads " + std::to_string(threads));
      FitOptions o = exampleOptions(ex, threads);
      // ppc's default schedules (nested for LDA), without data-dependent exits.
      o.localSchedule = passes::PassContext::LocalSchedule::Auto;
      o.localIterations = 3;
      o.localRestart = true;
      auto fused = fit(readAll(examplePath(ex.model)), ex.files, o);
      o.disabled.push_back("fuse-normalizers");
      auto stored = fit(readAll(examplePath(ex.model)), ex.files, o);
      ASSERT_TRUE(fused->ok) << fused->error;
      ASSERT_TRUE(stored->ok) << stored->error;
      if (threads == 1) {
        std::string plan = codegen::printPlan(*fused->plan);
        factored += plan.find("ppc_dot_inverse_axpy") != std::string::npos;
        scattered += plan.find("ppc_product_axpy_norm") != std::string::npos;
      }
      // Scratch rows are never stored when fused.
      expectSameRun(*fused, *stored, 1e-11, 1e-10, /*withScratch=*/false);
    }
  }
  EXPECT_GE(factored, 1u);
  EXPECT_GE(scattered, 1u);
}

// codegen/transforms/LogBatching.cpp: the refresh's log normalizers summed after the
// loop change the ELBO's rounding only, and no posterior (bitwise).
TEST(Inference, LogBatchingChangesOnlyTheElbosRounding) {
  size_t batched = 0;
  for (const Example &ex : examples()) {
    SCOPED_TRACE(ex.model);
    FitOptions o = exampleOptions(ex);
    o.localSchedule = passes::PassContext::LocalSchedule::Auto;
    o.localIterations = 3;
    o.localRestart = true;
    auto after = fit(readAll(examplePath(ex.model)), ex.files, o);
    o.disabled.push_back("batch-logs");
    auto inLoop = fit(readAll(examplePath(ex.model)), ex.files, o);
    ASSERT_TRUE(after->ok && inLoop->ok) << after->error << inLoop->error;
    batched += codegen::printPlan(*after->plan).find("ppc_weighted_log_sum") != std::string::npos;
    expectSameRun(*after, *inLoop, 1e-12, 0, /*withScratch=*/false);
  }
  EXPECT_GE(batched, 1u);
}

// codegen/transforms/RowPrefetch.cpp: prefetching the rows later tokens read changes
// no value (bitwise), and applies to tables of 4 MiB or more.
TEST(Inference, RowPrefetchChangesNoValue) {
  FitOptions o;
  o.map = {{"theta", "doc"}, {"x", "word"}};
  o.params = {{"V", "6000"}, {"K", "100"}};
  o.weight = "count";
  o.localSchedule = passes::PassContext::LocalSchedule::Auto;
  o.localIterations = 2;
  o.run.maxIterations = 3;
  o.run.tolerance = 0;
  std::string model = readAll(examplePath("lda.ppl"));
  std::vector<std::string> files = {examplePath("data/ap_small_d200_w500.csv")};
  auto with = fit(model, files, o);
  o.disabled.push_back("prefetch");
  auto without = fit(model, files, o);
  ASSERT_TRUE(with->ok && without->ok) << with->error << without->error;
  EXPECT_NE(codegen::printPlan(*with->plan).find("ppc_prefetch_row"), std::string::npos);
  EXPECT_EQ(codegen::printPlan(*without->plan).find("ppc_prefetch_row"), std::string::npos);
  expectSameRun(*with, *without, 0, 0, /*withScratch=*/false);
}

// codegen/transforms/RowBlocking.cpp: running the documents in batches, their tokens by
// blocks of the topic tables' rows, reorders sums only (LDA's sweep and the
// Dirichlet-multinomial mixture's counts, 8 MiB tables: V = 10,000,
// K = 100; one local sweep, the plain sweep of bench/lda_sweep.py). On one
// thread and two, with the JIT and the interpreter; the tokens also in
// descending word order within each document (a permutation per document).
TEST(Inference, RowBlockingReordersOnlySums) {
  // The small corpus's 500 words spread over 10,000 (word w -> 20 w), so
  // that its tokens reach rows of the whole table: blocks of 512 rows.
  struct Token {
    int doc, word;
    std::string count;
  };
  std::vector<Token> tokens;
  std::istringstream lines(readAll(examplePath("data/ap_small_d200_w500.csv")));
  std::string line;
  std::getline(lines, line);
  while (std::getline(lines, line)) {
    Token t;
    char count[32] = {0};
    ASSERT_EQ(std::sscanf(line.c_str(), "%d,%d,%31s", &t.doc, &t.word, count), 3) << line;
    t.count = count;
    tokens.push_back(t);
  }
  auto csv = [&](const std::string &name) {
    std::string text = "doc,word,count\n";
    for (const Token &t : tokens)
      text += std::to_string(t.doc) + "," + std::to_string(20 * t.word) + "," + t.count + "\n";
    return tempFile(name, text);
  };
  std::string ascending = csv("ascending.csv");
  std::stable_sort(tokens.begin(), tokens.end(),
                   [](const Token &a, const Token &b) { return std::pair{a.doc, -a.word} < std::pair{b.doc, -b.word}; });
  std::string descending = csv("descending.csv");
  struct Case {
    std::string model, local, file;
  };
  for (const Case &c : {Case{"lda.ppl", "theta", ascending}, Case{"lda.ppl", "theta", descending},
                        Case{"dirichlet_multinomial_mixture.ppl", "z", ascending}}) {
    for (int threads : {1, 2})
      for (std::string engine : {"jit", "interp"}) {
        SCOPED_TRACE(c.model + " " + c.file + " threads " + std::to_string(threads) + " " + engine);
        FitOptions o;
        o.map = {{c.local, "doc"}, {"x", "word"}};
        o.params = {{"V", "10000"}, {"K", "100"}};
        o.weight = "count";
        o.localSchedule = passes::PassContext::LocalSchedule::Auto;
        o.localIterations = 1;
        o.localTolerance = 0;
        o.localRestart = false;
        o.run.maxIterations = 3;
        o.run.tolerance = 0;
        o.threads = threads;
        o.engine = engine;
        std::string model = readAll(examplePath(c.model));
        auto blocked = fit(model, {c.file}, o);
        o.disabled.push_back("block-rows");
        auto inOrder = fit(model, {c.file}, o);
        ASSERT_TRUE(blocked->ok && inOrder->ok) << blocked->error << inOrder->error;
        std::string plan = codegen::printPlan(*blocked->plan);
        EXPECT_NE(plan.find("in batches of"), std::string::npos);
        EXPECT_EQ(plan.find("blockorder") != std::string::npos, c.file.find("descending") != std::string::npos);
        EXPECT_EQ(codegen::printPlan(*inOrder->plan).find("in batches of"), std::string::npos);
        expectSameRun(*blocked, *inOrder, 1e-12, 1e-9, /*withScratch=*/false);
      }
  }
}

// codegen/transforms/ColumnFission.cpp: the topics' datum-major counts added to their
// rows by tiles (V = 2000, K = 100: a 1.6 MB table) give the same run, entry
// by entry the same additions; on one thread and two, JIT and interpreter.
TEST(Inference, ColumnFissionChangesNothing) {
  std::string text = "doc,word,count\n";
  std::istringstream lines(readAll(examplePath("data/ap_small_d200_w500.csv")));
  std::string line;
  std::getline(lines, line);
  while (std::getline(lines, line)) {
    int doc = 0, word = 0;
    char count[32] = {0};
    ASSERT_EQ(std::sscanf(line.c_str(), "%d,%d,%31s", &doc, &word, count), 3) << line;
    text += std::to_string(doc) + "," + std::to_string(4 * word) + "," + count + "\n";
  }
  const std::string file = tempFile("spread.csv", text);
  for (const char *modelFile : {"lda.ppl", "dirichlet_multinomial_mixture.ppl"})
    for (int threads : {1, 2})
      for (std::string engine : {"jit", "interp"}) {
        SCOPED_TRACE(std::string(modelFile) + " threads " + std::to_string(threads) + " " + engine);
        FitOptions o;
        o.map = {{std::string(modelFile) == "lda.ppl" ? "theta" : "z", "doc"}, {"x", "word"}};
        o.params = {{"V", "2000"}, {"K", "100"}};
        o.weight = "count";
        o.localSchedule = passes::PassContext::LocalSchedule::Auto;
        o.run.maxIterations = 3;
        o.run.tolerance = 0;
        o.threads = threads;
        o.engine = engine;
        std::string model = readAll(examplePath(modelFile));
        auto split = fit(model, {file}, o);
        o.disabled.push_back("column-fission");
        auto strided = fit(model, {file}, o);
        ASSERT_TRUE(split->ok && strided->ok) << split->error << strided->error;
        EXPECT_NE(codegen::printPlan(*split->plan).find("ppc_axpy_transposed"), std::string::npos);
        EXPECT_EQ(codegen::printPlan(*strided->plan).find("ppc_axpy_transposed"), std::string::npos);
        expectSameRun(*split, *strided, 0, 0, /*withScratch=*/false);
      }
}

// codegen/transforms/EntropySharing.cpp: a Dirichlet's entropy from the log normalizers
// its statistics stored gives every example the same statistics bit for bit
// and the same ELBO but for the order of its sums; JIT and interpreter.
TEST(Inference, EntropySharingChangesOnlyTheElboRounding) {
  std::set<std::string> shared;
  for (const Example &ex : examples())
    for (std::string engine : {"jit", "interp"}) {
      SCOPED_TRACE(ex.model + " " + engine);
      FitOptions o = exampleOptions(ex);
      o.engine = engine;
      auto withSharing = fit(readAll(examplePath(ex.model)), ex.files, o);
      o.disabled.push_back("share-entropy");
      auto without = fit(readAll(examplePath(ex.model)), ex.files, o);
      ASSERT_TRUE(withSharing->ok && without->ok) << withSharing->error << without->error;
      if (codegen::printPlan(*withSharing->plan).find("ppc_dirichlet_entropy_lognorm_n") != std::string::npos)
        shared.insert(ex.model);
      EXPECT_EQ(codegen::printPlan(*without->plan).find("lognorm_n"), std::string::npos);
      expectSameRun(*withSharing, *without, 1e-13, 0, /*withScratch=*/true);
    }
  // The topics (LDA), the clusters' word distributions and the mixture weights.
  for (const char *model : {"lda.ppl", "dirichlet_multinomial_mixture.ppl", "gaussian_mixture.ppl"})
    EXPECT_EQ(shared.count(model), 1u) << model;
}

// Nested schedules (--local-iters N --local-restart): per document, the
// locals restart from their initialization (the random topic indicators),
// sweep N times, then send their messages to the topics.
TEST(Inference, NestedLocalSchedulesRunAndAgree) {
  for (bool restart : {false, true}) {
    SCOPED_TRACE(restart ? "restart" : "no restart");
    FitOptions o;
    o.map = {{"theta", "doc"}, {"x", "word"}};
    o.params = {{"V", "500"}, {"K", "5"}};
    o.weight = "count";
    o.localIterations = 3;
    o.localRestart = restart;
    o.run.maxIterations = 200;
    std::string model = readAll(examplePath("lda.ppl"));
    std::vector<std::string> files = {examplePath("data/ap_small_d200_w500.csv")};
    auto jit = fit(model, files, o);
    ASSERT_TRUE(jit->ok) << jit->error;
    EXPECT_TRUE(jit->summary.converged);
    // Symmetry is broken: the topics differ.
    const double *t0 = jit->stats("phi", 0), *t1 = jit->stats("phi", 1);
    double diff = 0;
    for (int w = 0; w < 500; ++w)
      diff += std::abs(t0[w] - t1[w]);
    EXPECT_GT(diff, 1.0);
    o.engine = "interp";
    o.run.maxIterations = 3;
    o.run.tolerance = 0;
    auto interp = fit(model, files, o);
    o.engine = "jit";
    auto jit3 = fit(model, files, o);
    ASSERT_TRUE(interp->ok && jit3->ok);
    for (size_t i = 0; i < 3; ++i)
      EXPECT_NEAR(jit3->summary.elbo[i], interp->summary.elbo[i], 1e-12 * std::abs(interp->summary.elbo[i]));
  }
}

/// ppc's defaults for LDA: the nested schedule with restarts (tools/ppc.cpp).
FitOptions ldaDefaults() {
  FitOptions o;
  o.map = {{"theta", "doc"}, {"x", "word"}};
  o.params = {{"V", "500"}, {"K", "5"}};
  o.weight = "count";
  o.localSchedule = passes::PassContext::LocalSchedule::Auto;
  o.localIterations = 10;
  o.localTolerance = 1e-3;
  o.localRestart = true;
  return o;
}

// The exponential-domain categorical updates are the same algorithm as the
// softmax of summed messages: equal ELBO traces up to rounding. The product
// form also takes the indicators' ELBO terms from their log normalizers
// (after the refresh that ends each document's sweeps); the softmax form
// evaluates the entropies and expected log factors term by term, so equal
// traces check that identity too.
TEST(Inference, ProductFormEqualsSoftmaxOfMessages) {
  FitOptions o = ldaDefaults();
  o.localTolerance = 0; // no data-dependent early exits: the same sweeps
  o.run.maxIterations = 10;
  o.run.tolerance = 0;
  std::string model = readAll(examplePath("lda.ppl"));
  std::vector<std::string> files = {examplePath("data/ap_small_d200_w500.csv")};
  auto product = fit(model, files, o);
  o.disabled.push_back("product-form");
  auto softmax = fit(model, files, o);
  ASSERT_TRUE(product->ok && softmax->ok) << product->error << softmax->error;
  bool usesProducts = false;
  for (const codegen::Buffer &b : product->plan->buffers)
    usesProducts = usesProducts || b.name == "phi.q.expcols";
  EXPECT_TRUE(usesProducts);
  std::string productPlan = codegen::printPlan(*product->plan), softmaxPlan = codegen::printPlan(*softmax->plan);
  EXPECT_NE(productPlan.find("ppc_product_axpy_norm"), std::string::npos);
  EXPECT_NE(productPlan.find("ppc_weighted_log_sum"), std::string::npos);
  EXPECT_EQ(productPlan.find("H q(x.1)"), std::string::npos);
  EXPECT_NE(softmaxPlan.find("H q(x.1)"), std::string::npos);
  for (size_t i = 0; i < 10; ++i)
    EXPECT_NEAR(product->summary.elbo[i], softmax->summary.elbo[i], 1e-9 * std::abs(softmax->summary.elbo[i]));
}

// Memory O(nnz + D K + K V): the per-token indicators of the nested schedule
// live in scratch rows of one document, never in a tokens x topics buffer.
TEST(Inference, NestedScheduleKeepsNoTokensByTopicsBuffer) {
  FitOptions o = ldaDefaults();
  o.run.maxIterations = 2;
  std::string model = readAll(examplePath("lda.ppl"));
  auto f = fit(model, {examplePath("data/ap_small_d200_w500.csv")}, o);
  ASSERT_TRUE(f->ok) << f->error;
  int64_t nnz = 0, maxDocument = 0;
  for (const codegen::Buffer &b : f->plan->buffers) {
    if (b.name == "data.x.int")
      nnz = b.size;
    if (b.name == "sizes.P.x")
      for (int64_t s : b.ints)
        maxDocument = std::max(maxDocument, s);
  }
  ASSERT_GT(nnz, 1000);
  for (const codegen::Buffer &b : f->plan->buffers) {
    SCOPED_TRACE(b.name);
    EXPECT_LE(b.size, std::max<int64_t>({nnz, 500 * 5, 200 * 5, maxDocument * 5}));
  }
  // The indicators are not an output (rows of the last document only).
  for (const rt::PosteriorTable &t : f->inference->posteriors())
    EXPECT_NE(t.variable, "x.1");
}

// ppc's default schedule for LDA was chosen by measurement (docs/inference.md):
// on this subset too, it ends at a better optimum than the plain schedule,
// with a trace that never decreases (run() fails on a decrease).
TEST(Inference, NestedScheduleBeatsPlainOnLda) {
  FitOptions nested = ldaDefaults();
  nested.run.maxIterations = 60;
  nested.run.tolerance = 1e-7;
  FitOptions plain = nested;
  plain.localSchedule = passes::PassContext::LocalSchedule::Plain;
  plain.localIterations = 1;
  plain.localRestart = false;
  plain.run.maxIterations = 300;
  std::string model = readAll(examplePath("lda.ppl"));
  std::vector<std::string> files = {examplePath("data/ap_small_d200_w500.csv")};
  auto a = fit(model, files, nested), b = fit(model, files, plain);
  ASSERT_TRUE(a->ok && b->ok) << a->error << b->error;
  EXPECT_GT(a->elbo(), b->elbo());
}

// Parallel loops: each chunk sums into its own copies, merged in chunk
// order. The JIT (threads) and the interpreter (chunks in sequence) give the
// same numbers; another thread count changes only the rounding of the sums.
TEST(Inference, ThreadsChangeOnlyTheRounding) {
  FitOptions o = ldaDefaults();
  o.localTolerance = 0;
  o.run.maxIterations = 5;
  o.run.tolerance = 0;
  std::string model = readAll(examplePath("lda.ppl"));
  std::vector<std::string> files = {examplePath("data/ap_small_d200_w500.csv")};
  auto one = fit(model, files, o);
  o.threads = 2;
  auto two = fit(model, files, o);
  o.threads = 3;
  auto three = fit(model, files, o);
  // Whether a loop's chunks ran on the pool's threads or one after another
  // (ParallelRunner's choice, from the time its last run took) never shows.
  auto threeAgain = fit(model, files, o);
  ASSERT_TRUE(threeAgain->ok);
  EXPECT_EQ(threeAgain->summary.elbo, three->summary.elbo);
  o.engine = "interp";
  auto threeInterp = fit(model, files, o);
  ASSERT_TRUE(one->ok && two->ok && three->ok && threeInterp->ok);
  bool parallel = false;
  for (const codegen::Stmt &s : two->plan->blocks[codegen::Plan::Iteration])
    parallel = parallel || (s.kind == codegen::Stmt::Kind::Loop && s.parallel && !s.reductions.empty());
  EXPECT_TRUE(parallel);
  for (size_t i = 0; i < 5; ++i) {
    double e = one->summary.elbo[i];
    EXPECT_NEAR(two->summary.elbo[i], e, 1e-9 * std::abs(e));
    EXPECT_NEAR(three->summary.elbo[i], e, 1e-9 * std::abs(e));
    EXPECT_NEAR(threeInterp->summary.elbo[i], three->summary.elbo[i], 1e-12 * std::abs(e));
  }
  // Old Faithful (the plain schedule, parallel loops over the data points).
  FitOptions g;
  g.run.maxIterations = 20;
  g.run.tolerance = 0;
  auto g1 = fit(readAll(examplePath("gaussian_mixture.ppl")), {examplePath("data/faithful.csv")}, g);
  g.threads = 2;
  auto g2 = fit(readAll(examplePath("gaussian_mixture.ppl")), {examplePath("data/faithful.csv")}, g);
  ASSERT_TRUE(g1->ok && g2->ok) << g1->error << g2->error;
  for (size_t i = 0; i < 20; ++i)
    EXPECT_NEAR(g2->summary.elbo[i], g1->summary.elbo[i], 1e-9 * std::abs(g1->summary.elbo[i]));
}

// The mixture of unigrams' cluster update (the schedule updates pi, then
// phi, then z): q(z_d = k) is the softmax over k of E log pi_k + sum over
// the document's words of count * E log phi_k[word], computed here from the
// final statistics of pi and phi and the CSV, against z's statistics (the
// plan sums the words' evidence for all clusters at once from phi's
// datum-major copy). 200 documents, V = 500, K = 5 and K = 20.
TEST(Inference, MixtureOfUnigramsClustersFollowTheirDefinition) {
  std::map<int, std::vector<std::pair<int, double>>> words;
  std::istringstream lines(readAll(examplePath("data/ap_small_d200_w500.csv")));
  std::string line;
  std::getline(lines, line);
  while (std::getline(lines, line)) {
    int doc = 0, word = 0;
    double count = 0;
    ASSERT_EQ(std::sscanf(line.c_str(), "%d,%d,%lf", &doc, &word, &count), 3) << line;
    words[doc].emplace_back(word, count);
  }
  for (int K : {5, 20}) {
    SCOPED_TRACE("K = " + std::to_string(K));
    FitOptions o;
    o.map = {{"z", "doc"}, {"x", "word"}};
    o.params = {{"V", "500"}, {"K", std::to_string(K)}};
    o.weight = "count";
    o.run.maxIterations = 3;
    o.run.tolerance = 0;
    auto f = fit(readAll(examplePath("dirichlet_multinomial_mixture.ppl")), {examplePath("data/ap_small_d200_w500.csv")}, o);
    ASSERT_TRUE(f->ok) << f->error;
    EXPECT_NE(codegen::printPlan(*f->plan).find("(all cases, datum-major)"), std::string::npos);
    const double *pi = f->stats("pi");
    for (const auto &[doc, tokens] : words) {
      std::vector<double> logit(static_cast<size_t>(K));
      for (int k = 0; k < K; ++k) {
        logit[size_t(k)] = pi[k];
        for (const auto &[word, count] : tokens)
          logit[size_t(k)] += count * f->stats("phi", k)[word];
      }
      double top = *std::max_element(logit.begin(), logit.end()), sum = 0;
      for (double &l : logit)
        sum += (l = std::exp(l - top));
      const double *z = f->stats("z", doc);
      for (int k = 0; k < K; ++k)
        ASSERT_NEAR(z[k], logit[size_t(k)] / sum, 1e-9) << "document " << doc << ", cluster " << k;
    }
  }
}

// ParallelRunner::chunkStarts: chunks at equal shares of the elements'
// cumulative cost (codegen/transforms/ChunkBalancing.cpp), at the boundary nearest each
// share; without costs, equal counts.
TEST(Inference, ChunksSplitAtEqualCost) {
  using codegen::ParallelRunner;
  EXPECT_EQ(ParallelRunner::chunkStarts(nullptr, 5, 2), (std::vector<int64_t>{0, 2, 5}));
  const int64_t heavyLast[] = {0, 1, 2, 3, 13};
  EXPECT_EQ(ParallelRunner::chunkStarts(heavyLast, 4, 2), (std::vector<int64_t>{0, 3, 4}));
  const int64_t heavyFirst[] = {0, 10, 11, 12, 13, 14};
  EXPECT_EQ(ParallelRunner::chunkStarts(heavyFirst, 5, 2), (std::vector<int64_t>{0, 1, 5}));
  const int64_t even[] = {0, 2, 4, 6, 8, 10, 12};
  EXPECT_EQ(ParallelRunner::chunkStarts(even, 6, 3), (std::vector<int64_t>{0, 2, 4, 6}));
  // More chunks than costly elements: empty chunks, never overlapping ones.
  const int64_t one[] = {0, 0, 100, 100};
  EXPECT_EQ(ParallelRunner::chunkStarts(one, 3, 3), (std::vector<int64_t>{0, 1, 2, 3}));
}

[[maybe_unused]] long residentKiB() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmRSS:", 0) == 0)
      return std::atol(line.c_str() + 6);
  return 0;
}

// Recompiling many times in one session does not grow memory: the code of a
// dropped engine is released (ORC resource trackers).
#if defined(__SANITIZE_ADDRESS__)
/// The JIT's code: executable mappings without a file.
long executableAnonymousMappings() {
  std::ifstream maps("/proc/self/maps");
  long n = 0;
  for (std::string line; std::getline(maps, line);) {
    std::istringstream fields(line);
    std::string range, perms, offset, dev, inode, path;
    fields >> range >> perms >> offset >> dev >> inode >> path;
    n += perms.size() > 2 && perms[2] == 'x' && path.empty();
  }
  return n;
}
#endif

TEST(Inference, DroppedEnginesReleaseTheirCode) {
  FitOptions o;
  o.run.maxIterations = 1;
  std::string model = readAll(examplePath("gaussian_mixture.ppl"));
  for (int i = 0; i < 10; ++i)
    ASSERT_TRUE(fit(model, {examplePath("data/faithful.csv")}, o)->ok);
#if defined(__SANITIZE_ADDRESS__)
  // Under AddressSanitizer resident memory also holds the allocator's
  // quarantine, shadow and stack depot, which grow by design: what is
  // checked instead is that the engines give back their code (the JIT's
  // executable mappings) and their heap (the bytes still allocated).
  const long codeBefore = executableAnonymousMappings();
  const size_t heapBefore = __sanitizer_get_current_allocated_bytes();
  for (int i = 0; i < 100; ++i)
    ASSERT_TRUE(fit(model, {examplePath("data/faithful.csv")}, o)->ok);
  EXPECT_LE(executableAnonymousMappings() - codeBefore, 2) << "JIT code mappings kept over 100 compilations";
  const long heapGrown = (long(__sanitizer_get_current_allocated_bytes()) - long(heapBefore)) / 1024;
  EXPECT_LT(heapGrown, 8 * 1024) << "allocated memory grew by " << heapGrown << " KiB over 100 compilations";
#else
  long before = residentKiB();
  for (int i = 0; i < 100; ++i)
    ASSERT_TRUE(fit(model, {examplePath("data/faithful.csv")}, o)->ok);
  long grown = residentKiB() - before;
  EXPECT_LT(grown, 8 * 1024) << "resident memory grew by " << grown << " KiB over 100 compilations";
#endif
}

} // namespace
