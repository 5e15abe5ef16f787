// Dataset: the sequence of request bodies (lengths and prefix identity) a workload sends, in the
// order the benchmark client sends them. Arrival times and ids are added by the Workload.
#ifndef SERVESIM_WORKLOADS_DATASET_H_
#define SERVESIM_WORKLOADS_DATASET_H_

#include <cstdint>

#include "workloads/request_spec.h"

namespace servesim::workloads {

// Contract: size() is fixed at construction; next() is called at most size() times and returns
// the next request body with prompt_tokens >= 1, output_tokens >= 1 and, when prefix_group >= 0,
// 0 < prefix_tokens <= prompt_tokens. It leaves id, arrival and priority at their defaults.
// Deterministic: same construction arguments => same sequence.
class Dataset {
 public:
  virtual ~Dataset() = default;
  virtual int64_t size() const = 0;
  virtual RequestSpec next() = 0;
};

}  // namespace servesim::workloads

#endif  // SERVESIM_WORKLOADS_DATASET_H_
