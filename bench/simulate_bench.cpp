// servesim_bench: how fast one core simulates serving, at every load that matters.
//
// Scenarios (vLLM V1 defaults, shipped calibration, random dataset with exact lengths unless said):
//   5rps     Llama-3.1-8B, one H100-SXM, 1024 in / 256 out, Poisson 5 req/s   (batch ≈ 16)
//   20rps    the same at 20 req/s                                             (batch ≈ 170)
//   100rps   the same at 100 req/s: overload, the queue grows without bound
//   70b-tp4  Llama-3.1-70B, H100-SXM TP4, 1024 / 256, Poisson 8 req/s (a plan's per-replica load)
//   gsp      Llama-3.1-8B, H100-SXM, generated-shared-prefix: 1000 groups of 2048-token system
//            prompts, 128-token questions, 256 out, Poisson 10 req/s (prefix hits and evictions)
//   capacity the old benchmark: 80% of the all-at-once capacity (needs an extra 5,000-request run)
//
// Each scenario runs in its own forked process, so that its peak RSS is its own: bytes/request is
// (peak RSS − RSS before the first run) / requests. The wall time covers run_simulation (workload,
// event loop, vLLM's metrics); the median of --repeats runs is reported, with the median CPU time
// (user + system) and requests per CPU second, the figure to trust on a loaded machine. The
// `check` column is a hash of the result's metrics and counters: two builds that simulate
// identically print the same.
//
// Usage: servesim_bench [--scenarios 5rps,20rps,100rps,70b-tp4,gsp] [--requests 1000000]
//                       [--repeats 3]
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "bench/bench_cli.h"
#include "bench/result_check.h"
#include "sim/cluster/simulation.h"

using servesim::bench::result_check;
using servesim::sim::SimulationConfig;

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double peak_rss_bytes() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) * 1024.0;
}

// User + system CPU seconds of this process so far. On a shared machine the wall time of a
// one-thread run stretches with the load; its CPU time much less (cache sharing still costs).
double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

double current_rss_bytes() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  statm >> pages >> resident;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE));
}

// Fills `c` (default-constructed) with the scenario `name`; false for an unknown name.
bool make_scenario(const std::string& name, int64_t n, SimulationConfig& c) {
  c.model = "llama-3.1-8b";
  c.gpu = "h100-sxm";
  c.workload.random_input_len = 1024;
  c.workload.random_output_len = 256;
  c.workload.num_prompts = n;
  c.metrics.percentile_metrics = {"ttft", "tpot", "itl", "e2el"};
  c.metrics.metric_percentiles = {50, 90, 99};
  if (name == "5rps") {
    c.workload.request_rate = 5;
  } else if (name == "20rps") {
    c.workload.request_rate = 20;
  } else if (name == "100rps") {
    c.workload.request_rate = 100;
  } else if (name == "70b-tp4") {
    c.model = "llama-3.1-70b";
    c.tensor_parallel_size = 4;
    c.engine.max_model_len = 8192;
    c.workload.request_rate = 8;
  } else if (name == "gsp") {
    c.workload.dataset_name = "generated-shared-prefix";
    c.workload.gsp_num_groups = 1000;
    c.workload.gsp_prompts_per_group = static_cast<int32_t>(std::max<int64_t>(1, n / 1000));
    c.workload.gsp_system_prompt_len = 2048;
    c.workload.gsp_question_len = 128;
    c.workload.gsp_output_len = 256;
    c.workload.request_rate = 10;
  } else if (name == "capacity") {
    // Rate set below from a saturating run.
  } else {
    return false;
  }
  return true;
}

