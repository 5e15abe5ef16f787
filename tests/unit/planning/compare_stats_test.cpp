// The statistics behind `servesim compare` and plan's seed intervals: Student's t, the paired
// t-test and the sign test, checked against closed forms, a t-table and a hand-computed example.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "sim/planning/compare_stats.h"

namespace servesim::planning {
namespace {

using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

TEST_CASE("two-sided t p-values match the closed forms for df = 1, 2, 4", "[planning][stats]") {
  // df = 1 (Cauchy): p = 1 − (2/π)·atan|t|.   df = 2: p = 1 − |t|/√(2 + t²).
  // df = 4: p = 1 − (|t|/√(t² + 4))·(1 + 2/(t² + 4)).
  for (double t : {0.0, 0.1, 0.7, 1.0, 2.0, 4.899, 12.0, -3.0}) {
    const double a = std::fabs(t);
    CHECK_THAT(student_t_two_sided_p(t, 1), WithinAbs(1 - 2 / M_PI * std::atan(a), 1e-12));
    CHECK_THAT(student_t_two_sided_p(t, 2), WithinAbs(1 - a / std::sqrt(2 + a * a), 1e-12));
    CHECK_THAT(student_t_two_sided_p(t, 4),
               WithinAbs(1 - a / std::sqrt(a * a + 4) * (1 + 2 / (a * a + 4)), 1e-12));
  }
  CHECK(student_t_two_sided_p(INFINITY, 5) == 0);
  CHECK_THAT(student_t_cdf(0, 7), WithinAbs(0.5, 1e-15));
}

TEST_CASE("t quantiles reproduce a printed t-table to its 3 decimals", "[planning][stats]") {
  // Two-sided 95% and 99% critical values, as printed (rounded to 0.001): the tolerance 6e-4 is
  // the table's rounding plus margin.
  const struct {
    double p, df, t;
  } table[] = {{0.975, 1, 12.706}, {0.975, 2, 4.303},  {0.975, 4, 2.776},
               {0.975, 9, 2.262},  {0.975, 10, 2.228}, {0.975, 30, 2.042},
               {0.995, 4, 4.604},  {0.995, 9, 3.250},  {0.9975, 4, 5.598}};
  for (const auto& row : table) {
    INFO("p=" << row.p << " df=" << row.df);
    CHECK_THAT(student_t_quantile(row.p, row.df), WithinAbs(row.t, 6e-4));
    CHECK_THAT(student_t_quantile(1 - row.p, row.df), WithinAbs(-row.t, 6e-4));
  }
}

TEST_CASE("t quantiles: exact values and the df = 1, 2 closed forms", "[planning][stats]") {
  // Reference values to 6 decimals (R: qt(0.975, 10) = 2.228139, qt(0.975, 1) = 12.706205,
  // qt(0.975, 30) = 2.042272, qt(0.995, 4) = 4.604095): tolerance 5e-7 is their rounding.
  CHECK_THAT(student_t_quantile(0.975, 10), WithinAbs(2.228139, 5e-7));
  CHECK_THAT(student_t_quantile(0.975, 1), WithinAbs(12.706205, 5e-7));
  CHECK_THAT(student_t_quantile(0.975, 30), WithinAbs(2.042272, 5e-7));
  CHECK_THAT(student_t_quantile(0.995, 4), WithinAbs(4.604095, 5e-7));
  // df = 1 (Cauchy): t_p = tan(π(p − ½)).  df = 2: t_p = (2p − 1)/√(2p(1 − p)).
  for (double p : {0.51, 0.6, 0.9, 0.975, 0.999}) {
    CHECK_THAT(student_t_quantile(p, 1), WithinRel(std::tan(M_PI * (p - 0.5)), 1e-12));
    CHECK_THAT(student_t_quantile(p, 2),
               WithinRel((2 * p - 1) / std::sqrt(2 * p * (1 - p)), 1e-12));
    CHECK_THAT(student_t_cdf(student_t_quantile(p, 7.5), 7.5), WithinAbs(p, 1e-14));
  }
  CHECK(student_t_quantile(0.5, 3) == 0);
}

TEST_CASE("paired t-test on a hand-computed example", "[planning][stats]") {
  // d = b − a = {2.1, 1.4, 3.0, 0.8, 1.7}: n = 5, d̄ = 9.0/5 = 1.8.
  // Deviations 0.3, −0.4, 1.2, −1.0, −0.1 → Σe² = 0.09 + 0.16 + 1.44 + 1.00 + 0.01 = 2.70,
  // s² = 2.70/4 = 0.675, s = 0.821584, se = s/√5 = 0.367423, t = 1.8/0.367423 = 4.898979, df = 4.
  // p: the t-table brackets it (t_{0.995,4} = 4.604 < 4.899 < t_{0.9975,4} = 5.598 ⇒
  // 0.005 < p < 0.01); the df = 4 closed form gives p = 0.0080499 (7 digits).
  // 95% CI: 1.8 ± t_{0.975,4}·se = 1.8 ± 2.776445·0.367423 = 1.8 ± 1.020131 = [0.779869, 2.820131].
  // Sign test: 5 of 5 positive ⇒ p = 2·(1/2)^5 = 0.0625.
  const std::vector<double> a = {10, 20, 30, 40, 50};
  const std::vector<double> b = {12.1, 21.4, 33.0, 40.8, 51.7};
  const PairedTest r = paired_t_test(a, b);
  CHECK(r.n == 5);
  CHECK(r.df == 4);
  CHECK_THAT(r.mean_diff, WithinRel(1.8, 1e-12));
  CHECK_THAT(r.sd_diff, WithinRel(std::sqrt(0.675), 1e-12));
  CHECK_THAT(r.t, WithinRel(4.898979485566356, 1e-9));
  CHECK(r.p_value > 0.005);
  CHECK(r.p_value < 0.01);
  CHECK_THAT(r.p_value, WithinAbs(0.0080499, 1e-7));
  CHECK_THAT(r.ci_low, WithinAbs(0.779869, 2e-6));
  CHECK_THAT(r.ci_high, WithinAbs(2.820131, 2e-6));
  CHECK(r.positive == 5);
  CHECK(r.negative == 0);
  CHECK_THAT(r.sign_p, WithinAbs(0.0625, 1e-15));
}

TEST_CASE("paired t-test degenerate cases", "[planning][stats]") {
  // Identical sides: d = 0 everywhere ⇒ t = 0, p = 1. A constant shift: s = 0, d̄ ≠ 0 ⇒ p = 0.
  const PairedTest same = paired_t_test({1, 2, 3}, {1, 2, 3});
  CHECK(same.t == 0);
  CHECK(same.p_value == 1);
  CHECK(same.sign_p == 1);
  const PairedTest shift = paired_t_test({1, 2, 3}, {0, 1, 2});
  CHECK(std::isinf(shift.t));
  CHECK(shift.t < 0);
  CHECK(shift.p_value == 0);
  CHECK(shift.ci_low == -1);
  CHECK(shift.ci_high == -1);
}

TEST_CASE("sign test is the exact two-sided binomial", "[planning][stats]") {
  // n = 10, k = 2: P(Bin(10, ½) <= 2) = (1 + 10 + 45)/1024 = 56/1024 ⇒ p = 112/1024 = 0.109375.
  CHECK_THAT(sign_test_p(8, 2), WithinAbs(112.0 / 1024, 1e-13));
  CHECK_THAT(sign_test_p(2, 8), WithinAbs(112.0 / 1024, 1e-13));
  CHECK(sign_test_p(5, 5) == 1.0);  // 2·P(X <= 5) > 1, capped
  CHECK(sign_test_p(0, 0) == 1.0);
}

}  // namespace
}  // namespace servesim::planning
