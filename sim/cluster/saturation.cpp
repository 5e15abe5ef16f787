#include "sim/cluster/saturation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace servesim::sim {

SaturationCheck check_saturation(const SimulationConfig& config, const SimulationResult& result) {
  SaturationCheck s;
  s.offered_rps = config.workload.request_rate;
  s.achieved_rps = result.metrics.request_throughput;
  if (config.max_concurrency > 0) return s;  // closed loop: the client waits, no queue can grow
  // (send time, TTFT) of the measured completed requests, in send order.
  std::vector<std::pair<int64_t, double>> sent;
  for (const auto& r : result.records) {
    if (r.warmup || !r.completed) continue;
    sent.emplace_back(r.arrival.ns(), (r.first_token - r.arrival).ms());
  }
  if (sent.size() < 8) return s;
  std::sort(sent.begin(), sent.end());
  if (!std::isfinite(s.offered_rps)) {
    // No rate was asked for: a trace replayed at its recorded times (or every request at t=0).
    // The offered rate is the one its send times carry.
    const double span_s = double(sent.back().first - sent.front().first) * 1e-9;
    if (span_s <= 0) return s;
    s.offered_rps = double(sent.size() - 1) / span_s;
  }
  const size_t q = sent.size() / 4;
  double early = 0, late = 0;
  for (size_t i = 0; i < q; ++i) {
    early += sent[i].second;
    late += sent[sent.size() - 1 - i].second;
  }
  s.applicable = true;
  s.early_ttft_ms = early / double(q);
  s.late_ttft_ms = late / double(q);
  s.saturated = s.late_ttft_ms > 2 * s.early_ttft_ms && s.late_ttft_ms - s.early_ttft_ms > 1000;
  return s;
}

std::string saturation_message(const SaturationCheck& s) {
  if (!s.saturated) return "";
  char buf[320];
  std::snprintf(buf, sizeof buf,
                "overloaded: offered %.3g req/s, achieved %.3g req/s; the queue grows through the "
                "run (mean TTFT %.0f ms in the first quarter of requests, %.0f ms in the last); "
                "lower --request-rate or add capacity",
                s.offered_rps, s.achieved_rps, s.early_ttft_ms, s.late_ttft_ms);
  return buf;
}

nlohmann::json saturation_to_json(const SaturationCheck& s) {
  return nlohmann::json{{"saturated", s.saturated},
                        {"offered_rps", s.offered_rps},
                        {"achieved_rps", s.achieved_rps},
                        {"early_mean_ttft_ms", s.early_ttft_ms},
                        {"late_mean_ttft_ms", s.late_ttft_ms}};
}

}  // namespace servesim::sim
