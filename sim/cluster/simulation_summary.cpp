// servesim_summary (simulation.h): the "servesim" object of a result file — the resolved
// config echo, KV cache, counters, per-replica figures and each deployment mode's summary.
#include <algorithm>
#include <cstdint>

#include "hardware/topology.h"
#include "sim/base/json_file.h"
#include "sim/cluster/drafter.h"
#include "sim/cluster/lora_report.h"
#include "sim/cluster/pd_simulation.h"
#include "sim/cluster/simulation.h"
#include "sim/metrics/benchmark_metrics.h"
#include "sim/metrics/result_writer.h"
#include "sim/replica/kv_offload.h"
#include "sim/replica/replica_stats_merge.h"
#include "sim/replica/speculative_config.h"
#include "workloads/workload_classes.h"

namespace servesim::sim {
namespace {

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

// The CPU tier of KV offloading over all replicas (sim/replica/kv_offload.h). Hit rates in
// prompt tokens: GPU and CPU over every prompt token looked up (they add up to the share not
// prefilled); the tier's own over the full-block tokens that reached it (beyond the GPU hit).
nlohmann::json kv_offload_summary(const PreparedDeployment& p, const SimulationResult& r) {
  using nlohmann::json;
  const ReplicaStats total = total_replica_stats(r.replica_stats);
  const KvOffloadStats& t = total.offload;
  const int64_t queried = total.prefix_queried_tokens, gpu_hits = total.prefix_hit_tokens;
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

nlohmann::json catalog_model_json(const PreparedDeployment& prepared) {
  const std::string& name = prepared.model.catalog_name;
  return name.empty() ? nlohmann::json(nullptr) : nlohmann::json(name);
}

nlohmann::json prediction_basis_json(const PreparedDeployment& prepared) {
  return {{"basis", prepared.basis.label}, {"reason", prepared.basis.reason}};
}

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
      {"async_scheduling", p.engine.async_scheduling},
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
  if (d.moe_routing_skew > 0) cfg["moe_routing_skew"] = d.moe_routing_skew;
  if (config.dtype != "auto" || d.model.checkpoint_dtype == "float32") {
    cfg["dtype"] = config.dtype;  // with the checkpoint's, when vLLM's "auto" rule decided
    cfg["checkpoint_dtype"] = d.model.checkpoint_dtype;
    cfg["dtype_bytes"] = d.model.dtype_bytes;
  }
  if (!p.engine.enable_chunked_prefill) cfg["enable_chunked_prefill"] = false;
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

  // The chat endpoint, echoed only when used (completions result files stay as they were).
  if (workloads::chat_endpoint(config.workload)) cfg["endpoint"] = config.workload.endpoint;

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

  const ReplicaStats total = total_replica_stats(r.replica_stats);
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
         p.engine.kv_sliding_groups > 0 || p.engine.kv_mamba_groups > 0
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
  // The chat template's tokens, included in every prompt sent (workloads/chat_template_workload.h).
  if (const workloads::WorkloadConfig chat = resolved_workload(config);
      workloads::chat_endpoint(chat)) {
    out["sent"]["chat_template_tokens"] = chat.chat_template_tokens;
  }
  if (!p.physics_floor.empty())
    out["physics_floor"] = "tables raised to the ideal roofline: " + p.physics_floor;
  if (total.steps_below_ideal > 0) out["steps_below_ideal"] = total.steps_below_ideal;
  if (p.engine.kv_sliding_groups > 0) {
    // vLLM's hybrid KV layout (docs/semantics.md, "Sliding-window layers"); absent otherwise.
    out["kv_cache"]["kv_cache_groups"] = 1 + p.engine.kv_sliding_groups;
    out["kv_cache"]["layers_per_block"] = p.engine.kv_layers_per_block;
    out["kv_cache"]["sliding_window"] = p.engine.kv_sliding_window;
  }
  if (p.engine.kv_mamba_groups > 0) {
    // Gated DeltaNet state groups (docs/models.md, "Qwen3-Next"); absent otherwise.
    out["kv_cache"]["kv_cache_groups"] = 1 + p.engine.kv_mamba_groups;
    out["kv_cache"]["layers_per_block"] = p.engine.kv_layers_per_block;
    out["kv_cache"]["state_groups"] = p.engine.kv_mamba_groups;
    out["kv_cache"]["block_size"] = p.engine.block_size;
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
