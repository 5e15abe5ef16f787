#include "sim/planning/knee.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "sim/base/error.h"

namespace servesim::planning {
namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

KneeResult find_knee(const std::vector<double>& xs, const std::vector<std::optional<double>>& ys,
                     const KneeOptions& options) {
  SERVESIM_CHECK(xs.size() == ys.size(), "find_knee: xs and ys differ in length");
  SERVESIM_CHECK(options.tolerance >= 0 && options.plateau_points >= 1,
                 "find_knee: tolerance must be >= 0 and plateau_points >= 1");
  for (size_t i = 1; i < xs.size(); ++i) {
    SERVESIM_CHECK(xs[i] > xs[i - 1], "find_knee: xs must be strictly increasing");
  }
  KneeResult r;
  r.plateau = std::numeric_limits<double>::quiet_NaN();
  r.threshold = r.plateau;
  const size_t n = xs.size();
  if (n == 0) return r;
  // At most a quarter of the points (at least one): a coarse grid's plateau is its lowest point.
  const size_t m =
      std::min({n, static_cast<size_t>(options.plateau_points), std::max<size_t>(1, n / 4)});
  std::vector<double> base;
  for (size_t i = 0; i < m && ys[i]; ++i) base.push_back(*ys[i]);
  if (base.empty()) return r;  // saturated at the lowest load: no plateau
  r.plateau = median_of(base);
  r.threshold = r.plateau * (1 + options.tolerance);
  auto above = [&](size_t k) { return !ys[k] || *ys[k] > r.threshold; };
  for (size_t k = 0; k < n; ++k) {
    if (above(k) && (k + 1 == n || above(k + 1))) {
      r.left_plateau = true;
      if (k > 0) r.index = k - 1;
      return r;
    }
  }
  r.index = n - 1;
  return r;
}

SaturationCheck check_saturation(const std::vector<metrics::RequestRecord>& records,
                                 const SaturationOptions& options) {
  struct Req {
    double send, first, end;
  };
  std::vector<Req> reqs;
  for (const metrics::RequestRecord& rec : records) {
    if (rec.warmup || !rec.completed) continue;
    reqs.push_back({(rec.arrival - rec.client_queue_time).seconds(), rec.first_token.seconds(),
                    rec.last_token.seconds()});
  }
  SaturationCheck c;
  if (reqs.size() < 8) return c;
  // Sort by send time, ties by completion (records are in id order, which is send order already,
  // but the sort makes the rule independent of that).
  std::stable_sort(reqs.begin(), reqs.end(),
                   [](const Req& a, const Req& b) { return a.send < b.send; });
  const size_t n = reqs.size();
  const double s_first = reqs.front().send;
  const double s_last = reqs.back().send;
  const double span = s_last - s_first;
  if (!(span > 0)) return c;  // everything sent at once: no arrival window
  c.applicable = true;
  c.offered_rate = double(n - 1) / span;

  double t_c = std::numeric_limits<double>::infinity();
  double last_end = 0;
  for (const Req& q : reqs) {
    t_c = std::min(t_c, q.end);
    last_end = std::max(last_end, q.end);
  }
  const double window = s_last - t_c;
  if (window >= 0.25 * span) {
    int64_t done = 0;
    for (const Req& q : reqs) done += (q.end > t_c && q.end <= s_last);
    c.throughput_ratio = double(done) / (c.offered_rate * window);
  } else {
    const double makespan = last_end - s_first;
    c.throughput_ratio = makespan > 0 ? double(n) / makespan / c.offered_rate : 1.0;
  }

  auto quarter_median = [&](size_t q) {
    std::vector<double> lat;
    for (size_t i = q * n / 4; i < (q + 1) * n / 4; ++i)
      lat.push_back(reqs[i].first - reqs[i].send);
    return median_of(lat);
  };
  const double q2 = quarter_median(1);
  const double q4 = quarter_median(3);
  c.latency_growth = q2 > 0 ? q4 / q2 : (q4 > 0 ? std::numeric_limits<double>::infinity() : 1.0);
  c.saturated = c.throughput_ratio < options.min_throughput_ratio &&
                c.latency_growth > options.min_latency_growth;
  return c;
}

}  // namespace servesim::planning
