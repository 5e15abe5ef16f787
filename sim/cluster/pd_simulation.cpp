#include "sim/cluster/pd_simulation.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hardware/topology.h"
#include "sim/base/error.h"
#include "sim/base/resource_limits.h"
#include "sim/cluster/benchmark_client.h"
#include "sim/cluster/pd_cluster.h"
#include "sim/engine/simulator.h"
#include "sim/metrics/benchmark_metrics.h"

namespace servesim::sim {
namespace {

using nlohmann::json;

}  // namespace

void check_pd_flags_need_pools(const SimulationConfig& c) {
  const std::pair<const char*, bool> set[] = {
      {"--prefill-tensor-parallel-size", c.prefill_tensor_parallel_size.has_value()},
      {"--decode-tensor-parallel-size", c.decode_tensor_parallel_size.has_value()},
      {"--prefill-gpu", !c.prefill_gpu.empty()},
      {"--decode-gpu", !c.decode_gpu.empty()},
      {"--kv-transfer-link", !c.kv_transfer_link.empty()},
      {"--pd-local-prefill-threshold", c.pd_local_prefill_threshold != 0},
  };
  for (const auto& [flag, given] : set) {
    if (given) {
      throw ConfigError(std::string(flag) +
                        " applies to disaggregated prefill/decode only; expected it with "
                        "--prefill-replicas and --decode-replicas (both >= 1)");
    }
  }
}

namespace {

// A catalog "sources" entry, or "not stated" when the file has none.
std::string source_text(const json& sources, const char* field) {
  if (sources.is_object() && sources.contains(field) && sources[field].is_string()) {
    return sources[field].get<std::string>();
  }
  return "not stated in the catalog file";
}

// A pool's config: the run's, with the pool's GPU and TP, P/D fields cleared.
SimulationConfig pool_config(const SimulationConfig& c, const std::string& gpu, int tp) {
  SimulationConfig p = c;
  if (!gpu.empty()) p.gpu = gpu;
  p.tensor_parallel_size = tp;
  p.prefill_replicas = p.decode_replicas = 0;
  p.prefill_tensor_parallel_size = p.decode_tensor_parallel_size = std::nullopt;
  p.prefill_gpu.clear();
  p.decode_gpu.clear();
  p.kv_transfer_link.clear();
  p.pd_local_prefill_threshold = 0;
  return p;
}

void check_pool(const PreparedDeployment& p, const char* pool) {
  const std::string name(pool);
  if (p.engine.kv_sliding_groups > 0) {
    throw ConfigError("--" + name + "-replicas: " + p.deployment.model.name +
                      " has sliding-window KV groups, which servesim's P/D does not model");
  }
  if (p.engine.kv_mamba_groups > 0) {
    throw ConfigError("--" + name + "-replicas: " + p.deployment.model.name +
                      " has Gated DeltaNet state pages, which servesim's P/D does not model");
  }
  if (!p.engine.enable_chunked_prefill) {
    throw ConfigError("--" + name + "-replicas with --vllm-version " + p.engine.vllm_version +
                      ": a V0 engine has no KV connector for P/D; expected a V1 release");
  }
  if (!p.frontend.empty()) {
    throw ConfigError("--" + name + "-replicas with --calibration " + p.calibration_source +
                      ": its API-server costs are not modelled with P/D; use a profile without "
                      "frontend terms");
  }
}

}  // namespace

bool pd_enabled(const SimulationConfig& config) {
  return config.prefill_replicas != 0 || config.decode_replicas != 0;
}

PreparedDeployment prepare_pd_deployment(const SimulationConfig& config) {
  if (config.prefill_replicas < 1 || config.decode_replicas < 1) {
    throw ConfigError("--prefill-replicas " + std::to_string(config.prefill_replicas) +
                      " / --decode-replicas " + std::to_string(config.decode_replicas) +
                      ": disaggregated prefill/decode needs both pools; expected both >= 1");
  }
  for (const auto& [flag, tp] :
       {std::pair{"--prefill-tensor-parallel-size", config.prefill_tensor_parallel_size},
        std::pair{"--decode-tensor-parallel-size", config.decode_tensor_parallel_size}}) {
    if (tp && *tp < 1) {
      throw ConfigError(std::string(flag) + " " + std::to_string(*tp) +
                        " is invalid; expected an integer >= 1 (or unset for -tp)");
    }
  }
  if (config.pd_local_prefill_threshold < 0) {
    throw ConfigError(
        "--pd-local-prefill-threshold: " + std::to_string(config.pd_local_prefill_threshold) +
        " is invalid; expected tokens >= 0 (0 = every prompt prefilled remotely)");
  }
  if (config.num_replicas != 1) {
    throw ConfigError("--num-replicas " + std::to_string(config.num_replicas) +
                      " with --prefill-replicas / --decode-replicas: the pools' counts give the "
                      "replicas; expected --num-replicas unset");
  }
  if (config.router != "round-robin") {
    throw ConfigError("--router " + config.router +
                      " with disaggregated prefill/decode: P/D runs use their own pair router "
                      "(least-loaded prefill and decode, docs/deployment-modes.md); expected "
                      "--router unset");
  }
  if (config.pipeline_parallel_size > 1 || config.data_parallel_size > 1) {
    throw ConfigError(
        "--pipeline-parallel-size / --data-parallel-size > 1 with disaggregated "
        "prefill/decode: pipeline or data parallelism inside a pool is not "
        "modelled; expected 1");
  }
  if (!config.engine.spec.method.empty()) {
    throw ConfigError(
        "--speculative-config with disaggregated prefill/decode: a drafter on the decode pool "
        "is not modelled; expected --speculative-config unset");
  }
  if (config.engine.lora.enable_lora) {
    throw ConfigError(
        "--enable-lora with disaggregated prefill/decode: adapters on the pools are not "
        "modelled; expected --enable-lora unset");
  }
  if (config.engine.kv_offloading_size > 0) {
    throw ConfigError(
        "--kv-offloading-size with disaggregated prefill/decode: a CPU tier behind a pool's "
        "KV connector is not modelled; expected --kv-offloading-size unset");
  }
  const int tp_p = config.prefill_tp();
  const int tp_d = config.decode_tp();
  if (tp_d % tp_p != 0) {
    throw ConfigError("--decode-tensor-parallel-size " + std::to_string(tp_d) +
                      " with --prefill-tensor-parallel-size " + std::to_string(tp_p) +
                      ": vLLM's NixlConnector needs the decode TP to be a multiple of the "
                      "prefill TP (\"Decode TP cannot be smaller than prefill TP\")");
  }
  auto prefill = std::make_shared<PreparedDeployment>(
      prepare_single_deployment(pool_config(config, config.prefill_gpu, tp_p)));
  PreparedDeployment decode =
      prepare_single_deployment(pool_config(config, config.decode_gpu, tp_d));
  check_pool(*prefill, "prefill");
  check_pool(decode, "decode");
  if (prefill->engine.block_size != decode.engine.block_size) {
    throw ConfigError("--block-size: the prefill pool's " +
                      std::to_string(prefill->engine.block_size) + " and the decode pool's " +
                      std::to_string(decode.engine.block_size) +
                      " differ; the NixlConnector needs one block size");
  }

  auto pd = std::make_shared<PdDeployment>();
  pd->prefill = prefill;
  const hardware::GpuSpec& gp = prefill->deployment.gpu;
  const hardware::GpuSpec& gd = decode.deployment.gpu;
  if (config.kv_transfer_link == "nvlink") {
    if (gp.name != gd.name || gd.scale_up.kind != "nvlink") {
      throw ConfigError("--kv-transfer-link nvlink: the pools' GPUs (" + gp.name + ", " + gd.name +
                        ") are not one NVLink domain; expected the same GPU with an "
                        "NVLink scale-up link, or a network link (" +
                        [] {
                          std::string s;
                          for (const std::string& n : hardware::network_link_catalog_names()) {
                            s += (s.empty() ? "" : ", ") + n;
                          }
                          return s;
                        }() +
                        ")");
    }
    const int64_t gpus =
        int64_t{config.prefill_replicas} * tp_p + int64_t{config.decode_replicas} * tp_d;
    if (gpus > config.gpus_per_node) {
      throw ConfigError("--kv-transfer-link nvlink: the pools hold " + std::to_string(gpus) +
                        " GPUs, more than one node's " + std::to_string(config.gpus_per_node) +
                        " (--gpus-per-node); expected a network link between nodes");
    }
    pd->link_name = "nvlink";
    pd->link = gd.scale_up;
    pd->link_source = source_text(gd.sources, "scale_up");
  } else {
    const std::string name = config.kv_transfer_link.empty()
                                 ? hardware::default_network_link_name(gd)
                                 : config.kv_transfer_link;
    hardware::NetworkLinkSpec net;
    try {
      net = hardware::load_network_link(name);
    } catch (const ConfigError& e) {  // the loader names --inter-node-link: this is ours
      std::string why = e.what();
      const std::string theirs = "--inter-node-link: ";
      if (why.rfind(theirs, 0) == 0) why = why.substr(theirs.size());
      throw ConfigError("--kv-transfer-link: " + why + " (or nvlink for pools in one node)");
    }
    pd->link_name = net.name.empty() ? name : net.name;
    pd->link = net.link;
    pd->link_shared_per_node = net.shared_per_node;
    pd->link_source = source_text(net.sources, "bandwidth_bytes_per_s");
  }
  // Each prefill rank sends its shard over its own port (the narrower side: tp_d % tp_p == 0).
  pd->instance_bandwidth = pd->link.bandwidth_bytes_per_s * (pd->link_shared_per_node ? 1 : tp_p);
  pd->kv_bytes_per_token =
      static_cast<double>(decode.memory.kv_bytes_per_token) * static_cast<double>(tp_d);
  // The mode's own parameters in the basis, as the other deployment modes' (this basis is the
  // decode pool's; the prefill pool's steps are timed by the same kind of cost model).
  decode.basis.reason += "; P/D: decode pool's basis, KV link " + pd->link_name +
                         " from the link catalog, handoff as vLLM's NixlConnector, not validated";
  decode.pd = std::move(pd);
  return decode;
}

SimulationResult run_pd_simulation(const SimulationConfig& config,
                                   const PreparedDeployment& prepared,
                                   workloads::Workload& workload, const models::CostModel* cost,
                                   const FrontEndCosts* frontend) {
  SERVESIM_CHECK(prepared.pd != nullptr, "run_pd_simulation needs a P/D deployment");
  if (cost != nullptr || frontend != nullptr) {
    throw ConfigError(
        "--prefill-replicas / --decode-replicas: calibration fits do not take "
        "disaggregated prefill/decode runs");
  }
  const PdDeployment& pd = *prepared.pd;
  const PreparedDeployment& pre = *pd.prefill;
  const int64_t gpus = int64_t{config.prefill_replicas} * pre.deployment.tensor_parallel_size +
                       int64_t{config.decode_replicas} * prepared.deployment.tensor_parallel_size;
  if (pd.link_name == "nvlink" && gpus > config.gpus_per_node) {
    throw ConfigError("--kv-transfer-link nvlink: the pools hold " + std::to_string(gpus) +
                      " GPUs, more than one node's " + std::to_string(config.gpus_per_node) +
                      " (--gpus-per-node); expected a network link between nodes");
  }
  if (config.max_concurrency < 0) {
    throw ConfigError("--max-concurrency: " + std::to_string(config.max_concurrency) +
                      " is invalid; expected an integer >= 1");
  }
  if (config.warmup_requests != 0 &&
      (config.warmup_requests < 0 || config.warmup_requests >= workload.size())) {
    throw ConfigError("--warmup-requests: " + std::to_string(config.warmup_requests) +
                      " is invalid; expected 0 <= N < the number of requests (" +
                      std::to_string(workload.size()) + ")");
  }
  check_fits_in_memory("--prefill-replicas x KV blocks per replica",
                       int64_t{config.prefill_replicas} * pre.memory.num_blocks, "KV blocks", 32);
  check_fits_in_memory("--decode-replicas x KV blocks per replica",
                       int64_t{config.decode_replicas} * prepared.memory.num_blocks, "KV blocks",
                       32);

  SimulationResult result;
  const size_t n = static_cast<size_t>(workload.size());
  result.records.resize(n);
  std::vector<metrics::RequestRecord> prefill_records(n);
  engine::Simulator sim;
  const models::CostModel* ideal_d = config.track_ideal_busy ? prepared.ideal_cost.get() : nullptr;
  const models::CostModel* ideal_p = config.track_ideal_busy ? pre.ideal_cost.get() : nullptr;

  std::vector<std::unique_ptr<Replica>> prefill, decode;
  std::vector<Replica*> prefill_ptrs, decode_ptrs;
  PrefillObserver prefill_observer;
  DecodeObserver decode_observer;
  for (int i = 0; i < config.prefill_replicas; ++i) {
    prefill.push_back(std::make_unique<Replica>(i, pre.engine, *pre.cost, ideal_p,
                                                pre.memory.num_blocks, &prefill_records,
                                                &prefill_observer));
    prefill.back()->set_prefill_role();
    prefill_ptrs.push_back(prefill.back().get());
  }
  for (int i = 0; i < config.decode_replicas; ++i) {
    decode.push_back(std::make_unique<Replica>(i, prepared.engine, *prepared.cost, ideal_d,
                                               prepared.memory.num_blocks, &result.records,
                                               &decode_observer));
    decode_ptrs.push_back(decode.back().get());
  }
  PdCluster cluster(pd, prefill_ptrs, decode_ptrs, &result.records, &prefill_records,
                    config.pd_local_prefill_threshold);
  prefill_observer.cluster = &cluster;
  decode_observer.cluster = &cluster;
  for (auto& r : decode) r->set_remote_kv_source(&cluster);
  BenchmarkClient client(workload, cluster, config.max_concurrency, config.warmup_requests,
                         &result.records);
  const double client_overhead = config.offline ? 0.0 : prepared.client_ttft_overhead_s;
  client.set_completion_delay(
      SimTime::from_seconds_ceil(config.metrics.ttft_offset_s + client_overhead));
  cluster.client = &client;
  client.start(sim);
  result.events = sim.run();
  result.simulated_s = sim.now().seconds();
  SERVESIM_CHECK(client.done() == workload.size(), "requests lost: sent " +
                                                       std::to_string(client.sent()) + ", done " +
                                                       std::to_string(client.done()));
  std::vector<ReplicaStats> prefill_stats;
  for (const auto& r : prefill) prefill_stats.push_back(r->stats());
  for (const auto& r : decode) {
    result.replica_stats.push_back(r->stats());
    result.step_logs.push_back(r->take_step_log());
  }
  metrics::MetricsOptions options = config.metrics;
  options.ttft_offset_s += client_overhead;
  options.class_names = workload.class_names();
  result.metrics = metrics::compute_metrics(result.records, result.step_logs, options);
  result.disaggregation = cluster.summary(prepared, prefill_stats, result.replica_stats,
                                          result.simulated_s, result.records);
  return result;
}

void add_pd_config_echo(const SimulationConfig& config, const PreparedDeployment& prepared,
                        json& summary) {
  const PdDeployment& pd = *prepared.pd;
  json& cfg = summary["config"];
  // The cluster echo of aggregated runs (--num-replicas, --router) does not apply to the pools.
  cfg.erase("num_replicas");
  cfg.erase("router");
  cfg["prefill_replicas"] = config.prefill_replicas;
  cfg["decode_replicas"] = config.decode_replicas;
  cfg["prefill_gpu"] = pd.prefill->deployment.gpu.name;
  cfg["decode_gpu"] = prepared.deployment.gpu.name;
  cfg["prefill_tensor_parallel_size"] = pd.prefill->deployment.tensor_parallel_size;
  cfg["decode_tensor_parallel_size"] = prepared.deployment.tensor_parallel_size;
  cfg["kv_transfer_link"] = pd.link_name;
  cfg["pd_local_prefill_threshold"] = config.pd_local_prefill_threshold;
}

void print_pd_summary(std::ostream& out, const json& s) {
  char line[200];
  out << std::string(10, '-') << "disaggregated prefill/decode" << std::string(12, '-') << "\n";
  auto row = [&](const char* label, const std::string& value) {
    std::snprintf(line, sizeof line, "%-40s %s\n", label, value.c_str());
    out << line;
  };
  auto fmt = [](const char* f, double v) {
    char b[64];
    std::snprintf(b, sizeof b, f, v);
    return std::string(b);
  };
  auto ms = [&](const json& v) { return v.is_number() ? fmt("%.2f", v.get<double>()) : "-"; };
  for (const char* pool : {"prefill", "decode"}) {
    const json& p = s[pool];
    row(std::string(pool) == "prefill" ? "Prefill pool (busy fraction):"
                                       : "Decode pool (busy fraction):",
        std::to_string(p["replicas"].get<int64_t>()) + " x " + p["gpu"].get<std::string>() + " TP" +
            std::to_string(p["tensor_parallel_size"].get<int>()) + " (" +
            fmt("%.3f", p["busy_fraction"].get<double>()) + ")");
  }
  const json& x = s["kv_transfer"];
  row("KV link:",
      x["link"].get<std::string>() + ", " +
          fmt("%.1f", x["bandwidth_bytes_per_s_per_decode_instance"].get<double>() / 1e9) +
          " GB/s per decode instance, latency " + fmt("%.1f", x["latency_s"].get<double>() * 1e6) +
          " us");
  row("KV transfers (local prefills):", std::to_string(x["transfers"].get<int64_t>()) + " (" +
                                            std::to_string(s["local_prefills"].get<int64_t>()) +
                                            ")");
  row("KV link utilisation mean / max:", fmt("%.3f", x["link_utilization_mean"].get<double>()) +
                                             " / " +
                                             fmt("%.3f", x["link_utilization_max"].get<double>()));
  const json& ph = s["phases_ms"];
  const std::pair<const char*, const char*> phases[] = {
      {"prefill", "Prefill, from send (ms) mean / p99:"},
      {"decode_admission_wait", "Decode admission wait (ms) mean / p99:"},
      {"transfer", "KV transfer (ms) mean / p50 / p99:"},
      {"first_decode_step", "First decode step (ms) mean / p99:"}};
  for (const auto& [key, label] : phases) {
    const json& v = ph[key];
    std::string text = ms(v["mean"]);
    if (std::string(key) == "transfer") text += " / " + ms(v["p50"]);
    row(label, text + " / " + ms(v["p99"]));
  }
}

}  // namespace servesim::sim
