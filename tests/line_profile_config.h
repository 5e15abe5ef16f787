#ifndef SERVESIM_TESTS_LINE_PROFILE_CONFIG_H_
#define SERVESIM_TESTS_LINE_PROFILE_CONFIG_H_

#include <cstdint>
#include <optional>
#include <string>

#include "sim/cluster/simulation.h"

namespace servesim::test {

// A deployment inside the model and weights of the shipped vLLM 0.11 async host-line profiles
// (hardware/calibration/vllm-0.11-async/{h100-sxm,h200}.json: Llama-3.1-70B FP8, closed-loop
// InferenceX runs up to concurrency 64); the GPU, TP, engine and load are the test's to vary
// (async: --[no-]async-scheduling, std::nullopt for the release's default).
inline sim::SimulationConfig line_profile_config(const std::string& gpu, int tp,
                                                 const std::string& version,
                                                 std::optional<bool> async,
                                                 int64_t max_concurrency) {
  sim::SimulationConfig c;
  c.model = "llama-3.1-70b-fp8";
  c.quantization = "fp8";
  c.gpu = gpu;
  c.tensor_parallel_size = tp;
  c.engine.vllm_version = version;
  c.engine.async_scheduling = async;
  c.max_concurrency = max_concurrency;
  return c;
}

}  // namespace servesim::test

#endif  // SERVESIM_TESTS_LINE_PROFILE_CONFIG_H_
