// Curve analysis for sweeps: the knee of a QPS–latency curve, and whether one open-loop run was
// saturated (its queue grows without bound).
//
// Knee (find_knee). Input: swept values x_0 < x_1 < ... and the metric y_k at each (nullopt for a
// saturated or missing point, which counts as "above everything"). The metric is expected to
// rise with load (latencies, e.g. p99_ttft_ms).
//   plateau P   = median of y over the first m points: m = min(plateau_points, max(1, ⌊n/4⌋)),
//                 cut before the first point without a value (default plateau_points = 3: robust
//                 to one noisy point among the lowest loads, yet never more than the lowest quarter
//                 of the sweep; the sweep should start well below the knee);
//   threshold   = P · (1 + tolerance)            (default tolerance 1.0: the metric doubles);
//   above(k)    = y_k is missing or y_k > threshold;
//   leaves at k = the first k with above(k) and (k is the last point or above(k+1)): the excursion
//                 must persist for two consecutive points, so one noisy spike that falls back below
//                 the threshold is not a knee;
//   knee        = x_{k-1}, the highest value before the curve leaves its plateau.
// If the curve never leaves, the knee is the last point and left_plateau = false (the knee lies
// beyond the swept range). If it leaves at k = 0, or the lowest point is saturated, there is no
// knee (index = nullopt).
//
// Saturation (check_saturation), for one open-loop run at a finite offered rate. Over the measured
// (non-warmup, completed) requests, with s_i = the scheduled send time (arrival − client queue
// time) and e_i = the completion time:
//   offered rate  λ = (n − 1) / (s_last − s_first)           (the measured arrival rate)
//   window        = (t_c, s_last], t_c = the first completion; completions X = #{e_i in window}
//   throughput_ratio r = X / (λ · (s_last − t_c))            (≈ 1 when stable, ≈ μ/λ when the
//                                                             service rate μ is below λ)
//   latency_growth   g = median(f_i − s_i over the 4th quarter of requests by send time)
//                      / median(f_i − s_i over the 2nd quarter)   (f_i = first token: the TTFT
//                      seen from the scheduled send, client queue included; ≈ 1 when stable,
//                      grows with the waiting queue when saturated. Not E2E: decode time
//                      shrinks while the batch drains at the end of an overloaded run.)
//   saturated ⟺ r < min_throughput_ratio (0.9) AND g > min_latency_growth (1.25).
// Both must hold: r alone is biased low for short runs (≈ 1 − L/n, L = requests in system), g alone
// rises in the start-up transient of a heavily loaded but stable run. When the window is shorter
// than a quarter of the arrival span (or there are fewer than 8 completed requests), r uses the
// whole run instead: completed / (last completion − s_first) / λ. A run with all requests sent at
// once (rate inf) has no arrival window and is never called saturated.
#ifndef SERVESIM_SIM_PLANNING_KNEE_H_
#define SERVESIM_SIM_PLANNING_KNEE_H_

#include <cstddef>
#include <optional>
#include <vector>

#include "sim/metrics/request_record.h"

namespace servesim::planning {

struct KneeOptions {
  double tolerance = 1.0;  // --knee-tolerance: relative rise above the plateau that ends it
  int plateau_points = 3;  // lowest-load points whose median is the plateau
};

struct KneeResult {
  std::optional<size_t> index;  // the knee point; nullopt = no knee
  bool left_plateau = false;    // the curve rose above the threshold within the range
  double plateau = 0;           // P (NaN when there is no plateau)
  double threshold = 0;         // P · (1 + tolerance)
};

// REQUIRES: xs strictly increasing, ys.size() == xs.size(), tolerance >= 0, plateau_points >= 1.
KneeResult find_knee(const std::vector<double>& xs, const std::vector<std::optional<double>>& ys,
                     const KneeOptions& options);

struct SaturationOptions {
  double min_throughput_ratio = 0.9;
  double min_latency_growth = 1.25;
};

struct SaturationCheck {
  bool applicable = false;  // false for rate inf or fewer than 2 measured requests
  bool saturated = false;
  double offered_rate = 0;      // λ, requests/s
  double throughput_ratio = 0;  // r
  double latency_growth = 0;    // g
};

SaturationCheck check_saturation(const std::vector<metrics::RequestRecord>& records,
                                 const SaturationOptions& options);

}  // namespace servesim::planning

#endif  // SERVESIM_SIM_PLANNING_KNEE_H_
