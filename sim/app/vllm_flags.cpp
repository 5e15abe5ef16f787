#include "sim/app/vllm_flags.h"

#include <algorithm>
#include <set>

#include "sim/app/shell_words.h"
#include "sim/base/error.h"

namespace servesim::app {
namespace {

// Why serve refuses the deployment modes that simulate, sweep, plan and compare model.
constexpr const char* kOffloadNotServed =
    "KV offloading is not modelled by servesim serve (simulate, sweep, plan and compare model it)";
constexpr const char* kLoraNotServed =
    "LoRA adapters are not modelled by servesim serve (simulate, sweep, plan and compare model "
    "them)";

std::string check_backend(const std::string& v) {
  // openai-chat: checked against the endpoint in check_chat_backend.
  if (v == "vllm" || v == "openai" || v == "openai-chat") return "";
  return "only vLLM's completions and chat completions APIs (--backend vllm, openai or "
         "openai-chat) are modelled";
}

// The vLLM flag is on validate and calibrate only (the other run commands take --endpoint as a
// run field of their own, run_config.cpp): they read the endpoint from the measured files and
// check the flag against them (measured_endpoint.h).
std::string check_endpoint(const std::string& v) {
  if (v == "/v1/completions" || v == "/v1/chat/completions") return "";
  return "only /v1/completions and /v1/chat/completions are modelled";
}

std::string check_load_format(const std::string& v) {
  // Formats that only change how the same 16-bit weights are read (or, dummy, made up).
  static const std::set<std::string> kSame = {
      "auto",           "pt",         "safetensors",   "npcache", "dummy", "fastsafetensors",
      "runai_streamer", "tensorizer", "sharded_state", "mistral"};
  if (kSame.count(v) != 0) return "";
  return "this load format changes the weights' format (e.g. gguf, bitsandbytes), which is not "
         "modelled yet";
}

}  // namespace

// `vllm serve`: vllm/entrypoints/openai/cli_args.py (FrontendArgs) and vllm/engine/arg_utils.py
// (EngineArgs.add_cli_args). `vllm bench serve`: vllm/benchmarks/serve.py (add_cli_args) and
// vllm/benchmarks/datasets.py (add_dataset_parser). The flags servesim models (--max-num-seqs,
// --request-rate, ...) are its own options (run_config.cpp), not listed here.
const std::vector<VllmFlag>& vllm_flags() {
  static const std::vector<VllmFlag> flags = {
      // Accepted and ignored: where to listen or connect, logging, names, tokenizers, API
      // features, sampling parameters (the step-time model has no sampler term either way).
      {"--host", Arity::kOne, kBoth},
      {"--port", Arity::kOne, kBoth},
      {"--uds", Arity::kOne, kServe},
      {"--base-url", Arity::kOne, kBench},
      {"--endpoint", Arity::kOne, kBench, nullptr, check_endpoint},
      {"--backend", Arity::kOne, kBench, nullptr, check_backend},
      {"--header", Arity::kMany, kBench},
      {"--insecure", Arity::kNone, kBench},
      {"--ready-check-timeout-sec", Arity::kOne, kBench},
      {"--request-id-prefix", Arity::kOne, kBench},
      {"--label", Arity::kOne, kBench},
      {"--metadata", Arity::kMany, kBench},
      {"--disable-tqdm", Arity::kNone, kBench},
      {"--ignore-eos", Arity::kNone, kBench},
      {"--temperature", Arity::kOne, kBench},
      {"--top-p", Arity::kOne, kBench},
      {"--top-k", Arity::kOne, kBench},
      {"--min-p", Arity::kOne, kBench},
      {"--tokenizer", Arity::kOne, kBoth},
      {"--tokenizer-mode", Arity::kOne, kBoth},
      {"--trust-remote-code", Arity::kNone, kBoth},
      {"--served-model-name", Arity::kMany, kBoth},
      {"--load-format", Arity::kOne, kServe, nullptr, check_load_format},
      {"--download-dir", Arity::kOne, kServe},
      {"--revision", Arity::kOne, kServe},
      {"--tokenizer-revision", Arity::kOne, kServe},
      {"--max-logprobs", Arity::kOne, kServe},
      {"--disable-log-requests", Arity::kNone, kServe},
      {"--enable-log-requests", Arity::kNone, kServe},
      {"--disable-log-stats", Arity::kNone, kServe},
      {"--max-log-len", Arity::kOne, kServe},
      {"--uvicorn-log-level", Arity::kOne, kServe},
      {"--disable-uvicorn-access-log", Arity::kNone, kServe},
      {"--allow-credentials", Arity::kNone, kServe},
      {"--allowed-origins", Arity::kOne, kServe},
      {"--allowed-methods", Arity::kOne, kServe},
      {"--allowed-headers", Arity::kOne, kServe},
      {"--api-key", Arity::kMany, kServe},
      {"--ssl-keyfile", Arity::kOne, kServe},
      {"--ssl-certfile", Arity::kOne, kServe},
      {"--ssl-ca-certs", Arity::kOne, kServe},
      {"--root-path", Arity::kOne, kServe},
      {"--middleware", Arity::kOne, kServe},
      {"--enable-request-id-headers", Arity::kNone, kServe},
      {"--disable-fastapi-docs", Arity::kNone, kServe},
      {"--chat-template", Arity::kOne, kServe},
      {"--chat-template-content-format", Arity::kOne, kServe},
      {"--response-role", Arity::kOne, kServe},
      {"--enable-auto-tool-choice", Arity::kNone, kServe},
      {"--tool-call-parser", Arity::kOne, kServe},
      {"--reasoning-parser", Arity::kOne, kServe},
      {"--enable-prompt-tokens-details", Arity::kNone, kServe},
      {"--enable-server-load-tracking", Arity::kNone, kServe},
      {"--enable-force-include-usage", Arity::kNone, kServe},
      // `vllm serve --seed` seeds the engine's sampling, not the benchmark's dataset (servesim's
      // --seed is vllm bench serve's): a pasted serve line's --seed arrives under this name.
      {"--vllm-serve-seed", Arity::kOne, 0, nullptr, nullptr, "--seed (of vllm serve)"},
      // Refused: they change serving in ways servesim does not model.
      // A run field of simulate, sweep, plan and compare (their own option wins); serve streams
      // one token per step and refuses it.
      {"--speculative-config", Arity::kOne, kServe,
       "speculative decoding is not modelled by servesim serve (simulate, sweep, plan and "
       "compare model it)"},
      // KV offloading and LoRA likewise: run fields of simulate, sweep, plan and compare.
      {"--kv-offloading-size", Arity::kOne, kServe, kOffloadNotServed},
      {"--kv-offloading-backend", Arity::kOne, kServe, kOffloadNotServed},
      {"--enable-lora", Arity::kNone, kServe, kLoraNotServed},
      {"--max-loras", Arity::kOne, kServe, kLoraNotServed},
      {"--max-lora-rank", Arity::kOne, kServe, kLoraNotServed},
      {"--max-cpu-loras", Arity::kOne, kServe, kLoraNotServed},
      {"--speculative-model", Arity::kOne, kServe,
       "vLLM V0's speculative flag is not modelled (--speculative-config JSON is)"},
      {"--num-speculative-tokens", Arity::kOne, kServe,
       "vLLM V0's speculative flag is not modelled (--speculative-config JSON is)"},
      {"--kv-transfer-config", Arity::kOne, kServe,
       "KV transfer (disaggregated prefill, KV connectors) is not modelled yet"},
      // LoRA: --enable-lora, --max-loras, --max-lora-rank, --max-cpu-loras are simulate's own.
      {"--lora-modules", Arity::kMany, kBoth,
       "named LoRA adapters are not modelled (the requests' adapters come from "
       "--num-lora-adapters or a trace's lora_adapter column)"},
      {"--fully-sharded-loras", Arity::kNone, kServe, "fully sharded LoRA layers are not modelled"},
      {"--lora-dtype", Arity::kOne, kServe,
       "a LoRA dtype other than the model's (vLLM's auto) is not modelled"},
      {"--lora-extra-vocab-size", Arity::kOne, kServe,
       "LoRA extra vocabulary (embedding slots) is not modelled"},
      {"--long-lora-scaling-factors", Arity::kOne, kServe, "long-context LoRA is not modelled"},
      {"--default-mm-loras", Arity::kOne, kServe, "multimodal LoRA is not modelled"},
      {"--cpu-offload-gb", Arity::kOne, kServe, "weight offload to CPU memory is not modelled yet"},
      {"--ramp-up-strategy", Arity::kOne, kBench, "ramp-up request rates are not modelled yet"},
      {"--ramp-up-start-rps", Arity::kOne, kBench, "ramp-up request rates are not modelled yet"},
      {"--ramp-up-end-rps", Arity::kOne, kBench, "ramp-up request rates are not modelled yet"},
      {"--use-beam-search", Arity::kNone, kBench, "beam search is not modelled yet"},
  };
  return flags;
}

const VllmFlag* find_flag(const std::string& name) {
  for (const VllmFlag& f : vllm_flags()) {
    if (name == f.name) return &f;
  }
  return nullptr;
}

std::string shown_name(const VllmFlag& f) { return f.shown != nullptr ? f.shown : f.name; }

namespace {

// "--port" for the option registered as --port (Option::get_name() is empty for hidden options).
const VllmFlag* flag_of(const CLI::Option& opt) {
  if (!opt.get_group().empty()) return nullptr;  // a command's own option (add_vllm_flags)
  const std::vector<std::string>& names = opt.get_lnames();
  return names.empty() ? nullptr : find_flag("--" + names.front());
}

// The value that counts for a one-value flag given several times: the last, as in argparse.
std::string last_value(const CLI::Option& opt) {
  return opt.results().empty() ? std::string() : opt.results().back();
}

}  // namespace

void add_vllm_flags(CLI::App& cmd) {
  for (const VllmFlag& f : vllm_flags()) {
    // A command's own option of that name wins (serve's --host, --port, --served-model-name).
    if (cmd.get_option_no_throw(f.name) != nullptr) continue;
    CLI::Option* opt = nullptr;
    switch (f.arity) {
      case Arity::kNone:
        opt = cmd.add_flag(f.name);
        break;
      case Arity::kOne:
        opt = cmd.add_option(f.name)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
        break;
      case Arity::kMany:
        opt = cmd.add_option(f.name)->expected(0, -1)->allow_extra_args(true)->multi_option_policy(
            CLI::MultiOptionPolicy::TakeAll);
        break;
    }
    opt->group("");  // hidden: the command's footer states the rule, docs/cli.md the lists
  }
}

void check_vllm_flags(const CLI::App& cmd) {
  for (const CLI::Option* opt : cmd.parse_order()) {
    const VllmFlag* f = flag_of(*opt);
    if (f == nullptr) continue;
    if (f->refused != nullptr) {
      throw ConfigError(std::string(f->name) + ": " + f->refused +
                        "; servesim would simulate the run without it (remove the flag)");
    }
    if (f->check != nullptr) {
      const std::string value = last_value(*opt);
      const std::string why = f->check(value);
      if (!why.empty()) throw ConfigError(std::string(f->name) + " " + value + ": " + why);
    }
  }
  // The endpoint typed wins; without one, a --config file may give it: then the command checks
  // once it has read the file (build_config; validate and calibrate: take_declared_endpoint).
  const CLI::Option* endpoint = cmd.get_option_no_throw("--endpoint");
  const CLI::Option* config = cmd.get_option_no_throw("--config");
  const bool typed = endpoint != nullptr && !endpoint->results().empty();
  if (typed || config == nullptr || config->results().empty()) {
    check_chat_backend(cmd, typed ? last_value(*endpoint) : std::string("/v1/completions"));
  }
}

void check_chat_backend(const CLI::App& cmd, const std::string& endpoint) {
  // vllm bench serve's openai-chat client posts to chat/completions only: it refuses another
  // --endpoint (vllm/benchmarks/lib/endpoint_request_func.py, _validate_api_url).
  const CLI::Option* backend = cmd.get_option_no_throw("--backend");
  if (backend == nullptr || last_value(*backend) != "openai-chat") return;
  const std::string e = endpoint.empty() ? std::string("/v1/completions") : endpoint;
  if (e != "/v1/chat/completions") {
    throw ConfigError(
        "--backend openai-chat: posts to /v1/chat/completions only (vllm bench "
        "serve refuses --endpoint " +
        e +
        " with it); expected --endpoint /v1/chat/completions, or --backend "
        "vllm or openai");
  }
}

std::vector<IgnoredFlag> ignored_flags(const CLI::App& cmd, const std::vector<std::string>& read) {
  std::vector<IgnoredFlag> out;
  std::set<const CLI::Option*> seen;
  for (const CLI::Option* opt : cmd.parse_order()) {
    const VllmFlag* f = flag_of(*opt);
    if (f == nullptr || f->refused != nullptr || !seen.insert(opt).second) continue;
    if (std::find(read.begin(), read.end(), std::string(f->name)) != read.end()) continue;
    IgnoredFlag g{shown_name(*f), {}};
    if (f->arity == Arity::kOne) {
      g.values.push_back(last_value(*opt));
    } else if (f->arity == Arity::kMany) {
      g.values = opt->results();
    }
    out.push_back(std::move(g));
  }
  return out;
}

std::string ignored_note(const std::vector<IgnoredFlag>& flags) {
  if (flags.empty()) return "";
  std::string s = "ignored (no effect on the simulation):";
  for (size_t i = 0; i < flags.size(); ++i) {
    s += i == 0 ? " " : ", ";
    s += flags[i].flag;
    for (const std::string& v : flags[i].values) {
      s += ' ';
      s += shell_quote(v);
    }
  }
  return s;
}

nlohmann::json ignored_to_json(const std::vector<IgnoredFlag>& flags) {
  nlohmann::json out = nlohmann::json::array();
  for (const IgnoredFlag& f : flags) out.push_back({{"flag", f.flag}, {"values", f.values}});
  return out;
}

}  // namespace servesim::app
