// The deployment and workload the live-engine tests (tests/fidelity/live_engine_*_test.cpp) run:
// Llama-3.1-8B on one H100-SXM, random prompts and outputs of about `input` and `output` tokens
// (range ratio 0.5), Poisson arrivals at `rate` requests/s from `seed`; and those arrivals drawn
// in advance, as a server receives them.
#ifndef SERVESIM_TESTS_FIDELITY_LIVE_ENGINE_FIXTURE_H_
#define SERVESIM_TESTS_FIDELITY_LIVE_ENGINE_FIXTURE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "sim/cluster/simulation.h"
#include "workloads/workload.h"

namespace servesim::sim {

inline SimulationConfig live_engine_config(int64_t requests, double rate, int input, int output,
                                           uint64_t seed) {
  SimulationConfig c;
  c.model = "llama-3.1-8b";
  c.gpu = "h100-sxm";
  c.workload.dataset_name = "random";
  c.workload.num_prompts = requests;
  c.workload.random_input_len = input;
  c.workload.random_output_len = output;
  c.workload.random_range_ratio = 0.5;
  c.workload.request_rate = rate;
  c.workload.seed = seed;
  return c;
}

// Every request of `c`'s workload, in arrival order.
inline std::vector<workloads::RequestSpec> live_engine_arrivals(const SimulationConfig& c) {
  std::vector<workloads::RequestSpec> out;
  std::unique_ptr<workloads::Workload> w = workloads::make_workload(resolved_workload(c));
  while (std::optional<workloads::RequestSpec> spec = w->next()) out.push_back(*spec);
  return out;
}

}  // namespace servesim::sim

#endif  // SERVESIM_TESTS_FIDELITY_LIVE_ENGINE_FIXTURE_H_
