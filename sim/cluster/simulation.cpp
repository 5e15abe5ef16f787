#include "sim/cluster/simulation.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>

#include "hardware/gpu_spec.h"
#include "hardware/topology.h"
#include "models/model_spec.h"
#include "models/roofline_cost_model.h"
#include "sim/base/error.h"
#include "sim/base/huge_pages.h"
#include "sim/base/json_file.h"
#include "sim/base/resource_limits.h"
#include "sim/calibration/prediction_basis.h"
#include "sim/calibration/profile.h"
#include "sim/cluster/benchmark_client.h"
#include "sim/cluster/drafter.h"
#include "sim/cluster/lora_report.h"
#include "sim/cluster/pd_simulation.h"
#include "sim/cluster/router.h"
#include "sim/engine/simulator.h"
#include "sim/metrics/benchmark_metrics.h"
#include "sim/metrics/result_writer.h"
#include "sim/replica/kv_offload.h"
#include "sim/replica/lora_config.h"
#include "sim/replica/pipeline.h"
#include "sim/replica/speculative_config.h"
#include "sim/replica/vllm_version.h"
#include "workloads/workload_classes.h"

namespace servesim::sim {
namespace {

std::string gib(double bytes) {
  std::ostringstream os;
  os.precision(2);
  os << std::fixed << bytes / double(1ull << 30) << " GiB";
  return os.str();
}

// Forwards completions to the client once the replica exists (the two refer to each other).
class ObserverRelay : public RequestObserver {
 public:
  RequestObserver* target = nullptr;
  void on_request_done(engine::Simulator& sim, int64_t id) override {
    target->on_request_done(sim, id);
  }
};

// The calibration's client TTFT overhead, which an offline run (no client) does not have.
double client_overhead_s(const SimulationConfig& config, const PreparedDeployment& p) {
  return config.offline ? 0.0 : p.client_ttft_overhead_s;
}

// TTFT and TPOT of the measured (non-warmup) completed requests of each replica, defined as in
// vLLM's calculate_metrics (TPOT only for output > 1), with MetricsOptions::ttft_offset_s added
// to TTFT (with the calibration's client overhead) as run_simulation's compute_metrics call does.
nlohmann::json per_replica_summary(const SimulationConfig& config, const PreparedDeployment& p,
                                   const SimulationResult& r) {
  using nlohmann::json;
  const size_t n = r.replica_stats.size();
  std::vector<std::vector<double>> ttft(n), tpot(n);
  std::vector<int64_t> requests(n, 0);
  const double offset_s = config.metrics.ttft_offset_s + client_overhead_s(config, p);
  for (const auto& rec : r.records) {
    // Virtual engines of pipeline-parallel replicas (ids >= n) count for their replica.
    const size_t engine = static_cast<size_t>(rec.replica);
    const size_t extra = n > 0 ? (r.step_logs.size() - n) / n : 0;
    const size_t i = engine < n || extra == 0 ? engine : (engine - n) / extra;
    if (i >= n || rec.warmup) continue;
    ++requests[i];
    if (!rec.completed) continue;
    const double t = (rec.first_token - rec.arrival).seconds() + offset_s;
    ttft[i].push_back(t * 1e3);
    if (rec.output_tokens > 1) {
      const double e2e = (rec.last_token - rec.arrival).seconds() + offset_s;
      tpot[i].push_back((e2e - t) / (rec.output_tokens - 1) * 1e3);
    }
  }
  auto summary = [](std::vector<double>& v) {
    if (v.empty()) return json{{"mean", nullptr}, {"median", nullptr}, {"p99", nullptr}};
    std::sort(v.begin(), v.end());
    double sum = 0;
    for (double x : v) sum += x;
    return json{{"mean", sum / double(v.size())},
                {"median", metrics::percentile_linear(v, 50)},
                {"p99", metrics::percentile_linear(v, 99)}};
  };
  json out = json::array();
  for (size_t i = 0; i < n; ++i) {
    const ReplicaStats& s = r.replica_stats[i];
    const json t1 = summary(ttft[i]);
    const json t2 = summary(tpot[i]);
    out.push_back(json{
        {"replica", i},
        {"requests", requests[i]},
        {"completed", static_cast<int64_t>(ttft[i].size())},
        {"mean_ttft_ms", t1["mean"]},
        {"median_ttft_ms", t1["median"]},
        {"p99_ttft_ms", t1["p99"]},
        {"mean_tpot_ms", t2["mean"]},
        {"median_tpot_ms", t2["median"]},
        {"p99_tpot_ms", t2["p99"]},
        {"busy_fraction", r.simulated_s > 0 ? double(s.busy_ns) * 1e-9 / r.simulated_s : 0.0},
        {"preemptions", s.preemptions},
        {"num_steps", s.steps},
        {"mean_batch_size", double(s.scheduled_seqs) / double(std::max<int64_t>(1, s.steps))},
        {"prefix_cache_hit_rate",
         s.prefix_queried_tokens > 0 ? double(s.prefix_hit_tokens) / double(s.prefix_queried_tokens)
                                     : 0.0},
    });
  }
  return out;
}

// Blocks one request of max_model_len tokens needs with sliding-window groups: its full-attention
// blocks plus, per sliding group, cdiv(min(W − 1 + max_num_batched_tokens, max_model_len),
// block_size) + 1 (SlidingWindowSpec.max_memory_usage_bytes).
// --quantization as vLLM resolves it against an integer-weight checkpoint (w4a16 / w8a16): the
// checkpoint's own method with its Marlin kernel ("awq_marlin", "gptq_marlin",
// "compressed-tensors") is what vLLM picks when the flag is unset, so it reads as unset. "awq" or
// "gptq" given explicitly makes vLLM force the non-Marlin kernel ("Detected that the model can
// run with awq_marlin, however you specified quantization=awq explicitly, so forcing awq"),
// which servesim does not model: refused. Any other value is returned as given.
std::string checkpoint_quantization_flag(const std::string& flag, const models::ModelSpec& m) {
  const std::string& method = m.checkpoint_quant_method;
  if (flag.empty() || method.empty()) return flag;
  if (flag == method + "_marlin" || (flag == method && method == "compressed-tensors")) return "";
  if (flag == method) {
    throw ConfigError("--quantization: '" + flag + "' makes vLLM force its non-Marlin " + flag +
                      " kernel for " + m.name +
                      ", which servesim does not model; leave it unset "
                      "(vLLM then runs " +
                      flag + "_marlin) or give '" + flag + "_marlin'");
  }
  return flag;
}

int64_t blocks_for_longest_request(const EngineConfig& e) {
  const int64_t bs = e.block_size;
  const int64_t len = e.max_model_len;
  const int64_t window_tokens =
      std::min<int64_t>(e.kv_sliding_window - 1 + e.max_num_batched_tokens, len);
  return (len + bs - 1) / bs + e.kv_sliding_groups * ((window_tokens + bs - 1) / bs + 1);
}

}  // namespace

PreparedDeployment prepare_deployment(const SimulationConfig& config) {
  if (pd_enabled(config)) return prepare_pd_deployment(config);  // two pools (pd_simulation.h)
  check_pd_flags_need_pools(config);
  return prepare_single_deployment(config);
}

PreparedDeployment prepare_single_deployment(const SimulationConfig& config) {
  PreparedDeployment p;
  models::Deployment& d = p.deployment;
  p.model = models::resolve_model(config.model);
  d.model = models::load_model(p.model);
  models::apply_dtype(d.model, config.dtype);
  d.gpu = hardware::load_gpu(config.gpu);
  if (config.tensor_parallel_size < 1) {
    throw ConfigError("--tensor-parallel-size: " + std::to_string(config.tensor_parallel_size) +
                      " is invalid; expected an integer >= 1");
  }
  if (config.pipeline_parallel_size < 1) {
    throw ConfigError("--pipeline-parallel-size: " + std::to_string(config.pipeline_parallel_size) +
                      " is invalid; expected an integer >= 1");
  }
  if (d.model.num_heads % config.tensor_parallel_size != 0) {
    throw ConfigError("--tensor-parallel-size: " + std::to_string(config.tensor_parallel_size) +
                      " does not divide the " + std::to_string(d.model.num_heads) +
                      " attention heads of " + d.model.name +
                      " (vLLM requires num_attention_heads % tensor_parallel_size == 0)");
  }
  if (config.pipeline_parallel_size > d.model.num_layers) {
    throw ConfigError("--pipeline-parallel-size: " + std::to_string(config.pipeline_parallel_size) +
                      " exceeds the " + std::to_string(d.model.num_layers) + " layers of " +
                      d.model.name);
  }
  const std::string quantization = checkpoint_quantization_flag(config.quantization, d.model);
  if (!quantization.empty() && quantization != "fp8" && quantization != "mxfp4") {
    throw ConfigError("--quantization: '" + config.quantization +
                      "' is not supported; expected 'fp8' or 'mxfp4' (or leave it unset for the "
                      "checkpoint's own format)");
  }
  if (config.quantization == "mxfp4" && !d.model.is_moe()) {
    throw ConfigError("--quantization mxfp4: " + d.model.name +
                      " has no MoE experts (vLLM's MXFP4 quantizes the FusedMoE layers only)");
  }
  static const char* kKvDtypes[] = {"auto", "fp8", "fp8_e4m3", "fp8_e5m2"};
  if (std::find(std::begin(kKvDtypes), std::end(kKvDtypes), config.kv_cache_dtype) ==
      std::end(kKvDtypes)) {
    throw ConfigError("--kv-cache-dtype: '" + config.kv_cache_dtype +
                      "' is not supported; expected auto, fp8, fp8_e4m3 or fp8_e5m2");
  }
  if (config.data_parallel_size < 1) {
    throw ConfigError("--data-parallel-size: " + std::to_string(config.data_parallel_size) +
                      " is invalid; expected an integer >= 1");
  }
  if (config.data_parallel_size > 1 && config.pipeline_parallel_size > 1) {
    throw ConfigError("--data-parallel-size " + std::to_string(config.data_parallel_size) +
                      " with --pipeline-parallel-size " +
                      std::to_string(config.pipeline_parallel_size) +
                      ": data parallelism over pipeline stages is not modelled");
  }
  if (config.enable_expert_parallel && !d.model.is_moe()) {
    throw ConfigError("--enable-expert-parallel: " + d.model.name + " has no MoE experts");
  }
  d.tensor_parallel_size = config.tensor_parallel_size;
  d.pipeline_parallel_size = config.pipeline_parallel_size;
  d.data_parallel_size = config.data_parallel_size;
  d.enable_expert_parallel = config.enable_expert_parallel;
  if (d.enable_expert_parallel && d.model.num_experts % d.moe_group_size() != 0) {
    throw ConfigError("--enable-expert-parallel: the " + std::to_string(d.model.num_experts) +
                      " experts of " + d.model.name + " do not split evenly over TP x DP = " +
                      std::to_string(d.moe_group_size()) + " GPUs");
  }
  // The node's GPUs are vertices of the topology graph: bounded, so that 100000 is an error
  // rather than the machine's memory (the largest scale-up domains, NVL72/NVL576, are far below).
  constexpr int kMaxGpusPerNode = 1024;
  if (config.gpus_per_node < 1 || config.gpus_per_node > kMaxGpusPerNode) {
    throw ConfigError("--gpus-per-node: " + std::to_string(config.gpus_per_node) +
                      " is invalid; expected an integer from 1 to " +
                      std::to_string(kMaxGpusPerNode));
  }
  d.gpus_per_node = config.gpus_per_node;
  if (!config.inter_node_link.empty()) {
    d.inter_node = hardware::load_network_link(config.inter_node_link);
  }
  d.quantization = checkpoint_quantization_flag(config.quantization, d.model);
  d.kv_cache_dtype = config.kv_cache_dtype;
  d.enforce_eager = config.enforce_eager;
  d.ideal = config.ideal;
  if (config.calibration != "none") {
    std::string path = config.calibration;
    if (path.empty()) {
      path =
          calibration::default_calibration_path(d.gpu.name, host_line(config.engine)).value_or("");
    }
    if (!path.empty()) {
      d.calibration = calibration::load_calibration(path);
      // Named from "hardware/" on when shipped, so that messages do not depend on the tree's place.
      const size_t shipped = path.rfind("hardware/calibration/");
      calibration::check_profile_gpu(
          d.calibration, d.gpu,
          config.calibration.empty() && shipped != std::string::npos ? path.substr(shipped) : path);
      p.calibration_source = path;
      p.client_ttft_overhead_s =
          calibration::value_or(d.calibration.terms.client_ttft_overhead_s, 0.0);
      p.frontend = FrontEndCosts::from_calibration(d.calibration);
    }
  }
  d.kernels = models::resolve_kernel_source(config.kernel_table, d.gpu, d.calibration.kernels,
                                            p.calibration_source);
  p.kernel_source = d.kernels.label();
  p.basis = prediction_basis(p, prediction_query(config, p));

  p.engine = resolve_engine_config(config.engine, d.gpu, d.model);
  p.engine.lora = resolve_lora_config(config.engine.lora, d);
  if (p.engine.lora.enable_lora) p.basis = prediction_basis(p, prediction_query(config, p));
  if (config.workload.num_lora_adapters > 0 && !p.engine.lora.enable_lora) {
    throw ConfigError("--num-lora-adapters: " + std::to_string(config.workload.num_lora_adapters) +
                      " adapters named by the requests, but --enable-lora is not set; expected "
                      "--enable-lora (vLLM rejects a request for an adapter it does not serve)");
  }
  // Pipeline-parallel replicas run vLLM V0's virtual engines (sim/replica/pipeline.h), whose
  // micro-batches already overlap; async scheduling applies to single-stage replicas only.
  if (config.pipeline_parallel_size > 1) p.engine.async_scheduling = 0;
  // servesim's virtual engines keep every layer of a stage in each block (docs/semantics.md).
  if (config.pipeline_parallel_size > 1) {
    p.engine.kv_layers_per_block = 0;
    p.engine.kv_sliding_groups = 0;
    p.engine.kv_sliding_window = 0;
  }
  d.cuda_graph_sizes =
      models::default_cuda_graph_sizes(p.engine.max_num_seqs, p.engine.max_num_batched_tokens,
                                       vllm_version(p.engine.vllm_version).cuda_graphs);

  models::MemoryPlanOptions mo;
  mo.gpu_memory_utilization = p.engine.gpu_memory_utilization;
  mo.block_size = p.engine.block_size;
  mo.max_num_batched_tokens = p.engine.max_num_batched_tokens;
  mo.max_num_seqs = p.engine.max_num_seqs;
  mo.num_gpu_blocks_override = p.engine.num_gpu_blocks_override;
  mo.kv_layers_per_block = p.engine.kv_layers_per_block;
  mo.kv_cache_groups = 1 + p.engine.kv_sliding_groups;
  if (p.engine.lora.enable_lora) {
    mo.lora_slots = p.engine.lora.max_loras;
    mo.lora_rank = p.engine.lora.max_lora_rank;
  }
  p.memory = models::plan_memory(d, mo);
  resolve_kv_offload(p.engine, d.gpu, p.memory, config.tensor_parallel_size,
                     config.pipeline_parallel_size, config.data_parallel_size);
  if (p.engine.kv_offload_blocks > 0 && p.engine.spec.enabled()) {
    throw ConfigError(
        "--speculative-config with --kv-offloading-size: the two are not modelled together "
        "(the CPU tier's stores follow one token per decode step); expected one of them");
  }
  if (p.engine.spec.enabled() || p.engine.kv_offload_blocks > 0) {
    p.basis = prediction_basis(p, prediction_query(config, p));  // with the mode's own line
  }
  if (p.engine.lora.enable_lora && (p.engine.spec.enabled() || p.engine.kv_offload_blocks > 0)) {
    throw ConfigError(std::string("--enable-lora with ") +
                      (p.engine.spec.enabled() ? "--speculative-config" : "--kv-offloading-size") +
                      ": the two are not modelled together; expected one of them");
  }

  // vLLM V1 refuses to start when one request of max_model_len tokens cannot fit in the KV cache
  // (kv_cache_utils.check_enough_kv_cache_memory), suggesting a smaller --max-model-len.
  const bool too_long = p.engine.kv_sliding_groups > 0
                            ? p.memory.num_blocks < blocks_for_longest_request(p.engine)
                            : p.memory.kv_tokens < p.engine.max_model_len;
  if (too_long) {
    const bool user_set = config.engine.max_model_len > 0;
    throw ConfigError("--max-model-len: " + std::to_string(p.engine.max_model_len) +
                      (user_set ? "" : " (the model's default)") + " tokens need " +
                      gib(double(p.engine.max_model_len) * double(p.memory.kv_bytes_per_token)) +
                      " of KV cache per GPU but only " + gib(p.memory.kv_bytes) + " (" +
                      std::to_string(p.memory.kv_tokens) +
                      " tokens) is available; set --max-model-len to at most " +
                      std::to_string(p.memory.kv_tokens) +
                      " or increase --gpu-memory-utilization / --tensor-parallel-size");
  }

  // The KV cache manager indexes blocks with int32 (sim/replica/kv_cache_manager.h).
  if (p.memory.num_blocks > std::numeric_limits<int32_t>::max()) {
    throw ConfigError("--num-gpu-blocks-override: " + std::to_string(p.memory.num_blocks) +
                      " KV blocks per replica is too many; expected at most " +
                      std::to_string(std::numeric_limits<int32_t>::max()));
  }
  p.cost = models::make_cost_model(d);
  if (const auto* roofline = dynamic_cast<const models::RooflineCostModel*>(p.cost.get())) {
    p.physics_floor = roofline->physics_floor();
  }
  models::Deployment ideal = d;
  ideal.ideal = true;
  p.ideal_cost = models::make_cost_model(ideal);
  if (p.engine.spec.enabled()) {
    if (config.pipeline_parallel_size > 1) {
      throw ConfigError(
          "--speculative-config with --pipeline-parallel-size " +
          std::to_string(config.pipeline_parallel_size) +
          ": not modelled (servesim's pipeline stages run vLLM V0's virtual engines)");
    }
    p.drafter = make_drafter_cost(p.engine.spec, d);
  }
  return p;
}

std::string host_line(const EngineConfig& engine) {
  const std::string line = vllm_minor_version(engine.vllm_version);
  if (line.empty()) return "";
  const VllmVersionInfo& v = vllm_version(line);
  if (v.engine == EngineGeneration::kV0) return line + " V0";
  const bool async =
      engine.async_scheduling < 0 ? v.async_scheduling_default : engine.async_scheduling == 1;
  return line + (async ? " async" : " sync");
}

workloads::WorkloadConfig resolved_workload(const SimulationConfig& config) {
  workloads::WorkloadConfig w = config.workload;
  const VllmVersionInfo& v = vllm_version(config.engine.vllm_version);
  if (w.random_range_rule.empty())
    w.random_range_rule = v.legacy_random_lengths ? "legacy" : "symmetric";
  if (w.arrival_rescale.empty()) w.arrival_rescale = v.rescale_arrivals ? "on" : "off";
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
    const ReplicaStats s = engines[e]->stats();
    ReplicaStats& t = result.replica_stats[e / static_cast<size_t>(pp - 1)];
    t.steps += s.steps;
    t.steps_below_ideal += s.steps_below_ideal;
    t.scheduled_seqs += s.scheduled_seqs;
    t.scheduled_tokens += s.scheduled_tokens;
    t.preemptions += s.preemptions;
    t.slow_path_steps += s.slow_path_steps;
    t.peak_used_blocks += s.peak_used_blocks;
    t.peak_running += s.peak_running;
    t.peak_step_tokens = std::max(t.peak_step_tokens, s.peak_step_tokens);
    t.outstanding_ns += s.outstanding_ns;
    t.prefix_queried_tokens += s.prefix_queried_tokens;
    t.prefix_hit_tokens += s.prefix_hit_tokens;
    t.prefix_evicted_blocks += s.prefix_evicted_blocks;
    t.ideal_busy_s += s.ideal_busy_s;
    t.used_blocks_now += s.used_blocks_now;
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

calibration::PredictionQuery prediction_query(const SimulationConfig& config,
                                              const PreparedDeployment& prepared) {
  const models::Deployment& d = prepared.deployment;
  calibration::PredictionQuery q;
  q.gpu = d.gpu.name;
  q.model = d.model.name;  // the catalog name of an HF id, as profiles' domains record models
  q.tensor_parallel_size = d.tensor_parallel_size;
  q.pipeline_parallel_size = d.pipeline_parallel_size;
  q.dtype = d.weight_format().empty() ? "bf16" : d.weight_format();
  // The load one replica serves: the router spreads the client's rate and concurrency over the
  // replicas (a profile's domain records one server's). A trace replayed as recorded (no
  // --request-rate) brings its own rate, unknown here: not stated (0), so not checked.
  const workloads::WorkloadConfig& w = config.workload;
  // P/D: `prepared` is the decode pool, whose instances share the load.
  const double replicas =
      std::max(1, pd_enabled(config) ? config.decode_replicas : config.num_replicas);
  const bool recorded_trace =
      w.dataset_name == "trace" && std::isinf(w.request_rate) && w.trace_time_scale > 0;
  q.request_rate = recorded_trace                  ? 0.0
                   : std::isfinite(w.request_rate) ? w.request_rate / replicas
                                                   : w.request_rate;
  q.max_concurrency =
      config.max_concurrency > 0
          ? static_cast<int64_t>(std::ceil(static_cast<double>(config.max_concurrency) / replicas))
          : config.max_concurrency;
  q.host_line = host_line(config.engine);
  return q;
}

calibration::PredictionBasis prediction_basis(const PreparedDeployment& prepared,
                                              const calibration::PredictionQuery& q) {
  // Shipped profiles are named from the repository root, so result files do not depend on
  // where the repository lives.
  calibration::PredictionBasis b = calibration::classify_prediction(
      prepared.calibration_source.empty() ? nullptr : &prepared.deployment.calibration,
      relative_to_data_dir(prepared.calibration_source), q);
  // Nothing fitted on serving runs, but the kernels may still be measured: say so, rather than
  // claim datasheet peaks for a step timed from a kernel table.
  if (b.label == "datasheet-only" && prepared.deployment.kernels.profile) {
    b.reason = "no calibration profile: kernel times " + prepared.kernel_source +
               ", the catalog's host overheads";
  }
  // LoRA's own parameters (docs/deployment-modes.md, "LoRA"), whatever the calibration.
  const LoraConfig& l = prepared.engine.lora;
  if (l.enable_lora) {
    const bool assumed = l.load_gbps == kDefaultLoraLoadGbps || l.h2d_gbps == kDefaultLoraH2dGbps;
    b.reason += std::string("; LoRA: kernels roofline, adapter loads at ") +
                (assumed ? "assumed" : "given") + " bandwidths, not validated";
  }
  // Speculative decoding and KV offload likewise (docs/deployment-modes.md).
  if (prepared.engine.spec.enabled()) {
    b.reason += "; speculative decoding: acceptance from the given " +
                prepared.engine.spec.acceptance_source +
                " (none measured here), drafter timed by the target's cost model, not validated";
  }
  if (prepared.engine.kv_offload_blocks > 0) {
    b.reason += "; KV offload: copies at the host link's PCIe peak (not measured), not validated";
  }
  return b;
}

nlohmann::json catalog_model_json(const PreparedDeployment& prepared) {
  const std::string& name = prepared.model.catalog_name;
  return name.empty() ? nlohmann::json(nullptr) : nlohmann::json(name);
}

nlohmann::json prediction_basis_json(const PreparedDeployment& prepared) {
  return {{"basis", prepared.basis.label}, {"reason", prepared.basis.reason}};
}

// The CPU tier of KV offloading over all replicas (sim/replica/kv_offload.h). Hit rates in
// prompt tokens: GPU and CPU over every prompt token looked up (they add up to the share not
// prefilled); the tier's own over the full-block tokens that reached it (beyond the GPU hit).
namespace {

nlohmann::json kv_offload_summary(const PreparedDeployment& p, const SimulationResult& r) {
  using nlohmann::json;
  KvOffloadStats t;
  int64_t queried = 0, gpu_hits = 0;
  for (const ReplicaStats& s : r.replica_stats) {
    queried += s.prefix_queried_tokens;
    gpu_hits += s.prefix_hit_tokens;
    t.queried_tokens += s.offload.queried_tokens;
    t.hit_tokens += s.offload.hit_tokens;
    t.loads += s.offload.loads;
    t.loaded_blocks += s.offload.loaded_blocks;
    t.stored_blocks += s.offload.stored_blocks;
    t.evicted_blocks += s.offload.evicted_blocks;
    t.load_s += s.offload.load_s;
    t.load_wait_s += s.offload.load_wait_s;
    t.store_s += s.offload.store_s;
    t.max_store_lag_s = std::max(t.max_store_lag_s, s.offload.max_store_lag_s);
  }
  const auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
  const double replicas = static_cast<double>(std::max<size_t>(1, r.replica_stats.size()));
  const hardware::LinkSpec& link = p.engine.kv_offload_link;
  return json{
      {"backend", "native"},
      {"size_gib", p.engine.kv_offloading_size},
      {"cpu_blocks_per_replica", p.engine.kv_offload_blocks},
      {"block_bytes_per_gpu", p.engine.kv_offload_block_bytes},
      {"host_link",
       {{"kind", link.kind},
        {"bandwidth_bytes_per_s", link.bandwidth_bytes_per_s},
        {"latency_s", link.latency_s},
        // Where the copy rate comes from (the catalog's note: a spec peak, not measured).
        {"source", p.deployment.gpu.sources.value("host_link", "not stated in the GPU file")}}},
      {"gpu_hit_rate", ratio(double(gpu_hits), double(queried))},
      {"cpu_hit_rate", ratio(double(t.hit_tokens), double(queried))},
      {"cpu_tier_hit_rate", ratio(double(t.hit_tokens), double(t.queried_tokens))},
      {"cpu_queried_tokens", t.queried_tokens},
      {"cpu_hit_tokens", t.hit_tokens},
      {"loads", t.loads},
      {"loaded_blocks", t.loaded_blocks},
      {"stored_blocks", t.stored_blocks},
      {"evicted_blocks", t.evicted_blocks},
      {"load_time_s", t.load_s},
      {"mean_load_ms", ratio(t.load_s, double(t.loads)) * 1e3},
      {"mean_load_wait_ms", ratio(t.load_wait_s, double(t.loads)) * 1e3},
      {"store_link_busy_fraction", ratio(t.store_s, r.simulated_s * replicas)},
      {"max_store_lag_ms", t.max_store_lag_s * 1e3},
  };
}

}  // namespace

nlohmann::json servesim_summary(const SimulationConfig& config, const PreparedDeployment& p,
                                const SimulationResult& r) {
  using nlohmann::json;
  const models::Deployment& d = p.deployment;
  json cfg = {
      {"model", config.model},
      {"catalog_model", catalog_model_json(p)},
      {"gpu", d.gpu.name},
      {"tensor_parallel_size", d.tensor_parallel_size},
      {"pipeline_parallel_size", d.pipeline_parallel_size},
      {"quantization", d.quantization.empty() ? json(nullptr) : json(d.quantization)},
      {"kv_cache_dtype", d.kv_cache_dtype},
      {"enforce_eager", d.enforce_eager},
      {"ideal", d.ideal},
      {"max_num_seqs", p.engine.max_num_seqs},
      {"max_num_batched_tokens", p.engine.max_num_batched_tokens},
      {"block_size", p.engine.block_size},
      {"gpu_memory_utilization", p.engine.gpu_memory_utilization},
      {"enable_prefix_caching", p.engine.enable_prefix_caching},
      {"long_prefill_token_threshold", p.engine.long_prefill_token_threshold},
      {"max_model_len", p.engine.max_model_len},
      {"scheduling_policy", p.engine.scheduling_policy},
      {"num_gpu_blocks_override", p.engine.num_gpu_blocks_override},
      {"vllm_version", p.engine.vllm_version},
      {"async_scheduling", p.engine.async_scheduling == 1},
      {"dataset_name", config.workload.dataset_name},
      {"random_input_len", config.workload.random_input_len},
      {"random_output_len", config.workload.random_output_len},
      {"random_range_ratio", config.workload.random_range_ratio},
      {"random_prefix_len", config.workload.random_prefix_len},
      {"arrival_process", config.workload.arrival_process},
      {"random_range_rule", resolved_workload(config).random_range_rule},
      {"arrival_rescale", resolved_workload(config).arrival_rescale},
      {"seed", config.workload.seed},
      {"warmup_requests", config.warmup_requests},
  };
  // Placement over nodes, echoed only when it matters (pipeline stages or several nodes), so
  // one-node TP-only result files stay as they were.
  const hardware::Placement placement =
      hardware::place_replica(d.tensor_parallel_size, d.pipeline_parallel_size, d.gpus_per_node);
  // Echoed only when set, so that result files of other runs stay as they were.
  if (config.engine.disable_hybrid_kv_cache_manager) cfg["disable_hybrid_kv_cache_manager"] = true;
  if (d.data_parallel_size > 1) cfg["data_parallel_size"] = d.data_parallel_size;
  if (d.enable_expert_parallel) cfg["enable_expert_parallel"] = true;
  if (config.dtype != "auto" || d.model.checkpoint_dtype == "float32") {
    cfg["dtype"] = config.dtype;  // with the checkpoint's, when vLLM's "auto" rule decided
    cfg["checkpoint_dtype"] = d.model.checkpoint_dtype;
    cfg["dtype_bytes"] = d.model.dtype_bytes;
  }
  if (p.engine.enable_chunked_prefill == 0) cfg["enable_chunked_prefill"] = false;
  if (p.engine.num_scheduler_steps > 1) cfg["num_scheduler_steps"] = p.engine.num_scheduler_steps;
  if (d.pipeline_parallel_size > 1 || placement.num_nodes > 1) {
    cfg["gpus_per_node"] = d.gpus_per_node;
    cfg["num_nodes"] = placement.num_nodes;
    cfg["inter_node_link"] = placement.num_nodes == 1 ? json(nullptr)
                             : d.inter_node.name.empty()
                                 ? json(hardware::default_network_link_name(d.gpu))
                                 : json(d.inter_node.name);
  }
  if (config.workload.dataset_name == "generated-shared-prefix") {
    cfg["gsp_num_groups"] = config.workload.gsp_num_groups;
    cfg["gsp_prompts_per_group"] = config.workload.gsp_prompts_per_group;
    cfg["gsp_system_prompt_len"] = config.workload.gsp_system_prompt_len;
    cfg["gsp_question_len"] = config.workload.gsp_question_len;
    cfg["gsp_output_len"] = config.workload.gsp_output_len;
  }

  // The dataset's own settings, echoed for the datasets that have them (random and
  // generated-shared-prefix files stay as they were).
  const workloads::WorkloadConfig& w = config.workload;
  if (w.dataset_name == "trace") {
    cfg["trace"] = w.trace;
    cfg["trace_format"] = w.trace_format;
    cfg["trace_time_scale"] = w.trace_time_scale;
    cfg["trace_start"] = w.trace_start;
    cfg["trace_duration"] = w.trace_duration;
  } else if (w.dataset_name == "sharegpt" || w.dataset_name == "sharegpt-multiturn" ||
             w.dataset_name == "custom" || w.dataset_name == "burstgpt") {
    cfg["dataset_path"] = w.dataset_path;
    // The file the lengths came from (the shipped set when --dataset-path is not given).
    cfg["dataset_file"] = relative_to_data_dir(workloads::dataset_file(w));
    cfg["num_prompts"] = w.num_prompts;
  }

  ReplicaStats total;
  for (const ReplicaStats& s : r.replica_stats) {
    total.steps += s.steps;
    total.busy_ns += s.busy_ns;
    total.scheduled_seqs += s.scheduled_seqs;
    total.scheduled_tokens += s.scheduled_tokens;
    total.preemptions += s.preemptions;
    total.peak_used_blocks = std::max(total.peak_used_blocks, s.peak_used_blocks);
    total.prefix_queried_tokens += s.prefix_queried_tokens;
    total.prefix_hit_tokens += s.prefix_hit_tokens;
    total.prefix_evicted_blocks += s.prefix_evicted_blocks;
    total.ideal_busy_s += s.ideal_busy_s;
    total.steps_below_ideal += s.steps_below_ideal;
    total.slow_path_steps += s.slow_path_steps;
  }
  const double replicas = static_cast<double>(std::max<size_t>(1, r.replica_stats.size()));
  const double steps = static_cast<double>(std::max<int64_t>(1, total.steps));

  // Ideal-roofline TPOT bound: a decode step of the mean decode batch on the ideal model.
  models::BatchShape decode;
  decode.decode_seqs = 1;
  decode.decode_context_tokens = config.workload.random_input_len;
  decode.sampled_seqs = 1;
  const double ideal_tpot_ms = p.ideal_cost->estimate(decode).total_s * 1e3;

  // What the client sent: every measured request, completed or not (warm-ups excluded), with the
  // prompt and output lengths the workload gave it. vLLM's total_input_tokens and
  // total_output_tokens count completed requests only.
  int64_t preempted_requests = 0, sent = 0;
  double sent_input = 0.0, sent_output = 0.0;
  for (const auto& rec : r.records) {
    preempted_requests += rec.preemptions > 0;
    if (rec.warmup) continue;
    ++sent;
    sent_input += rec.prompt_tokens;
    sent_output += rec.output_tokens;
  }
  const double per_request = sent > 0 ? 1.0 / double(sent) : 0.0;

  json out = {
      {"version", "0.1"},
      {"config", cfg},
      {"kernel_source", p.kernel_source},
      {"kv_cache",
       {{"num_gpu_blocks", p.memory.num_blocks},
        {"block_size", p.engine.block_size},
        {"kv_tokens", p.memory.kv_tokens},
        {"kv_bytes_per_token_per_gpu", p.memory.kv_bytes_per_token},
        {"kv_cache_gib_per_gpu", p.memory.kv_bytes / double(1ull << 30)},
        {"weights_gib_per_gpu", p.memory.weight_bytes / double(1ull << 30)},
        {"activation_gib_per_gpu", p.memory.activation_bytes / double(1ull << 30)},
        {"non_torch_gib_per_gpu", p.memory.non_torch_bytes / double(1ull << 30)},
        {"max_concurrency_at_max_model_len",
         p.engine.kv_sliding_groups > 0
             ? double(p.memory.num_blocks) / double(blocks_for_longest_request(p.engine))
             : double(p.memory.kv_tokens) / double(p.engine.max_model_len)},
        {"peak_used_blocks", total.peak_used_blocks}}},
      {"preemptions", total.preemptions},
      {"preempted_requests", preempted_requests},
      {"sent",
       {{"requests", sent},
        {"mean_input_tokens", sent_input * per_request},
        {"mean_output_tokens", sent_output * per_request}}},
      {"prefix_cache_hit_rate",
       total.prefix_queried_tokens > 0
           ? double(total.prefix_hit_tokens) / double(total.prefix_queried_tokens)
           : 0.0},
      {"num_steps", total.steps},
      {"mean_batch_size", double(total.scheduled_seqs) / steps},
      {"mean_batch_tokens", double(total.scheduled_tokens) / steps},
      {"busy_fraction",
       r.simulated_s > 0 ? double(total.busy_ns) * 1e-9 / (r.simulated_s * replicas) : 0.0},
      {"ideal_busy_fraction_of_busy",
       total.busy_ns > 0 ? total.ideal_busy_s / (double(total.busy_ns) * 1e-9) : 0.0},
      {"ideal_tpot_bound_ms", ideal_tpot_ms},
      {"simulated_time_s", r.simulated_s},
      {"num_replicas", r.replica_stats.size()},
      {"prediction", prediction_basis_json(p)},
  };
  // The physics floor (docs/cost_model.md, "What a measured table is bound by"): absent when it
  // never binds, so that results stay as they were.
  if (!p.physics_floor.empty())
    out["physics_floor"] = "tables raised to the ideal roofline: " + p.physics_floor;
  if (total.steps_below_ideal > 0) out["steps_below_ideal"] = total.steps_below_ideal;
  if (p.engine.kv_sliding_groups > 0) {
    // vLLM's hybrid KV layout (docs/semantics.md, "Sliding-window layers"); absent otherwise.
    out["kv_cache"]["kv_cache_groups"] = 1 + p.engine.kv_sliding_groups;
    out["kv_cache"]["layers_per_block"] = p.engine.kv_layers_per_block;
    out["kv_cache"]["sliding_window"] = p.engine.kv_sliding_window;
  }
  if ((w.dataset_name != "random" && w.dataset_name != "generated-shared-prefix") || w.multi_turn ||
      !w.workload_file.empty()) {
    // Prefix-cache counters in tokens and blocks (not echoed for the two original datasets, to
    // keep their result files byte-identical).
    out["prefix_cache"] = {{"queried_tokens", total.prefix_queried_tokens},
                           {"hit_tokens", total.prefix_hit_tokens},
                           {"evicted_blocks", total.prefix_evicted_blocks}};
  }
  if (p.engine.kv_offload_blocks > 0) out["kv_offload"] = kv_offload_summary(p, r);
  if (w.multi_turn) {
    out["config"]["multi_turn"] = true;
    out["config"]["num_turns"] = w.num_turns;
    out["config"]["think_time"] = w.think_time;
    out["config"]["think_time_dist"] = w.think_time_dist;
  }
  if (!w.workload_file.empty()) {
    // Each class: its definition, then its metrics under vLLM's key names (the pooled ones are
    // the result file's top-level keys). SLO verdicts are added by the command (sim/app).
    out["config"]["workload"] = relative_to_data_dir(w.workload_file);
    const workloads::WorkloadClasses classes = workloads::load_workload_classes(w.workload_file);
    metrics::MetricsOptions options = config.metrics;
    json list = json::array();
    for (size_t c = 0; c < r.metrics.classes.size() && c < classes.classes.size(); ++c) {
      const workloads::WorkloadClass& k = classes.classes[c];
      json item = json(metrics::metrics_summary_json(r.metrics.classes[c].metrics, options));
      item["name"] = k.name;
      item["share"] = k.share;
      item["priority"] = k.priority;
      if (!k.empirical_source.empty()) item["lengths_source"] = k.empirical_source;
      list.push_back(std::move(item));
    }
    out["classes"] = std::move(list);
  }
  if (p.engine.spec.enabled()) {
    out["config"]["speculative_config"] = speculative_config_json(p.engine.spec);
    out["speculative_decoding"] =
        spec_decode_summary(p.engine.spec, r.replica_stats, p.kernel_source);
  }
  if (r.replica_stats.size() > 1) {
    out["config"]["num_replicas"] = config.num_replicas;
    out["config"]["router"] = config.router;
    out["replicas"] = per_replica_summary(config, p, r);
  }
  if (p.pd) {
    add_pd_config_echo(config, p, out);
    out["disaggregation"] = r.disaggregation;
  }
  add_lora_summary(config, p, r, out);
  return out;
}

}  // namespace servesim::sim
