#include "sim/app/vllm_commands.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <map>
#include <sstream>

#include "hardware/gpu_spec.h"
#include "models/model_name.h"
#include "models/model_spec.h"
#include "sim/app/shell_words.h"
#include "sim/replica/engine_request.h"
#include "sim/replica/speculative_config.h"

namespace servesim::app {
namespace {

// The shortest text that reads back as `v`, as a person writes it: 0.9, 10, 2.5.
std::string number(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) {
    return std::to_string(static_cast<long long>(v));
  }
  for (int prec = 1; prec <= 17; ++prec) {
    std::ostringstream os;
    os << std::setprecision(prec) << v;
    if (std::stod(os.str()) == v) return os.str();
  }
  return std::to_string(v);
}

std::string join(const std::vector<std::string>& words) {
  std::string s;
  for (const std::string& w : words) {
    // Two appends, not "" + string: GCC 12 warns (-Wrestrict, a false positive) on the latter.
    if (!s.empty()) s += ' ';
    s += shell_quote(w);
  }
  return s;
}

std::string join_list(const std::vector<std::string>& items) {
  std::string s;
  for (const std::string& i : items) s += (s.empty() ? "" : ",") + i;
  return s;
}

// The dataset flags of vllm bench serve for the simulated workload, or why there are none.
bool dataset_words(const workloads::WorkloadConfig& w, std::vector<std::string>& out,
                   std::string& why_not) {
  const workloads::WorkloadConfig d;  // servesim's (and vLLM's) defaults
  auto add = [&](const char* flag, const std::string& value) {
    out.push_back(flag);
    out.push_back(value);
  };
  if (!w.workload_file.empty()) {
    why_not = "a --workload file's request classes have no vllm bench serve equivalent";
    return false;
  }
  if (w.multi_turn) {
    why_not = "multi-turn conversations have no vllm bench serve equivalent";
    return false;
  }
  if (w.arrival_process == "constant") {
    why_not = "vllm bench serve has no constant arrivals (a large --burstiness comes closest)";
    return false;
  }
  if (w.num_lora_adapters > 0) {
    // Its --lora-modules picks one of the named adapters uniformly for every request.
    why_not =
        "vllm bench serve cannot draw adapters by popularity or for a share of the requests "
        "(--lora-modules picks uniformly among named adapters)";
    return false;
  }
  const std::string& name = w.dataset_name;
  if (name == "random") {
    add("--dataset-name", "random");
    add("--random-input-len", std::to_string(w.random_input_len));
    add("--random-output-len", std::to_string(w.random_output_len));
    if (w.random_range_ratio != d.random_range_ratio) {
      add("--random-range-ratio", number(w.random_range_ratio));
    }
    if (w.random_prefix_len > 0) add("--random-prefix-len", std::to_string(w.random_prefix_len));
  } else if (name == "sharegpt" || name == "custom" || name == "burstgpt") {
    const std::string& path = w.dataset_path;
    if (name == "sharegpt" && path.size() >= 4 && path.compare(path.size() - 4, 4, ".csv") == 0) {
      why_not =
          "a ShareGPT lengths CSV is servesim's own format; give vllm bench serve the "
          "ShareGPT JSON file it came from";
      return false;
    }
    add("--dataset-name", name);
    // Without a path servesim sends the first-turn lengths of vLLM's runs on the ShareGPT file
    // that vLLM's documentation downloads.
    add("--dataset-path", path.empty() ? "ShareGPT_V3_unfiltered_cleaned_split.json" : path);
    if (name == "sharegpt" && w.sharegpt_output_len > 0) {
      add("--sharegpt-output-len", std::to_string(w.sharegpt_output_len));
    }
    if (name == "custom") add("--custom-output-len", std::to_string(w.custom_output_len));
    if (w.disable_shuffle) out.push_back("--disable-shuffle");
    if (w.no_oversample) out.push_back("--no-oversample");
  } else if (name == "sonnet") {
    add("--dataset-name", "sonnet");
    add("--dataset-path", "benchmarks/sonnet.txt");  // the file in vLLM's repository
    add("--sonnet-input-len", std::to_string(w.sonnet_input_len));
    add("--sonnet-output-len", std::to_string(w.sonnet_output_len));
    add("--sonnet-prefix-len", std::to_string(w.sonnet_prefix_len));
  } else if (name == "prefix_repetition") {
    add("--dataset-name", "prefix_repetition");
    add("--prefix-repetition-prefix-len", std::to_string(w.prefix_repetition_prefix_len));
    add("--prefix-repetition-suffix-len", std::to_string(w.prefix_repetition_suffix_len));
    add("--prefix-repetition-num-prefixes", std::to_string(w.prefix_repetition_num_prefixes));
    add("--prefix-repetition-output-len", std::to_string(w.prefix_repetition_output_len));
  } else {
    why_not = "--dataset-name " + name + " has no vllm bench serve equivalent";
    return false;
  }
  return true;
}

}  // namespace

