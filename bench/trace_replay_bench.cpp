// servesim_trace_bench: how fast one core replays a recorded trace (--dataset-name trace).
//
// Default: the Azure LLM inference trace 2023, conversation (19,366 requests, CRLF CSV, streamed
// from data/realdata), Llama-3.1-8B on one H100-SXM with vLLM V1 defaults, arrivals as recorded
// (5.53 req/s) and rescaled to 15 req/s. The times cover the whole run_simulation call: both
// passes over the file, the event loop and vLLM's metrics. Median of --repeats runs, in wall time
// and in this process's CPU time (std::clock: on a shared, oversubscribed machine the wall time
// mostly measures the wait for a core; the CPU time is what the run costs).
//
// Usage: servesim_trace_bench [--trace FILE] [--format azure] [--rates 0,15] [--repeats 5]
//                             [--model M] [--gpu G] [-tp N]      (rate 0 = as recorded)
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "bench/bench_cli.h"
#include "bench/result_check.h"
#include "sim/base/json_file.h"
#include "sim/cluster/simulation.h"

using servesim::sim::SimulationConfig;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

}  // namespace

int main(int argc, char** argv) {
  SimulationConfig base;
  base.model = "llama-3.1-8b";
  base.gpu = "h100-sxm";
  base.workload.dataset_name = "trace";
  base.workload.trace =
      (servesim::data_dir() / "data/realdata/azure_llm_trace_2023/AzureLLMInferenceTrace_conv.csv")
          .string();
  base.workload.trace_format = "azure";
  std::vector<double> rates = {0, 15};
  int repeats = 5;
  CLI::App app{
      "servesim_trace_bench: how fast one core replays a recorded trace "
      "(bench/trace_replay_bench.cpp)",
      "servesim_trace_bench"};
  app.add_option("--trace", base.workload.trace, "the trace file")->capture_default_str();
  app.add_option("--format", base.workload.trace_format, "its format (--trace-format)")
      ->capture_default_str();
  app.add_option("--rates", rates,
                 "comma-separated request rates in req/s the arrivals are rescaled to; 0 = as "
                 "recorded")
      ->delimiter(',')
      ->check(servesim::bench::at_least(0))
      ->capture_default_str();
  app.add_option("--repeats", repeats, "runs per rate (the median is reported)")
      ->check(servesim::bench::at_least(1, true))
      ->capture_default_str();
  app.add_option("--model", base.model, "the model")->capture_default_str();
  app.add_option("--gpu", base.gpu, "the GPU")->capture_default_str();
  app.add_option("--tensor-parallel-size", base.tensor_parallel_size, "tensor-parallel GPUs [-tp]")
      ->check(servesim::bench::at_least(1, true))
      ->capture_default_str();
  if (const int rc =
          servesim::bench::parse_command_line(app, argc, argv, {{"-tp", "--tensor-parallel-size"}});
      rc >= 0) {
    return rc;
  }
  const servesim::sim::PreparedDeployment prepared = servesim::sim::prepare_deployment(base);
  std::printf("trace %s (%s), model %s, gpu %s TP%d; median of %d runs\n\n",
              base.workload.trace.c_str(), base.workload.trace_format.c_str(), base.model.c_str(),
              base.gpu.c_str(), base.tensor_parallel_size, repeats);
  std::printf("%10s %10s %10s %12s %10s %14s %14s %10s %10s %9s  %s\n", "rate", "requests",
              "wall_s", "req_per_s", "cpu_s", "req_per_cpu_s", "sim_s_per_s", "steps", "p99_ttft",
              "rss_MiB", "check");
  for (double rate : rates) {
    SimulationConfig c = base;
    if (rate > 0) c.workload.request_rate = rate;
    std::vector<double> walls, cpus;
    servesim::sim::SimulationResult last;
    for (int r = 0; r < repeats; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      const std::clock_t c0 = std::clock();
      last = servesim::sim::run_simulation(c, prepared);
      cpus.push_back(static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC);
      walls.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    const double wall = median(walls);
    const double cpu = median(cpus);
    double p99 = 0;
    for (const auto& [p, v] : last.metrics.summaries.at("ttft").percentiles_ms) {
      if (p == 99) p99 = v;
    }
    const auto n = static_cast<double>(last.records.size());
    std::printf("%10s %10.0f %10.4f %12.0f %10.4f %14.0f %14.0f %10lld %9.1fms %9.0f  %016llx\n",
                rate > 0 ? std::to_string(rate).substr(0, 6).c_str() : "recorded", n, wall,
                n / wall, cpu, n / cpu, last.simulated_s / wall,
                static_cast<long long>(last.replica_stats[0].steps), p99, peak_rss_mib(),
                static_cast<unsigned long long>(servesim::bench::result_check(last)));
  }
  return 0;
}
