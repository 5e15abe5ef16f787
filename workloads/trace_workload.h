// TraceWorkload: replays a fixed list of requests (arrival times, lengths, prefixes) as given,
// e.g. the per-request start times and token counts of a measured benchmark run.
//
// Contract: next() hands the requests out in arrival order (stable for ties: input order), with
// ids renumbered 0, 1, 2, ... in that order; arrivals, lengths, prefixes and priorities are kept.
// Deterministic: same list => same sequence.
#ifndef SERVESIM_WORKLOADS_TRACE_WORKLOAD_H_
#define SERVESIM_WORKLOADS_TRACE_WORKLOAD_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "workloads/request_spec.h"
#include "workloads/workload.h"

namespace servesim::workloads {

class TraceWorkload final : public Workload {
 public:
  // Throws ConfigError when the list is empty or a request has prompt_tokens < 1,
  // output_tokens < 1, a negative arrival, or prefix_tokens outside [1, prompt_tokens] with a
  // prefix_group >= 0. `where` names the source in messages (e.g. the measured file).
  explicit TraceWorkload(std::vector<RequestSpec> requests, const std::string& where = "trace");

  std::optional<RequestSpec> next() override;
  int64_t size() const override { return static_cast<int64_t>(requests_.size()); }

  // The requests in the order next() returns them.
  const std::vector<RequestSpec>& requests() const { return requests_; }

 private:
  std::vector<RequestSpec> requests_;
  size_t next_ = 0;
};

}  // namespace servesim::workloads

#endif  // SERVESIM_WORKLOADS_TRACE_WORKLOAD_H_
