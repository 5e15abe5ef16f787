// The simulated no-queue TTFT floor of a measured run, and the warning when the run measured less.
//
// The floor is the least TTFT the declared deployment gives the run, simulated with the same cost
// model, calibration, client overhead and front end as the run's prediction:
//   * arrivals known (the file's send times, or everything sent at t = 0): the run's own requests
//     replayed with one output token each ("prefill-only replay"). No decode competes for the
//     step's token budget or the KV cache, so each request waits only for its own prefill and
//     those ahead of it: the simulated TTFT of the real run can only be higher. For a burst this
//     is the prefill queue (200 prompts of 1,020 tokens at 2,048 tokens per step take seconds).
//   * otherwise (Poisson or constant arrivals the file does not record, a closed loop whose send
//     times depend on the replies): one request alone on an idle engine ("lone request"), of the
//     run's mean prompt for the mean TTFT (the floor grows with the prompt and is close to linear,
//     so the mean of per-request floors is at least the floor of the mean, by Jensen's inequality
//     where it is convex) and of the median prompt for the median TTFT (a monotone floor maps the
//     median prompt to the median floor), the latter only with per-request lengths. A shared prompt
//     prefix (MeasuredRun::shared_prefix_tokens) is taken as cached: only the rest is prefilled.
// A run declared with a warm prefix cache keeps it in both (the prompts are replayed once first).
//
// A measured TTFT below the floor means the simulated deployment is not the one that was measured:
// most often the server's prefix cache already held the prompts (an earlier run of the same sweep
// with the same seed), or the GPU, tensor parallel size, model, quantisation or vLLM version
// differ from what was declared. Close to the floor, the simulated prefill may itself be too slow.
#ifndef SERVESIM_SIM_MEASURED_TTFT_FLOOR_H_
#define SERVESIM_SIM_MEASURED_TTFT_FLOOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sim/measured/measured_run.h"
#include "sim/measured/replay.h"

namespace servesim::measured {

struct TtftFloor {
  std::string kind;  // "prefill-only replay", "lone request", "" = no floor (no prompt length)
  double mean_ms = kUnknown;    // floor of the mean TTFT
  double median_ms = kUnknown;  // floor of the median TTFT (NaN when not determined)
  // Lone request: the prompts simulated (the run's mean, rounded; its median, 0 = not known).
  int32_t mean_prompt_tokens = 0;
  int32_t median_prompt_tokens = 0;
};

// The floor of `run` on `prepared` (prepare_deployment(config)), by simulate_measured_run. Throws
// ConfigError as simulate_measured_run does.
TtftFloor ttft_floor(const MeasuredRun& run, const sim::SimulationConfig& config,
                     const sim::PreparedDeployment& prepared, const Calibration& calibration);

// One warning per measured statistic (mean_ttft_ms, median_ttft_ms) strictly below its floor,
// naming the measured value, the floor, how it was simulated and the likely causes. Empty
// otherwise.
std::vector<std::string> ttft_floor_warnings(const MeasuredRun& run, const TtftFloor& floor);

}  // namespace servesim::measured

#endif  // SERVESIM_SIM_MEASURED_TTFT_FLOOR_H_
