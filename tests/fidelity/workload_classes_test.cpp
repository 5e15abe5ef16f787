// Workload classes end to end: per-class metrics against the pooled ones, and the priority
// policy serving the high-priority class first.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "sim/cluster/simulation.h"

namespace servesim::sim {
namespace {

namespace fs = std::filesystem;

std::string write_file(const std::string& name, const std::string& text) {
  const fs::path d =
      fs::temp_directory_path() / ("servesim_classes_sim_" + std::to_string(::getpid()));
  fs::create_directories(d);
  const fs::path p = d / name;
  std::ofstream(p) << text;
  return p.string();
}

SimulationConfig base_config() {
  SimulationConfig c;
  c.model = "llama-3.1-8b";
  c.gpu = "h100-sxm";
  c.workload.num_prompts = 400;
  c.workload.request_rate = 10;
  c.workload.seed = 3;
  c.metrics.percentile_metrics = {"ttft", "tpot", "itl", "e2el"};
  c.metrics.metric_percentiles = {50, 90, 99};
  return c;
}

void check_same(const metrics::BenchmarkMetrics& a, const metrics::BenchmarkMetrics& b) {
  CHECK(a.completed == b.completed);
  CHECK(a.failed == b.failed);
  CHECK(a.total_input_tokens == b.total_input_tokens);
  CHECK(a.total_output_tokens == b.total_output_tokens);
  CHECK(a.duration_s == b.duration_s);
  CHECK(a.request_throughput == b.request_throughput);
  CHECK(a.output_throughput == b.output_throughput);
  CHECK(a.max_concurrent_requests == b.max_concurrent_requests);
  CHECK(a.max_output_tokens_per_s == b.max_output_tokens_per_s);
  for (const char* key : {"ttft", "tpot", "itl", "e2el"}) {
    INFO(key);
    const metrics::MetricSummary& x = a.summaries.at(key);
    const metrics::MetricSummary& y = b.summaries.at(key);
    CHECK(x.mean_ms == y.mean_ms);
    CHECK(x.median_ms == y.median_ms);
    CHECK(x.std_ms == y.std_ms);
    CHECK(x.percentiles_ms == y.percentiles_ms);
  }
}

TEST_CASE("one class: the class's metrics are the pooled metrics", "[fidelity][classes]") {
  // Expectations: with a single class of share 1 every request belongs to it, so its metrics are
  // computed over the same records as the pooled ones: equal exactly, field by field.
  SimulationConfig c = base_config();
  c.workload.workload_file = write_file("one.json", R"({"classes": [
    {"name": "all", "share": 1,
     "prompt": {"dist": "lognormal", "mean": 600, "sigma": 0.7, "max": 4000},
     "output": {"dist": "lognormal", "mean": 150, "sigma": 0.5, "max": 1000}}]})");
  const PreparedDeployment p = prepare_deployment(c);
  const SimulationResult r = run_simulation(c, p);
  REQUIRE(r.metrics.classes.size() == 1);
  CHECK(r.metrics.classes[0].name == "all");
  CHECK(r.metrics.completed == 400);
  check_same(r.metrics.classes[0].metrics, r.metrics);
}

