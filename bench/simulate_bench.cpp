// servesim_bench: how fast one core simulates a chat-like workload.
//
// Workload: random 1024/256 (vLLM's random dataset, exact lengths), Llama-3.1-8B on one H100-SXM
// with vLLM V1 defaults, Poisson arrivals at 80% of the replica's capacity. Capacity is measured
// first as the completed-request throughput of an all-at-once (--request-rate inf) run.
// For each size (10k, 100k, 1M requests by default) the run is repeated and the median wall time
// reported, with simulated requests and simulated seconds per wall second.
//
// Usage: servesim_bench [--sizes 10000,100000,1000000] [--repeats 5] [--model M] [--gpu G]
//                       [--kernel-table auto|none|FILE]
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

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
  std::vector<int64_t> sizes = {10000, 100000, 1000000};
  int repeats = 5;
  SimulationConfig base;
  base.model = "llama-3.1-8b";
  base.gpu = "h100-sxm";
  base.workload.random_input_len = 1024;
  base.workload.random_output_len = 256;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--sizes") {
      sizes.clear();
      std::stringstream ss(value);
      std::string item;
      while (std::getline(ss, item, ',')) sizes.push_back(std::stoll(item));
    } else if (flag == "--repeats") {
      repeats = std::stoi(value);
    } else if (flag == "--model") {
      base.model = value;
    } else if (flag == "--gpu") {
      base.gpu = value;
    } else if (flag == "--kernel-table") {
      base.kernel_table = value == "auto" ? "" : value;
    } else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }

  const servesim::sim::PreparedDeployment prepared = servesim::sim::prepare_deployment(base);

  SimulationConfig saturate = base;
  saturate.workload.num_prompts = 5000;
  const auto sat = servesim::sim::run_simulation(saturate, prepared);
  const double capacity = sat.metrics.request_throughput;
  std::printf("model %s, gpu %s, random 1024/256: capacity %.2f req/s (all-at-once, 5000 requests)\n",
              base.model.c_str(), base.gpu.c_str(), capacity);
  std::printf("kernel times: %s\n", prepared.kernel_source.c_str());
  std::printf("load: Poisson at 80%% of capacity = %.2f req/s; median of %d runs\n\n",
              0.8 * capacity, repeats);
  std::printf("%10s %10s %12s %14s %14s %10s %10s %9s\n", "requests", "wall_s", "req_per_s",
              "sim_s_per_s", "events_per_s", "steps", "p99_ttft", "rss_MiB");

  for (int64_t n : sizes) {
    SimulationConfig c = base;
    c.workload.num_prompts = n;
    c.workload.request_rate = 0.8 * capacity;
    std::vector<double> walls;
    servesim::sim::SimulationResult last;
    for (int r = 0; r < repeats; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      last = servesim::sim::run_simulation(c, prepared);
      walls.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    const double wall = median(walls);
    double p99 = 0;
    for (const auto& [p, v] : last.metrics.summaries.at("ttft").percentiles_ms) {
      if (p == 99) p99 = v;
    }
    std::printf("%10lld %10.3f %12.0f %14.0f %14.0f %10lld %9.1fms %9.0f\n",
                static_cast<long long>(n), wall, double(n) / wall, last.simulated_s / wall,
                double(last.events) / wall, static_cast<long long>(last.replica_stats[0].steps),
                p99, peak_rss_mib());
  }
  return 0;
}
