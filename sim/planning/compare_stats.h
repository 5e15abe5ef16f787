// Statistics for A/B comparisons and seed intervals: Student's t distribution (Boost.Math's
// students_t), the paired t-test, and the two-sided sign test.
//
// Contract (all pure functions, no global state):
//  - student_t_cdf(t, df) = P(T <= t); student_t_two_sided_p(t, df) = P(|T| >= |t|), 0 for
//    |t| = inf, 1 for NaN; student_t_quantile(p, df): the t with CDF(t) = p. Boost.Math's
//    students_t, accurate to a few ulp. REQUIRES: df > 0 (any real), 0 < p < 1.
//  - paired_t_test(a, b): on d_i = b_i − a_i: mean d̄, sample sd s (n − 1), t = d̄ / (s/√n),
//    df = n − 1, two-sided p, and the confidence interval d̄ ± t_{(1+c)/2, df} · s/√n. When s = 0
//    the test is degenerate: t = 0 and p = 1 if d̄ = 0, else t = ±inf and p = 0 (every pair moved
//    by exactly the same amount). Also the sign test: n₊ = #(d > 0), n₋ = #(d < 0), ties dropped,
//    p = min(1, 2·P(Bin(n₊+n₋, ½) <= min(n₊, n₋))).
//    REQUIRES: a.size() == b.size() >= 2.
#ifndef SERVESIM_SIM_PLANNING_COMPARE_STATS_H_
#define SERVESIM_SIM_PLANNING_COMPARE_STATS_H_

#include <vector>

namespace servesim::planning {

double student_t_cdf(double t, double df);
double student_t_two_sided_p(double t, double df);
double student_t_quantile(double p, double df);
double sign_test_p(int positive, int negative);

struct PairedTest {
  int n = 0;
  double mean_diff = 0;  // mean of b − a
  double sd_diff = 0;    // sample standard deviation of b − a
  double t = 0;
  double df = 0;
  double p_value = 1;
  double confidence = 0.95;
  double ci_low = 0, ci_high = 0;
  int positive = 0, negative = 0;  // sign test counts (b > a, b < a)
  double sign_p = 1;
};

PairedTest paired_t_test(const std::vector<double>& a, const std::vector<double>& b,
                         double confidence = 0.95);

}  // namespace servesim::planning

#endif  // SERVESIM_SIM_PLANNING_COMPARE_STATS_H_
