#include "workloads/trace_workload.h"

#include <algorithm>
#include <string>
#include <utility>

#include "sim/base/error.h"

namespace servesim::workloads {

TraceWorkload::TraceWorkload(std::vector<RequestSpec> requests, const std::string& where)
    : requests_(std::move(requests)) {
  if (requests_.empty()) throw ConfigError(where + ": no requests to replay");
  for (size_t i = 0; i < requests_.size(); ++i) {
    const RequestSpec& r = requests_[i];
    const std::string at = where + ": request " + std::to_string(i);
    if (r.prompt_tokens < 1) {
      throw ConfigError(at + " has " + std::to_string(r.prompt_tokens) +
                        " prompt tokens; expected >= 1");
    }
    if (r.output_tokens < 1) {
      throw ConfigError(at + " has " + std::to_string(r.output_tokens) +
                        " output tokens; expected >= 1");
    }
    if (r.arrival < SimTime::zero()) throw ConfigError(at + " arrives before t = 0");
    if (r.prefix_group >= 0 && (r.prefix_tokens < 1 || r.prefix_tokens > r.prompt_tokens)) {
      throw ConfigError(at + " has a shared prefix of " + std::to_string(r.prefix_tokens) +
                        " tokens; expected 1.." + std::to_string(r.prompt_tokens));
    }
  }
  std::stable_sort(
      requests_.begin(), requests_.end(),
      [](const RequestSpec& a, const RequestSpec& b) { return a.arrival < b.arrival; });
  for (size_t i = 0; i < requests_.size(); ++i) requests_[i].id = static_cast<int64_t>(i);
}

std::optional<RequestSpec> TraceWorkload::next() {
  if (next_ == requests_.size()) return std::nullopt;
  return requests_[next_++];
}

}  // namespace servesim::workloads
