#include "sim/measured/latency_samples.h"

#include <cmath>
#include <numeric>

#include "sim/base/error.h"
#include "sim/metrics/benchmark_metrics.h"

namespace servesim::measured {

const std::vector<double>& LatencySamples::of(const std::string& metric) const {
  if (metric == "ttft") return ttft_ms;
  if (metric == "tpot") return tpot_ms;
  if (metric == "itl") return itl_ms;
  if (metric == "e2el") return e2el_ms;
  throw InternalError("LatencySamples: unknown metric '" + metric + "'");
}

void LatencySamples::append(const LatencySamples& other) {
  ttft_ms.insert(ttft_ms.end(), other.ttft_ms.begin(), other.ttft_ms.end());
  tpot_ms.insert(tpot_ms.end(), other.tpot_ms.begin(), other.tpot_ms.end());
  itl_ms.insert(itl_ms.end(), other.itl_ms.begin(), other.itl_ms.end());
  e2el_ms.insert(e2el_ms.end(), other.e2el_ms.begin(), other.e2el_ms.end());
}

double request_e2e_s(const MeasuredRequest& r) {
  if (!std::isnan(r.e2e_s)) return r.e2e_s;
  if (!std::isnan(r.ttft_s) && (!r.itls_s.empty() || r.output_tokens == 1)) {
    return r.ttft_s + std::accumulate(r.itls_s.begin(), r.itls_s.end(), 0.0);
  }
  return kUnknown;
}

LatencySamples measured_samples(const MeasuredRun& run) {
  LatencySamples s;
  for (const MeasuredRequest& r : run.requests) {
    if (r.failed) continue;
    const double e = request_e2e_s(r);
    if (!std::isnan(r.ttft_s)) s.ttft_ms.push_back(r.ttft_s * 1e3);
    if (!std::isnan(e)) s.e2el_ms.push_back(e * 1e3);
    if (r.output_tokens > 1) {
      if (!std::isnan(r.tpot_s)) {
        s.tpot_ms.push_back(r.tpot_s * 1e3);
      } else if (!std::isnan(e) && !std::isnan(r.ttft_s)) {
        s.tpot_ms.push_back((e - r.ttft_s) / (r.output_tokens - 1) * 1e3);
      }
    }
    for (double g : r.itls_s) s.itl_ms.push_back(g * 1e3);
  }
  return s;
}

LatencySamples replay_samples(const std::vector<metrics::RequestRecord>& records,
                              const std::vector<metrics::StepLog>& step_logs,
                              double ttft_offset_s) {
  LatencySamples s;
  for (const metrics::RequestRecord& r : records) {
    if (r.warmup || r.failed || !r.completed) continue;
    // As compute_metrics: seconds from SimTime differences, the offset added, then ms.
    const double ttft = (r.first_token - r.arrival).seconds() + ttft_offset_s;
    const double latency = (r.last_token - r.arrival).seconds() + ttft_offset_s;
    s.ttft_ms.push_back(ttft * 1e3);
    s.e2el_ms.push_back(latency * 1e3);
    if (r.output_tokens > 1) s.tpot_ms.push_back((latency - ttft) / (r.output_tokens - 1) * 1e3);
    const auto& log = step_logs.at(static_cast<std::size_t>(r.replica));
    const std::vector<SimTime> times = metrics::token_times(r, log);
    for (std::size_t k = 1; k < times.size(); ++k) {
      s.itl_ms.push_back(double((times[k] - times[k - 1]).ns()) * 1e-6);
    }
  }
  return s;
}

}  // namespace servesim::measured
