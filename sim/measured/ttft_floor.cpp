#include "sim/measured/ttft_floor.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <tuple>
#include <utility>

namespace servesim::measured {
namespace {

// TTFT (ms) of one `prompt`-token request sent to the idle deployment.
double one_request_ttft_ms(const MeasuredRun& run, const sim::SimulationConfig& config,
                           const sim::PreparedDeployment& prepared, const Calibration& calibration,
                           int32_t prompt) {
  MeasuredRun lone;
  lone.id = run.id + " (TTFT floor)";
  lone.path = run.path;
  lone.format = run.format;
  lone.deployment = run.deployment;
  lone.num_prompts = 1;
  lone.seed = run.seed;
  lone.has_start_times = true;
  lone.warm_prefix_cache = run.warm_prefix_cache;
  lone.offline = run.offline;
  MeasuredRequest r;
  r.start_s = 0;
  // A shared prefix is cached after the first request of the run: prefill the rest only.
  r.input_tokens = std::max(1, prompt - std::max(0, run.shared_prefix_tokens));
  r.output_tokens = 2;  // the first token is all TTFT measures; a second keeps it a decode request
  lone.requests.push_back(r);
  sim::SimulationConfig c = config;
  c.workload.num_prompts = 1;
  c.workload.request_rate = std::numeric_limits<double>::infinity();
  c.max_concurrency = 0;
  ReplayOptions one;
  one.seeds = 1;
  const Prediction p = simulate_measured_run(lone, c, prepared, calibration, one);
  auto it = p.metrics.find("mean_ttft_ms");
  return it == p.metrics.end() ? kUnknown : it->second;
}

// The run's requests with one output token each, same arrivals: mean and median TTFT (ms).
std::pair<double, double> prefill_only_ttft_ms(const MeasuredRun& run,
                                               const sim::SimulationConfig& config,
                                               const sim::PreparedDeployment& prepared,
                                               const Calibration& calibration) {
  MeasuredRun prefill = run;
  prefill.id = run.id + " (TTFT floor)";
  prefill.metrics.clear();
  for (MeasuredRequest& r : prefill.requests) r.output_tokens = 1;
  if (prefill.requests.empty()) prefill.mean_output_tokens = 1;
  ReplayOptions one;
  one.seeds = 1;
  const Prediction p = simulate_measured_run(prefill, config, prepared, calibration, one);
  auto get = [&](const char* key) {
    auto it = p.metrics.find(key);
    return it == p.metrics.end() ? kUnknown : it->second;
  };
  return {get("mean_ttft_ms"), get("median_ttft_ms")};
}

std::string ms(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f ms", v);
  return buf;
}

}  // namespace

TtftFloor ttft_floor(const MeasuredRun& run, const sim::SimulationConfig& config,
                     const sim::PreparedDeployment& prepared, const Calibration& calibration) {
  TtftFloor f;
  std::vector<int32_t> prompts;
  for (const MeasuredRequest& r : run.requests) {
    if (!r.failed && r.input_tokens >= 1 && r.output_tokens >= 1) prompts.push_back(r.input_tokens);
  }
  double mean = run.mean_input_tokens;
  if (!prompts.empty()) {
    double sum = 0;
    for (int32_t p : prompts) sum += p;
    mean = sum / double(prompts.size());
  }
  if (!(mean >= 1 && mean <= 2147483647.0)) return f;  // no prompt length known: no floor
  const bool timed = run.has_start_times && !run.requests.empty();
  const bool burst = std::isinf(run.request_rate) && run.max_concurrency == 0;
  if (timed || burst) {
    f.kind = "prefill-only replay";
    std::tie(f.mean_ms, f.median_ms) = prefill_only_ttft_ms(run, config, prepared, calibration);
    return f;
  }
  f.kind = "lone request";
  f.mean_prompt_tokens = static_cast<int32_t>(std::lround(mean));
  f.mean_ms = one_request_ttft_ms(run, config, prepared, calibration, f.mean_prompt_tokens);
  if (!prompts.empty()) {
    // np.median: the mean of the two middle values for an even count.
    std::sort(prompts.begin(), prompts.end());
    const size_t n = prompts.size();
    const double median =
        n % 2 ? prompts[n / 2] : 0.5 * (double(prompts[n / 2 - 1]) + double(prompts[n / 2]));
    f.median_prompt_tokens = static_cast<int32_t>(std::lround(median));
    f.median_ms =
        f.median_prompt_tokens == f.mean_prompt_tokens
            ? f.mean_ms
            : one_request_ttft_ms(run, config, prepared, calibration, f.median_prompt_tokens);
  }
  return f;
}

std::vector<std::string> ttft_floor_warnings(const MeasuredRun& run, const TtftFloor& floor) {
  std::vector<std::string> out;
  auto check = [&](const char* key, const char* stat, double floor_ms, int32_t prompt) {
    auto it = run.metrics.find(key);
    if (it == run.metrics.end() || !std::isfinite(it->second) || !std::isfinite(floor_ms)) return;
    if (!(it->second < floor_ms)) return;
    const std::string how =
        floor.kind == "lone request"
            ? "one " + std::to_string(prompt) + "-token prompt, the run's " + stat +
                  ", alone on an idle engine, with the client overhead"
            : std::string(
                  "the run's requests with their arrivals and prompts and one output "
                  "token each, with the client overhead");
    out.push_back(std::string("measured ") + stat + " TTFT " + ms(it->second) +
                  " is below the simulated floor " + ms(floor_ms) + " (" + how +
                  "): likely a warm prefix cache on the server (declare \"warm_prefix_cache\": "
                  "true in a sidecar) or a deployment that differs from what was declared (GPU, "
                  "tensor parallel size, model, quantisation, vLLM version); else the simulated "
                  "prefill is slower than this deployment's");
  };
  check("mean_ttft_ms", "mean", floor.mean_ms, floor.mean_prompt_tokens);
  check("median_ttft_ms", "median", floor.median_ms, floor.median_prompt_tokens);
  return out;
}

}  // namespace servesim::measured
