// prepare_deployment (simulation.h): a config's catalogs loaded, defaults resolved, memory
// planned, cost models built, bad combinations refused; and the prediction basis of a deployment.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>

#include "hardware/gpu_spec.h"
#include "hardware/topology.h"
#include "models/model_spec.h"
#include "models/roofline_cost_model.h"
#include "sim/base/error.h"
#include "sim/base/json_file.h"
#include "sim/calibration/prediction_basis.h"
#include "sim/calibration/profile.h"
#include "sim/cluster/drafter.h"
#include "sim/cluster/pd_simulation.h"
#include "sim/cluster/simulation.h"
#include "sim/replica/kv_offload.h"
#include "sim/replica/vllm_version.h"

namespace servesim::sim {
namespace {

std::string gib(double bytes) {
  std::ostringstream os;
  os.precision(2);
  os << std::fixed << bytes / double(1ull << 30) << " GiB";
  return os.str();
}

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

// The host line the replicas run: speculative decoding and pipeline stages run without async
// scheduling (resolve_engine_config), whatever the version's default, so their calibration and
// prediction basis are the sync line's.
std::string run_host_line(const SimulationConfig& config) {
  EngineRequest e = config.engine;
  if (!e.spec.method.empty() || config.pipeline_parallel_size > 1) e.async_scheduling = false;
  return host_line(e);
}

}  // namespace

int64_t blocks_for_longest_request(const EngineConfig& e) {
  const int64_t bs = e.block_size;
  const int64_t len = e.max_model_len;
  const int64_t window_tokens =
      std::min<int64_t>(e.kv_sliding_window - 1 + e.max_num_batched_tokens, len);
  return (len + bs - 1) / bs + e.kv_sliding_groups * ((window_tokens + bs - 1) / bs + 1) +
         e.kv_mamba_groups;  // one state page per Gated DeltaNet group
}

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
  // vLLM's MambaStateDtypeCalculator keeps the states in the model dtype under "auto"; a float32
  // (or other) state changes the page size and the step's state traffic, which servesim does
  // not model.
  const auto require_auto_state = [](const std::string& flag, const std::string& value) {
    if (value != "auto") {
      throw ConfigError(flag + ": '" + value +
                        "' is not modelled (servesim keeps the Gated DeltaNet states in the "
                        "model dtype, vLLM's auto); expected auto");
    }
  };
  require_auto_state("--mamba-cache-dtype", config.mamba_cache_dtype);
  require_auto_state("--mamba-ssm-cache-dtype", config.mamba_ssm_cache_dtype);
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
  // A routing skew loads one EP rank more than the others; without EP every GPU holds a slice of
  // every expert and no rank is hotter, so the knob would do nothing.
  if (config.moe_routing_skew != 0) {
    if (!(config.moe_routing_skew > 0 && config.moe_routing_skew <= 4)) {
      std::ostringstream v;
      v << config.moe_routing_skew;
      throw ConfigError("--moe-routing-skew: " + v.str() +
                        " is invalid; expected a Zipf exponent in (0, 4]");
    }
    if (!config.enable_expert_parallel) {
      throw ConfigError(
          "--moe-routing-skew: needs --enable-expert-parallel (without it every GPU holds a slice "
          "of every expert, and a skew loads no rank more than another)");
    }
    d.moe_routing_skew = config.moe_routing_skew;
  }
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
      path = calibration::default_calibration_path(d.gpu.name, run_host_line(config)).value_or("");
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

  p.engine = resolve_engine_config(config.engine, d);
  if (p.engine.lora.enable_lora) p.basis = prediction_basis(p, prediction_query(config, p));
  if (config.workload.num_lora_adapters > 0 && !p.engine.lora.enable_lora) {
    throw ConfigError("--num-lora-adapters: " + std::to_string(config.workload.num_lora_adapters) +
                      " adapters named by the requests, but --enable-lora is not set; expected "
                      "--enable-lora (vLLM rejects a request for an adapter it does not serve)");
  }
  const VllmVersionInfo& version = vllm_version(p.engine.vllm_version);
  d.cuda_graph_sizes = models::default_cuda_graph_sizes(
      p.engine.max_num_seqs, p.engine.max_num_batched_tokens, version.cuda_graphs);

  if (d.model.is_mla() && !version.mla_cache) {
    throw ConfigError("--vllm-version " + p.engine.vllm_version + " with " + d.model.name +
                      ": vLLM before 0.7.1 has no MLA cache (it caches this model's attention as "
                      "multi-head K/V), which servesim does not model; expected --vllm-version "
                      "0.7 or later");
  }
  models::MemoryPlanOptions mo;
  mo.mla_entry_align_bytes = version.mla_entry_align_bytes;
  mo.mla_absorbed_weights = version.mla_absorbed_weights;
  mo.fused_moe_separate_caches = version.fused_moe_separate_caches;
  mo.fused_moe_modular_workspace = version.fused_moe_modular_workspace;
  mo.gpu_memory_utilization = p.engine.gpu_memory_utilization;
  mo.block_size = p.engine.block_size;
  mo.max_num_batched_tokens = p.engine.max_num_batched_tokens;
  mo.max_num_seqs = p.engine.max_num_seqs;
  mo.num_gpu_blocks_override = p.engine.num_gpu_blocks_override;
  mo.kv_layers_per_block = p.engine.kv_layers_per_block;
  mo.kv_cache_groups = 1 + p.engine.kv_sliding_groups + p.engine.kv_mamba_groups;
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
  const bool too_long = p.engine.kv_sliding_groups > 0 || p.engine.kv_mamba_groups > 0
                            ? p.memory.num_blocks < blocks_for_longest_request(p.engine)
                            : p.memory.kv_tokens < p.engine.max_model_len;
  if (too_long) {
    const bool user_set = config.engine.max_model_len.has_value();
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

std::string host_line(const EngineRequest& engine) {
  const std::string line = vllm_minor_version(engine.vllm_version);
  if (line.empty()) return "";
  const VllmVersionInfo& v = vllm_version(line);
  if (v.engine == EngineGeneration::kV0) return line + " V0";
  const bool async = engine.async_scheduling.value_or(v.async_scheduling_default);
  return line + (async ? " async" : " sync");
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
  q.host_line = run_host_line(config);
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
  // An attention kernel vLLM runs that the cost model does not time (docs/validation.md §7).
  if (prepared.deployment.triton_sink_attention()) {
    b.reason +=
        "; attention: vLLM runs gpt-oss's sink attention with its TRITON_ATTN backend on this "
        "GPU, timed here as FlashAttention (not modelled: the public A100 runs with 32k-token "
        "prompts took 2.7-3.0x the predicted time, docs/validation.md §7)";
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

}  // namespace servesim::sim