std::string vllm_serve_command(const sim::SimulationConfig& c) {
  models::Deployment deployment;
  deployment.gpu = hardware::load_gpu(c.gpu);
  deployment.model = models::load_model(c.model);
  deployment.tensor_parallel_size = c.tensor_parallel_size;
  deployment.pipeline_parallel_size = c.pipeline_parallel_size;
  deployment.data_parallel_size = c.data_parallel_size;
  deployment.kv_cache_dtype = c.kv_cache_dtype;
  const sim::EngineConfig e = sim::resolve_engine_config(c.engine, deployment);
  const sim::EngineRequest d;  // the flags' fixed defaults
  std::vector<std::string> w = {"vllm", "serve", models::vllm_model_argument(c.model),
                                "--tensor-parallel-size", std::to_string(c.tensor_parallel_size)};
  auto add = [&](const char* flag, const std::string& value) {
    w.push_back(flag);
    w.push_back(value);
  };
  if (c.pipeline_parallel_size > 1) {
    add("--pipeline-parallel-size", std::to_string(c.pipeline_parallel_size));
  }
  if (c.data_parallel_size > 1) add("--data-parallel-size", std::to_string(c.data_parallel_size));
  if (c.enable_expert_parallel) w.push_back("--enable-expert-parallel");
  if (!c.quantization.empty()) add("--quantization", c.quantization);
  if (c.kv_cache_dtype != "auto") add("--kv-cache-dtype", c.kv_cache_dtype);
  add("--max-model-len", std::to_string(e.max_model_len));
  add("--max-num-seqs", std::to_string(e.max_num_seqs));
  add("--max-num-batched-tokens", std::to_string(e.max_num_batched_tokens));
  add("--gpu-memory-utilization", number(e.gpu_memory_utilization));
  // The flag as given: a hybrid model's larger page is vLLM's own choice, not a flag.
  if (c.engine.block_size != d.block_size) add("--block-size", std::to_string(c.engine.block_size));
  if (c.enforce_eager) w.push_back("--enforce-eager");
  // Off as asked: a model whose default vLLM turns off needs no flag.
  if (!c.engine.enable_prefix_caching.value_or(true)) w.push_back("--no-enable-prefix-caching");
  if (c.engine.enable_chunked_prefill) {
    w.push_back(*c.engine.enable_chunked_prefill ? "--enable-chunked-prefill"
                                                 : "--no-enable-chunked-prefill");
  }
  if (c.engine.async_scheduling) {
    w.push_back(*c.engine.async_scheduling ? "--async-scheduling" : "--no-async-scheduling");
  }
  if (e.long_prefill_token_threshold > 0) {
    add("--long-prefill-token-threshold", std::to_string(e.long_prefill_token_threshold));
  }
  if (e.scheduling_policy != d.scheduling_policy) add("--scheduling-policy", e.scheduling_policy);
  if (e.num_gpu_blocks_override > 0) {
    add("--num-gpu-blocks-override", std::to_string(e.num_gpu_blocks_override));
  }
  if (e.disable_hybrid_kv_cache_manager) w.push_back("--disable-hybrid-kv-cache-manager");
  if (e.kv_offloading_size > 0) add("--kv-offloading-size", number(e.kv_offloading_size));
  if (!e.kv_offloading_backend.empty()) add("--kv-offloading-backend", e.kv_offloading_backend);
  if (e.num_scheduler_steps > 1) {
    add("--num-scheduler-steps", std::to_string(e.num_scheduler_steps));
  }
  const sim::LoraConfig& lora = c.engine.lora;  // as given: vLLM fills --max-cpu-loras itself
  if (lora.enable_lora) {
    w.push_back("--enable-lora");
    add("--max-loras", std::to_string(lora.max_loras));
    add("--max-lora-rank", std::to_string(lora.max_lora_rank));
    if (lora.max_cpu_loras > 0) add("--max-cpu-loras", std::to_string(lora.max_cpu_loras));
  }
  if (c.engine.spec.enabled()) {
    // vLLM's keys only: the acceptance is what vLLM measures, not a setting.
    nlohmann::json spec = sim::speculative_config_json(c.engine.spec);
    for (const char* k : {"acceptance_rates", "acceptance_length", "acceptance_seed"}) {
      spec.erase(k);
    }
    add("--speculative-config", spec.dump());
  }
  return join(w);
}

BenchCommand vllm_bench_command(const sim::SimulationConfig& c, double rate, int64_t num_prompts,
                                const std::vector<planning::Slo>& slos) {
  std::vector<std::string> w = {"vllm",
                                "bench",
                                "serve",
                                "--backend",
                                "vllm",
                                "--model",
                                models::vllm_model_argument(c.model)};
  BenchCommand out;
  if (!dataset_words(c.workload, w, out.why_not)) return out;
  auto add = [&](const char* flag, const std::string& value) {
    w.push_back(flag);
    w.push_back(value);
  };
  // servesim's datasets send every request's output length in full, as with --ignore-eos
  // (vllm bench serve sets it itself for --dataset-name random).
  w.push_back("--ignore-eos");
  add("--num-prompts", std::to_string(num_prompts));
  add("--request-rate", std::isinf(rate) ? std::string("inf") : number(rate));
  if (c.workload.burstiness != 1.0) add("--burstiness", number(c.workload.burstiness));
  if (c.max_concurrency > 0) add("--max-concurrency", std::to_string(c.max_concurrency));
  add("--seed", std::to_string(c.workload.seed));
  metrics::MetricsOptions m;
  m.percentile_metrics = {"ttft", "tpot", "itl", "e2el"};
  m.metric_percentiles = {50, 99};
  planning::require_slo_metrics(m, slos);
  std::sort(m.metric_percentiles.begin(), m.metric_percentiles.end());
  std::vector<std::string> ps;
  for (double p : m.metric_percentiles) ps.push_back(number(p));
  add("--percentile-metrics", join_list(m.percentile_metrics));
  add("--metric-percentiles", join_list(ps));
  const std::map<std::string, double> goodput = planning::goodput_from_slos(slos);
  if (!goodput.empty()) {
    w.push_back("--goodput");
    for (const auto& [k, v] : goodput) w.push_back(k + ":" + number(v));
  }
  w.push_back("--save-result");
  out.command = join(w);
  return out;
}

}  // namespace servesim::app