TEST_CASE("two classes: counts and throughputs add up to the pooled ones", "[fidelity][classes]") {
  // Expectations: every request is in exactly one class, so completed, failed and token counts
  // add up exactly; throughputs share the pooled duration, so they add up to rounding.
  // The pooled median lies between the classes' medians.
  SimulationConfig c = base_config();
  c.workload.workload_file = write_file("two.json", R"({"classes": [
    {"name": "chat", "share": 0.7, "prompt": {"dist": "fixed", "tokens": 300},
     "output": {"dist": "fixed", "tokens": 100}},
    {"name": "rag", "share": 0.3, "prompt": {"dist": "fixed", "tokens": 6000},
     "output": {"dist": "fixed", "tokens": 200}}]})");
  const PreparedDeployment p = prepare_deployment(c);
  const SimulationResult r = run_simulation(c, p);
  REQUIRE(r.metrics.classes.size() == 2);
  const metrics::BenchmarkMetrics& chat = r.metrics.classes[0].metrics;
  const metrics::BenchmarkMetrics& rag = r.metrics.classes[1].metrics;
  CHECK(chat.completed + rag.completed == r.metrics.completed);
  CHECK(chat.failed + rag.failed == r.metrics.failed);
  CHECK(chat.total_input_tokens == 300 * chat.completed);
  CHECK(rag.total_input_tokens == 6000 * rag.completed);
  CHECK(chat.total_input_tokens + rag.total_input_tokens == r.metrics.total_input_tokens);
  CHECK(chat.total_output_tokens + rag.total_output_tokens == r.metrics.total_output_tokens);
  CHECK(chat.request_throughput + rag.request_throughput ==
        Approx(r.metrics.request_throughput).epsilon(1e-12));
  CHECK(chat.output_throughput + rag.output_throughput ==
        Approx(r.metrics.output_throughput).epsilon(1e-12));
  // Long prompts take longer to prefill: the RAG class's TTFT is the higher one.
  CHECK(rag.summaries.at("ttft").median_ms > chat.summaries.at("ttft").median_ms);
  const double pooled = r.metrics.summaries.at("ttft").median_ms;
  CHECK(pooled >= chat.summaries.at("ttft").median_ms);
  CHECK(pooled <= rag.summaries.at("ttft").median_ms);
  // Records carry their class.
  for (const auto& rec : r.records) CHECK((rec.class_id == 0 || rec.class_id == 1));
}

TEST_CASE("priority policy: the high-priority class gets the lower TTFT under load",
          "[fidelity][classes][priority]") {
  // In details: two classes with identical lengths (2048 in / 64 out), half the requests each,
  // priority 0 ("high") and 1 ("low"); 600 requests at 60 req/s, about twice what one H100
  // prefills (the waiting queue grows). vLLM's priority policy admits the waiting request with
  // the lowest (priority, arrival) first and preempts the highest one.
  // Expectations: with --scheduling-policy priority the high class's mean and P90 TTFT are far
  // below the low class's (the high class waits only for other high requests: less than half
  // the queue); with fcfs the two classes see the same queue, so their mean TTFTs are within
  // 25% of each other.
  SimulationConfig c = base_config();
  c.workload.num_prompts = 600;
  c.workload.request_rate = 60;
  c.workload.workload_file = write_file("prio.json", R"({"classes": [
    {"name": "high", "share": 0.5, "priority": 0, "prompt": {"dist": "fixed", "tokens": 2048},
     "output": {"dist": "fixed", "tokens": 64}},
    {"name": "low", "share": 0.5, "priority": 1, "prompt": {"dist": "fixed", "tokens": 2048},
     "output": {"dist": "fixed", "tokens": 64}}]})");
  c.engine.enable_prefix_caching = false;
  c.engine.scheduling_policy = "priority";
  const PreparedDeployment p = prepare_deployment(c);
  const SimulationResult r = run_simulation(c, p);
  REQUIRE(r.metrics.classes.size() == 2);
  const auto& high = r.metrics.classes[0].metrics.summaries.at("ttft");
  const auto& low = r.metrics.classes[1].metrics.summaries.at("ttft");
  INFO("priority: high mean " << high.mean_ms << " ms, low mean " << low.mean_ms << " ms");
  CHECK(high.mean_ms * 2 < low.mean_ms);
  CHECK(high.percentiles_ms[1].second < low.percentiles_ms[1].second);

  c.engine.scheduling_policy = "fcfs";
  const PreparedDeployment pf = prepare_deployment(c);
  const SimulationResult f = run_simulation(c, pf);
  const double h = f.metrics.classes[0].metrics.summaries.at("ttft").mean_ms;
  const double l = f.metrics.classes[1].metrics.summaries.at("ttft").mean_ms;
  INFO("fcfs: high mean " << h << " ms, low mean " << l << " ms");
  CHECK(h / l == Approx(1.0).margin(0.25));
}

}  // namespace
}  // namespace servesim::sim