// Runs one scenario (in a child process) and prints its row.
int run_scenario(const std::string& name, int64_t n, int repeats) {
  SimulationConfig c;
  make_scenario(name, n, c);
  const servesim::sim::PreparedDeployment prepared = servesim::sim::prepare_deployment(c);
  if (name == "capacity") {
    SimulationConfig saturate = c;
    saturate.workload.num_prompts = 5000;
    saturate.workload.request_rate = std::numeric_limits<double>::infinity();
    c.workload.request_rate =
        0.8 * servesim::sim::run_simulation(saturate, prepared).metrics.request_throughput;
  }
  const double rss_before = current_rss_bytes();
  std::vector<double> walls, cpus;
  uint64_t check = 0;
  int64_t steps = 0, requests = 0;
  double batch = 0;
  int64_t slow_steps = 0, preemptions = 0;
  for (int r = 0; r < repeats; ++r) {
    const double cpu0 = cpu_seconds();
    const auto t0 = std::chrono::steady_clock::now();
    const servesim::sim::SimulationResult res = servesim::sim::run_simulation(c, prepared);
    walls.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    cpus.push_back(cpu_seconds() - cpu0);
    const uint64_t h = result_check(res);
    if (r > 0 && h != check) {
      std::fprintf(stderr, "%s: repeat %d gave a different result\n", name.c_str(), r);
      return 1;
    }
    check = h;
    steps = 0;
    slow_steps = 0;
    preemptions = 0;
    int64_t seqs = 0;
    for (const auto& s : res.replica_stats) {
      steps += s.steps;
      seqs += s.scheduled_seqs;
      slow_steps += s.slow_path_steps;
      preemptions += s.preemptions;
    }
    batch = steps > 0 ? double(seqs) / double(steps) : 0;
    requests = static_cast<int64_t>(res.records.size());
  }
  const double wall = median(walls);
  const double cpu = median(cpus);
  std::printf("%-9s %9lld %8.1f %9.3f %10.0f %10.0f %8.3f %10.0f %9lld %10.0f  %016" PRIx64 "\n",
              name.c_str(), static_cast<long long>(requests), c.workload.request_rate, wall,
              double(requests) / wall, double(steps) / wall, cpu, double(requests) / cpu,
              static_cast<long long>(steps), (peak_rss_bytes() - rss_before) / double(requests),
              check);
  std::fprintf(stderr, "%s: mean batch %.1f, slow-path steps %.1f %%, preemptions %lld, walls",
               name.c_str(), batch, steps > 0 ? 100.0 * double(slow_steps) / double(steps) : 0.0,
               static_cast<long long>(preemptions));
  for (double w : walls) std::fprintf(stderr, " %.3f", w);
  std::fprintf(stderr, ", cpu");
  for (double w : cpus) std::fprintf(stderr, " %.3f", w);
  std::fprintf(stderr, "\n");
  std::fflush(stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> scenarios = {"5rps", "20rps", "100rps", "70b-tp4", "gsp"};
  int64_t requests = 1000000;
  int repeats = 3;
  CLI::App app{
      "servesim_bench: how fast one core simulates serving, one forked process per "
      "scenario (bench/simulate_bench.cpp)",
      "servesim_bench"};
  const CLI::Validator known_scenario(
      [](std::string& s) -> std::string {
        SimulationConfig probe;
        if (make_scenario(s, 1, probe)) return "";
        return "unknown scenario '" + s + "' (expected 5rps, 20rps, 100rps, 70b-tp4, gsp or " +
               "capacity)";
      },
      "SCENARIO");
  app.add_option("--scenarios", scenarios,
                 "comma-separated scenarios: 5rps, 20rps, 100rps, 70b-tp4, gsp, capacity")
      ->delimiter(',')
      ->check(known_scenario)
      ->capture_default_str();
  app.add_option("--requests", requests, "requests per scenario")
      ->check(servesim::bench::at_least(1, true))
      ->capture_default_str();
  app.add_option("--repeats", repeats, "runs per scenario (the median is reported)")
      ->check(servesim::bench::at_least(1, true))
      ->capture_default_str();
  if (const int rc = servesim::bench::parse_command_line(app, argc, argv); rc >= 0) return rc;
  std::printf("%-9s %9s %8s %9s %10s %10s %8s %10s %9s %10s  %s\n", "scenario", "requests", "rate",
              "wall_s", "req_per_s", "steps_per_s", "cpu_s", "req_per_cpu", "steps", "bytes/req",
              "check");
  std::fflush(stdout);
  int failures = 0;
  for (const std::string& s : scenarios) {
    const pid_t pid = fork();
    if (pid == 0) {
      int rc = 1;
      try {
        rc = run_scenario(s, requests, repeats);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "servesim_bench: %s: %s\n", s.c_str(), e.what());
      }
      std::fflush(stdout);
      _exit(rc);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::fprintf(stderr, "servesim_bench: scenario %s failed\n", s.c_str());
      ++failures;
    }
  }
  return failures == 0 ? 0 : 1;
}
