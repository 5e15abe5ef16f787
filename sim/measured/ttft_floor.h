// The simulated no-queue TTFT floor of a measured run, and the warning when the run measured less.
//
// The floor is the TTFT of one request alone on an idle engine of the run's deployment: the
// prefill of its prompt (chunked as the engine chunks it) plus the client and API-server overhead,
// simulated with the same cost model, calibration and front end as the run's prediction. Queueing
// only adds to it, so a measured TTFT below it means the simulated deployment is not the one that
// was measured: most often the server's prefix cache already held the prompts (an earlier run of
// the same sweep), or the GPU, tensor parallel size, model, quantisation or vLLM version differ
// from what was declared.
//
// Which prompt: the mean TTFT is compared with the floor of the mean prompt (the floor grows with
// the prompt and is close to linear, so the mean of the per-request floors is at least the floor
// of the mean, by Jensen's inequality where it is convex); the median TTFT with the floor of the
// median prompt (a monotone floor maps the median prompt to the median floor), only when the file
// has per-request lengths. A shared prompt prefix (MeasuredRun::shared_prefix_tokens) is taken as
// cached: only the rest of the prompt is prefilled. A run declared with a warm prefix cache keeps
// it (the request is replayed once before it is timed).
#ifndef SERVESIM_SIM_MEASURED_TTFT_FLOOR_H_
#define SERVESIM_SIM_MEASURED_TTFT_FLOOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sim/measured/measured_run.h"
#include "sim/measured/replay.h"

namespace servesim::measured {

struct TtftFloor {
  int32_t mean_prompt_tokens = 0;  // the run's mean prompt, rounded (0 = unknown)
  double mean_prompt_ms = kUnknown;
  int32_t median_prompt_tokens = 0;  // 0 when the file has no per-request lengths
  double median_prompt_ms = kUnknown;
};

// The floor of `run` on `prepared` (prepare_deployment(config)), as simulate_measured_run would
// predict a one-request run. Throws ConfigError as simulate_measured_run does.
TtftFloor ttft_floor(const MeasuredRun& run, const sim::SimulationConfig& config,
                     const sim::PreparedDeployment& prepared, const Calibration& calibration);

// One warning per measured statistic (mean_ttft_ms, median_ttft_ms) strictly below its floor,
// naming the measured value, the floor, the prompt and the likely causes. Empty otherwise.
std::vector<std::string> ttft_floor_warnings(const MeasuredRun& run, const TtftFloor& floor);

}  // namespace servesim::measured

#endif  // SERVESIM_SIM_MEASURED_TTFT_FLOOR_H_
