#include "sim/cluster/simulation.h"

#include <algorithm>
#include <cstdint>

#include "models/chat_template_tokens.h"
#include "models/roofline_cost_model.h"
#include "sim/base/error.h"
#include "sim/base/huge_pages.h"
#include "sim/base/resource_limits.h"
#include "sim/cluster/benchmark_client.h"
#include "sim/cluster/pd_simulation.h"
#include "sim/cluster/router.h"
#include "sim/engine/simulator.h"
#include "sim/metrics/benchmark_metrics.h"
#include "sim/replica/pipeline.h"
#include "sim/replica/replica_stats_merge.h"
#include "sim/replica/vllm_version.h"

namespace servesim::sim {
namespace {

// Forwards completions to the client once the replica exists (the two refer to each other).
class ObserverRelay : public RequestObserver {
 public:
  RequestObserver* target = nullptr;
  void on_request_done(engine::Simulator& sim, int64_t id) override {
    target->on_request_done(sim, id);
  }
};

}  // namespace

double client_overhead_s(const SimulationConfig& config, const PreparedDeployment& p) {
  return config.offline ? 0.0 : p.client_ttft_overhead_s;
}

workloads::WorkloadConfig resolved_workload(const SimulationConfig& config) {
  workloads::WorkloadConfig w = config.workload;
  const VllmVersionInfo& v = vllm_version(config.engine.vllm_version);
  if (w.random_range_rule.empty())
    w.random_range_rule = v.legacy_random_lengths ? "legacy" : "symmetric";
  if (w.arrival_rescale.empty()) w.arrival_rescale = v.rescale_arrivals ? "on" : "off";
  // The chat endpoint: the server prefills the model's chat template around every prompt.
  if (workloads::chat_endpoint(w)) {
    const auto t = models::chat_template_tokens_for_model(config.model);
    if (!t) {
      throw ConfigError(
          "--endpoint: /v1/chat/completions with --model " + config.model +
          ": the prompt tokens of its chat template are not known (counted for Qwen3 and "
          "GLM-4.5, models/chat_template_tokens.h); expected --endpoint /v1/completions or a "
          "model of a counted family");
    }
    w.chat_template_tokens = t->tokens;
    w.chat_template_leading = t->leading;
  }
  return w;
}

SimulationResult run_simulation(const SimulationConfig& config,
                                const PreparedDeployment& prepared) {
  std::unique_ptr<workloads::Workload> workload =
      workloads::make_workload(resolved_workload(config));
  return run_simulation(config, prepared, *workload);
}

SimulationResult run_simulation(const SimulationConfig& config, const PreparedDeployment& prepared,
                                workloads::Workload& workload, const models::CostModel* cost,
                                const FrontEndCosts* frontend) {
  if (prepared.pd) return run_pd_simulation(config, prepared, workload, cost, frontend);
  const models::CostModel& step_cost = cost != nullptr ? *cost : *prepared.cost;
  const FrontEndCosts no_frontend;  // offline: no API server
  const FrontEndCosts& frontend_costs = config.offline        ? no_frontend
                                        : frontend != nullptr ? *frontend
                                                              : prepared.frontend;
  if (config.max_concurrency < 0) {
    throw ConfigError("--max-concurrency: " + std::to_string(config.max_concurrency) +
                      " is invalid; expected an integer >= 1");
  }
  if (config.warmup_requests < 0 || config.warmup_requests >= workload.size()) {
    if (config.warmup_requests != 0) {
      throw ConfigError("--warmup-requests: " + std::to_string(config.warmup_requests) +
                        " is invalid; expected 0 <= N < the number of requests (" +
                        std::to_string(workload.size()) + ")");
    }
  }
  if (config.num_replicas < 1) {
    throw ConfigError("--num-replicas: " + std::to_string(config.num_replicas) +
                      " is invalid; expected an integer >= 1");
  }
  const RouterPolicy policy = parse_router_policy(config.router);
  // Resource guards: every replica holds its KV block table (24 B per block, 32 with slack) and a
  // few KiB of queues; refuse what would not fit rather than be killed half-way.
  const int dp = prepared.deployment.data_parallel_size;
  check_fits_in_memory("--num-replicas x --data-parallel-size x KV blocks per replica",
                       static_cast<int64_t>(config.num_replicas) * dp * prepared.memory.num_blocks,
                       "KV blocks", 32);
  check_fits_in_memory("--num-replicas x --data-parallel-size",
                       static_cast<int64_t>(config.num_replicas) * dp, "replicas", 64 * 1024);

  SimulationResult result;
  // Every record is written here (value-initialized): large record arrays are advised to use
  // huge pages first (sim/base/huge_pages.h; advice only).
  result.records.reserve(static_cast<size_t>(workload.size()));
  advise_huge_pages(result.records.data(),
                    result.records.capacity() * sizeof(metrics::RequestRecord));
  result.records.resize(static_cast<size_t>(workload.size()));
  engine::Simulator sim;
  ObserverRelay relay;
  // Pipeline parallelism (sim/replica/pipeline.h): each replica is PP virtual engines (vLLM V0)
  // with 1/PP of the KV blocks each, sharing the replica's stage GPUs. Replica i is engine 0 of its
  // group; its engine v >= 1 has id num_replicas + i·(PP−1) + v − 1 (step_logs are indexed by id).
  const models::CostModel* ideal_cost =
      config.track_ideal_busy ? prepared.ideal_cost.get() : nullptr;
  const int pp = prepared.deployment.pipeline_parallel_size;
  const int64_t engine_blocks = prepared.memory.num_blocks / pp;
  std::vector<std::unique_ptr<Replica>> replicas;
  std::vector<Replica*> replica_ptrs;
  std::vector<std::unique_ptr<Replica>> engines;
  std::vector<std::unique_ptr<PipelineStages>> stages;
  // Data parallelism (sim/replica/dp_group.h): replica i is DP ranks i·DP … i·DP + DP − 1, the
  // first of them its front; an MoE model's ranks step in rounds of their group.
  std::vector<std::unique_ptr<DpGroup>> dp_groups;
  const auto* roofline = dynamic_cast<const models::RooflineCostModel*>(&step_cost);
  for (int i = 0; i < config.num_replicas * dp; ++i) {
    replicas.push_back(std::make_unique<Replica>(i, prepared.engine, step_cost, ideal_cost,
                                                 engine_blocks, &result.records, &relay));
    replicas.back()->set_drafter(prepared.drafter.get());
    if (dp == 1) {
      replica_ptrs.push_back(replicas.back().get());
      continue;
    }
    if (i % dp == 0) {
      dp_groups.push_back(std::make_unique<DpGroup>(
          roofline != nullptr && roofline->dp_coupled() ? roofline : nullptr));
      replica_ptrs.push_back(replicas.back().get());
    }
    dp_groups.back()->add_member(replicas.back().get());
    replicas.back()->set_dp_group(dp_groups.back().get(), i % dp == 0,
                                  prepared.deployment.dp_coupled());
  }
  for (int i = 0; pp > 1 && i < config.num_replicas; ++i) {
    std::vector<Replica*> others;
    for (int v = 1; v < pp; ++v) {
      const int32_t id = config.num_replicas + i * (pp - 1) + v - 1;
      engines.push_back(std::make_unique<Replica>(id, prepared.engine, step_cost, ideal_cost,
                                                  engine_blocks, &result.records, &relay));
      others.push_back(engines.back().get());
    }
    stages.push_back(std::make_unique<PipelineStages>(step_cost, pp));
    replicas[static_cast<size_t>(i)]->set_virtual_engines(std::move(others), stages.back().get());
  }
  Router router(policy, replica_ptrs);
  // Each replica's API server (front_end.h); none when its costs are zero (the default).
  std::vector<std::unique_ptr<FrontEnd>> front_ends;
  if (!frontend_costs.empty()) {
    std::vector<FrontEnd*> fe;
    for (Replica* r : replica_ptrs) {
      front_ends.push_back(std::make_unique<FrontEnd>(frontend_costs, r));
      fe.push_back(front_ends.back().get());
    }
    router.set_front_ends(std::move(fe));
  }
  BenchmarkClient client(workload, router, config.max_concurrency, config.warmup_requests,
                         &result.records);
  client.set_completion_delay(SimTime::from_seconds_ceil(config.metrics.ttft_offset_s +
                                                         client_overhead_s(config, prepared)));
  relay.target = &client;
  client.start(sim);
  result.events = sim.run();
  result.simulated_s = sim.now().seconds();
  SERVESIM_CHECK(client.done() == workload.size(), "requests lost: sent " +
                                                       std::to_string(client.sent()) + ", done " +
                                                       std::to_string(client.done()));

  for (const auto& replica : replicas) {
    result.replica_stats.push_back(replica->stats());
    result.step_logs.push_back(replica->take_step_log());  // moved: the log is 8 B per step
  }
  // Virtual engines: their step logs follow the replicas'; their counters add to their replica's,
  // whose busy time becomes the time at least one micro-batch was in its pipeline.
  for (size_t e = 0; e < engines.size(); ++e) {
    result.step_logs.push_back(engines[e]->take_step_log());
    add_replica_stats(result.replica_stats[e / static_cast<size_t>(pp - 1)], engines[e]->stats(),
                      PeakMerge::kSum);
  }
  for (size_t i = 0; i < stages.size(); ++i) {
    result.replica_stats[i].busy_ns = stages[i]->in_flight_ns();
  }
  metrics::MetricsOptions metrics_options = config.metrics;
  metrics_options.ttft_offset_s += client_overhead_s(config, prepared);
  metrics_options.class_names = workload.class_names();
  result.metrics = metrics::compute_metrics(result.records, result.step_logs, metrics_options);
  return result;
}

}  // namespace servesim::sim
