#include "hardware/levenberg_marquardt.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/base/error.h"

namespace servesim::hardware {
namespace {

Eigen::VectorXd project(Eigen::VectorXd x, const Eigen::VectorXd& lo, const Eigen::VectorXd& hi) {
  return x.cwiseMax(lo).cwiseMin(hi);
}

Eigen::MatrixXd jacobian(const ResidualFn& r, const Eigen::VectorXd& x, const Eigen::VectorXd& rx,
                         const Eigen::VectorXd& lo, const Eigen::VectorXd& hi, const LmOptions& o) {
  Eigen::MatrixXd J(rx.size(), x.size());
  for (Eigen::Index k = 0; k < x.size(); ++k) {
    double h = std::max(o.relative_step * std::fabs(x[k]), o.absolute_step);
    Eigen::VectorXd xp = x;
    // Step inwards when at the upper bound.
    if (x[k] + h > hi[k]) h = -h;
    xp[k] = std::clamp(x[k] + h, lo[k], hi[k]);
    const double dh = xp[k] - x[k];
    if (dh == 0) {
      J.col(k).setZero();
      continue;
    }
    J.col(k) = (r(xp) - rx) / dh;
  }
  return J;
}

}  // namespace

Eigen::VectorXd standard_errors(const Eigen::MatrixXd& J, double sigma2) {
  const Eigen::Index p = J.cols();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  // Columns scaled to unit norm, so that the rank test does not depend on the parameters' units.
  Eigen::VectorXd scale(p);
  for (Eigen::Index k = 0; k < p; ++k) {
    const double norm = J.col(k).norm();
    scale[k] = norm > 0 ? 1.0 / norm : 0.0;
  }
  const Eigen::MatrixXd js = J * scale.asDiagonal();
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(js.transpose() * js);
  const Eigen::VectorXd& lambda = eig.eigenvalues();
  const Eigen::MatrixXd& v = eig.eigenvectors();
  const double lambda_max = lambda.maxCoeff();
  Eigen::VectorXd se = Eigen::VectorXd::Constant(p, kInf);
  for (Eigen::Index k = 0; k < p; ++k) {
    if (scale[k] == 0) continue;  // no residual depends on it
    double variance = 0;
    bool unseen = false;
    for (Eigen::Index j = 0; j < p; ++j) {
      if (lambda[j] <= kRankTolerance * lambda_max) {
        unseen = unseen || std::fabs(v(k, j)) > 1e-6;
      } else {
        variance += v(k, j) * v(k, j) / lambda[j];
      }
    }
    if (!unseen) se[k] = std::sqrt(sigma2 * variance) * scale[k];
  }
  return se;
}

LmResult levenberg_marquardt(const ResidualFn& r, const Eigen::VectorXd& x0,
                             const Eigen::VectorXd& lower, const Eigen::VectorXd& upper,
                             const LmOptions& o) {
  SERVESIM_CHECK(x0.size() >= 1 && x0.size() == lower.size() && x0.size() == upper.size(),
                 "LM: parameter sizes differ");
  LmResult res;
  res.x = project(x0, lower, upper);
  Eigen::VectorXd rx = r(res.x);
  SERVESIM_CHECK(rx.size() >= res.x.size() && rx.allFinite(), "LM: bad initial residuals");
  double cost = 0.5 * rx.squaredNorm();
  double lambda = o.initial_lambda;
  Eigen::MatrixXd J = jacobian(r, res.x, rx, lower, upper, o);
  for (res.iterations = 0; res.iterations < o.max_iterations; ++res.iterations) {
    const Eigen::MatrixXd JtJ = J.transpose() * J;
    const Eigen::VectorXd g = J.transpose() * rx;
    bool improved = false;
    for (int tries = 0; tries < 12 && !improved; ++tries) {
      Eigen::MatrixXd A = JtJ;
      A.diagonal() += lambda * JtJ.diagonal().cwiseMax(1e-12);
      const Eigen::VectorXd step = A.ldlt().solve(-g);
      const Eigen::VectorXd trial = project(res.x + step, lower, upper);
      const Eigen::VectorXd rt = r(trial);
      const double ct = rt.allFinite() ? 0.5 * rt.squaredNorm() : INFINITY;
      if (ct < cost) {
        const double decrease = (cost - ct) / std::max(cost, 1e-300);
        res.x = trial;
        rx = rt;
        cost = ct;
        lambda = std::max(lambda / 10, 1e-12);
        improved = true;
        if (decrease < o.tolerance) {
          res.converged = true;
        }
      } else {
        lambda *= 10;
      }
    }
    if (!improved) {
      res.converged = true;  // no descent direction left at this precision
      break;
    }
    if (res.converged) break;
    J = jacobian(r, res.x, rx, lower, upper, o);
  }
  J = jacobian(r, res.x, rx, lower, upper, o);
  res.residuals = rx;
  res.cost = cost;
  const Eigen::Index n = rx.size(), p = res.x.size();
  res.std_error = Eigen::VectorXd::Zero(p);
  if (n > p) {
    const double sigma2 = rx.squaredNorm() / static_cast<double>(n - p);
    const Eigen::VectorXd se = standard_errors(J, sigma2);
    for (Eigen::Index k = 0; k < p; ++k) {
      const bool on_bound = res.x[k] <= lower[k] || res.x[k] >= upper[k];
      res.std_error[k] = on_bound ? 0.0 : se[k];
    }
  }
  return res;
}

}  // namespace servesim::hardware
