// Levenberg–Marquardt least squares with a numeric Jacobian and box bounds (Eigen).
//
// Minimises ½·Σ r_i(x)² for a residual function r: R^p → R^n (n >= p). Bounds are enforced by
// projecting every trial point into [lower, upper]. The Jacobian is by forward differences with a
// relative step. Standard errors come from the Gauss–Newton covariance σ²·(JᵀJ)⁻¹ at the optimum,
// σ² = Σr²/(n − p): they assume independent, equal-variance residuals and are reported as such.
#ifndef SERVESIM_HARDWARE_LEVENBERG_MARQUARDT_H_
#define SERVESIM_HARDWARE_LEVENBERG_MARQUARDT_H_

#include <functional>

#include <Eigen/Dense>

namespace servesim::hardware {

struct LmOptions {
  int max_iterations = 100;
  double relative_step = 1e-4;  // finite-difference step, relative to |x| (absolute floor below)
  double absolute_step = 1e-9;
  double tolerance = 1e-10;  // stop when the relative cost decrease is below this
  double initial_lambda = 1e-3;
};

struct LmResult {
  Eigen::VectorXd x;
  Eigen::VectorXd std_error;  // standard_errors() at the optimum; 0 where a parameter sits on a
                              // bound
  Eigen::VectorXd residuals;
  double cost = 0;  // ½·Σr²
  int iterations = 0;
  bool converged = false;
};

using ResidualFn = std::function<Eigen::VectorXd(const Eigen::VectorXd&)>;

// Relative eigenvalue below which a direction of the column-normalised JᵀJ counts as unseen.
inline constexpr double kRankTolerance = 1e-10;

// sqrt(diag(σ²(JᵀJ)⁻¹)), computed on J's columns scaled to unit norm. +inf for every parameter
// the residuals do not determine: one with a zero column, or one with a component along a
// direction of JᵀJ whose eigenvalue is below kRankTolerance·λ_max (e.g. two parameters whose
// columns are identical: only their sum is determined). A pseudo-inverse would report a finite,
// small error for those, i.e. call them known.
Eigen::VectorXd standard_errors(const Eigen::MatrixXd& J, double sigma2);

// REQUIRES: x0, lower, upper of equal size p >= 1; lower <= x0 <= upper; r(x0) finite, size >= p.
LmResult levenberg_marquardt(const ResidualFn& r, const Eigen::VectorXd& x0,
                             const Eigen::VectorXd& lower, const Eigen::VectorXd& upper,
                             const LmOptions& options = {});

}  // namespace servesim::hardware

#endif  // SERVESIM_HARDWARE_LEVENBERG_MARQUARDT_H_
