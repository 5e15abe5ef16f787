// Prometheus text exposition (format 0.0.4) of `servesim serve`'s /metrics: vLLM's metric names,
// types, labels and histogram buckets (vllm/v1/metrics/loggers.py), so that a dashboard or an
// autoscaler built for vLLM reads them unchanged.
#ifndef SERVESIM_SIM_SERVE_PROMETHEUS_H_
#define SERVESIM_SIM_SERVE_PROMETHEUS_H_

#include <cstdint>
#include <string>
#include <vector>

namespace servesim::serve {

// A cumulative histogram with fixed upper bounds (le), as prometheus_client keeps one.
class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds);
  void observe(double x);
  // "# HELP", "# TYPE … histogram", the _bucket lines (le ascending, then +Inf), _count, _sum.
  void render(std::string& out, const std::string& name, const std::string& help,
              const std::string& labels) const;
  int64_t count() const { return count_; }
  double sum() const { return sum_; }

 private:
  std::vector<double> bounds_;
  std::vector<int64_t> counts_;  // per bucket, not cumulative
  int64_t count_ = 0;
  double sum_ = 0;
};

// vLLM's buckets: time_to_first_token_seconds, inter_token_latency_seconds, and the request
// latency buckets of e2e_request_latency_seconds and request_queue_time_seconds.
const std::vector<double>& ttft_buckets();
const std::vector<double>& itl_buckets();
const std::vector<double>& request_latency_buckets();

// A gauge or counter: HELP, TYPE and one sample. A counter `name` is written as name_total, as
// prometheus_client does.
void render_gauge(std::string& out, const std::string& name, const std::string& help,
                  const std::string& labels, double value);
void render_counter(std::string& out, const std::string& name, const std::string& help,
                    const std::string& labels, double value);

// A sample value as Prometheus writes it (integers without a fraction, shortest round-trip
// otherwise).
std::string prometheus_number(double v);

}  // namespace servesim::serve

#endif  // SERVESIM_SIM_SERVE_PROMETHEUS_H_
