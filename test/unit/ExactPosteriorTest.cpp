// Inference against closed forms: conjugate models whose posterior is exact
// and whose ELBO equals the log evidence (known inputs, Binomial trials and
// Poisson exposures included), and published values (Infer.NET, BayesPy,
// the clinical trial).
#include "FitSupport.h"

#include <Eigen/Dense>
#include <cmath>
#include <gtest/gtest.h>
#include <numeric>

using namespace ppc;
using namespace ppc::testing;

namespace {

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

} // namespace
