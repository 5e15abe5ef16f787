#include "sim/app/vllm_flags.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <optional>
#include <set>

#include "sim/app/run_config.h"
#include "sim/app/run_options.h"
#include "sim/base/error.h"

namespace servesim::app {
namespace {

// How many words follow a flag: none (a bare flag), one, or argparse's nargs "+"/"*" (the words
// up to the next flag).
enum class Arity { kNone, kOne, kMany };

// Which command lines have the flag.
enum In : unsigned { kServe = 1, kBench = 2, kBoth = 3 };

// Why serve refuses the deployment modes that simulate, sweep, plan and compare model.
constexpr const char* kOffloadNotServed =
    "KV offloading is not modelled by servesim serve (simulate, sweep, plan and compare model it)";
constexpr const char* kLoraNotServed =
    "LoRA adapters are not modelled by servesim serve (simulate, sweep, plan and compare model "
    "them)";

// A value of an ignored flag that changes serving: returns why it is refused, "" when the value
// changes nothing that is simulated.
using ValueCheck = std::string (*)(const std::string& value);

struct VllmFlag {
  const char* name;
  Arity arity;
  unsigned in;
  const char* refused = nullptr;  // null: accepted and ignored; else why it is refused
  ValueCheck check = nullptr;
  const char* shown = nullptr;  // the name printed, when it differs from `name`
};

const char kChat[] =
    "chat completions are not modelled yet (the chat template adds prompt tokens that servesim "
    "does not count); use --backend vllm or openai, --endpoint /v1/completions";

std::string check_backend(const std::string& v) {
  if (v == "vllm" || v == "openai") return "";
  if (v == "openai-chat") return kChat;
  return "only vLLM's completions API (--backend vllm or openai) is modelled";
}

std::string check_endpoint(const std::string& v) {
  if (v == "/v1/completions") return "";
  if (v == "/v1/chat/completions") return kChat;
  return "only /v1/completions is modelled";
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
}

std::vector<IgnoredFlag> ignored_flags(const CLI::App& cmd) {
  std::vector<IgnoredFlag> out;
  std::set<const CLI::Option*> seen;
  for (const CLI::Option* opt : cmd.parse_order()) {
    const VllmFlag* f = flag_of(*opt);
    if (f == nullptr || f->refused != nullptr || !seen.insert(opt).second) continue;
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

std::string shell_quote(const std::string& word) {
  static const std::string kPlain =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=,+@%";
  if (!word.empty() && word.find_first_not_of(kPlain) == std::string::npos) return word;
  std::string q = "'";
  for (char c : word) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  return q + "'";
}

std::vector<std::string> split_shell_words(const std::string& line, const std::string& flag) {
  auto fail = [&](const std::string& why) {
    return ConfigError(flag + ": the pasted command line has " + why);
  };
  // Whether the $ at `at` starts an expansion (bash: a name, ${…}, $(…), a positional or special
  // parameter); any other $ is a literal character.
  auto expands = [&](size_t at) {
    if (at + 1 >= line.size()) return false;
    const char d = line[at + 1];
    return std::isalnum(static_cast<unsigned char>(d)) || d == '_' || d == '{' || d == '(' ||
           d == '?' || d == '#' || d == '@' || d == '*' || d == '!' || d == '$' || d == '-';
  };
  // "$MODEL" for a $ at `at`: the variable's name, for the message.
  auto expansion = [&](size_t at) {
    const std::string tail = ", which servesim cannot expand: paste the line with its values";
    if (line[at] == '`') return "the command substitution `…`" + tail;
    if (at + 1 < line.size() && line[at + 1] == '(') return "the command substitution $(…)" + tail;
    size_t end = at + 1;
    if (end < line.size() && line[end] == '{') ++end;
    while (end < line.size() &&
           (std::isalnum(static_cast<unsigned char>(line[end])) || line[end] == '_')) {
      ++end;
    }
    if (end < line.size() && line[end] == '}' && line[at + 1] == '{') ++end;
    return "the shell expansion " + line.substr(at, std::max<size_t>(end - at, 2)) + tail;
  };
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;  // a word has started (it may be empty: '' or "")
  auto end_word = [&] {
    if (in_word) words.push_back(word);
    word.clear();
    in_word = false;
  };
  const size_t n = line.size();
  size_t i = 0;
  while (i < n) {
    const char c = line[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      end_word();
      ++i;
    } else if (c == '\\') {
      if (i + 1 < n && line[i + 1] == '\n') {
        i += 2;  // line continuation
      } else if (i + 2 < n && line[i + 1] == '\r' && line[i + 2] == '\n') {
        i += 3;
      } else if (i + 1 < n) {
        word += line[i + 1];
        in_word = true;
        i += 2;
      } else {
        ++i;  // a trailing backslash continues onto nothing
      }
    } else if (c == '\'') {
      const size_t close = line.find('\'', i + 1);
      if (close == std::string::npos) throw fail("an unterminated ' quote");
      word += line.substr(i + 1, close - i - 1);
      in_word = true;
      i = close + 1;
    } else if (c == '"') {
      in_word = true;
      ++i;
      bool closed = false;
      while (i < n) {
        const char d = line[i];
        if (d == '"') {
          closed = true;
          ++i;
          break;
        }
        if (d == '\\' && i + 1 < n) {
          const char e = line[i + 1];
          if (e == '\n') {
            i += 2;
            continue;
          }
          if (e == '"' || e == '\\' || e == '$' || e == '`') {
            word += e;
            i += 2;
            continue;
          }
        }
        if ((d == '$' && expands(i)) || d == '`') throw fail(expansion(i));
        word += d;
        ++i;
      }
      if (!closed) throw fail("an unterminated \" quote");
    } else if (c == '$' && i + 1 < n && line[i + 1] == '\'') {
      // ANSI-C quoting, as vLLM's docs use for --speculative-config $'{...}'.
      in_word = true;
      i += 2;
      bool closed = false;
      while (i < n) {
        const char d = line[i];
        if (d == '\'') {
          closed = true;
          ++i;
          break;
        }
        if (d == '\\' && i + 1 < n) {
          const char e = line[i + 1];
          switch (e) {
            case 'n':
              word += '\n';
              break;
            case 't':
              word += '\t';
              break;
            case 'r':
              word += '\r';
              break;
            case '\\':
              word += '\\';
              break;
            case '\'':
              word += '\'';
              break;
            case '"':
              word += '"';
              break;
            default:
              word += '\\';
              word += e;
              break;
          }
          i += 2;
          continue;
        }
        word += d;
        ++i;
      }
      if (!closed) throw fail("an unterminated $' quote");
    } else if ((c == '$' && expands(i)) || c == '`') {
      throw fail(expansion(i));
    } else if (c == '#' && !in_word) {
      while (i < n && line[i] != '\n') ++i;  // a comment, to the end of the line
    } else if (c == ';' || c == '|' || c == '&' || c == '<' || c == '>' || c == '(' || c == ')') {
      throw fail(std::string("'") + c +
                 "': one command is expected, without pipes or redirections (replace a "
                 "placeholder such as <your data path> by its value)");
    } else if (c == '*' || c == '?') {
      throw fail(std::string("an unquoted '") + c + "', a glob servesim cannot expand");
    } else if (c == '~' && !in_word) {
      // Tilde expansion of ~/… at the start of a word (or after --flag=), as bash does.
      const char* home = std::getenv("HOME");
      const bool slash_or_end = i + 1 >= n || line[i + 1] == '/' || line[i + 1] == ' ' ||
                                line[i + 1] == '\n' || line[i + 1] == '\t';
      if (!slash_or_end || home == nullptr) {
        throw fail("a ~ path that servesim cannot expand (~user, or no $HOME)");
      }
      word += home;
      in_word = true;
      ++i;
    } else {
      word += c;
      in_word = true;
      ++i;
    }
  }
  end_word();
  return words;
}

namespace {

enum class LineKind { kServe, kBench };

const char* line_name(LineKind k) {
  return k == LineKind::kServe ? "vllm serve" : "vllm bench serve";
}

// Length of the command's prefix ("vllm serve", "python3 -m vllm.entrypoints.openai.api_server",
// "vllm bench serve", "python3 benchmarks/benchmark_serving.py"), 0 when `words` starts with none.
size_t prefix_length(const std::vector<std::string>& w, LineKind kind) {
  auto python = [](const std::string& s) { return s.rfind("python", 0) == 0; };
  if (kind == LineKind::kServe) {
    if (w.size() >= 2 && w[0] == "vllm" && w[1] == "serve") return 2;
    if (w.size() >= 3 && python(w[0]) && w[1] == "-m" &&
        w[2] == "vllm.entrypoints.openai.api_server") {
      return 3;
    }
    return 0;
  }
  if (w.size() >= 3 && w[0] == "vllm" && w[1] == "bench" && w[2] == "serve") return 3;
  const std::string script = "benchmark_serving.py";
  if (w.size() >= 2 && python(w[0]) && w[1].size() >= script.size() &&
      w[1].compare(w[1].size() - script.size(), script.size(), script) == 0) {
    return 2;
  }
  return 0;
}

// One flag of a pasted line as servesim flags: `key` is what a typed flag overrides.
struct Translated {
  std::string key;
  std::vector<std::string> words;
};

// The key a flag overrides: its name without dashes, value or "no-" ("--no-enable-prefix-caching"
// and "--enable-prefix-caching=true" both set enable-prefix-caching).
std::string override_key(const std::string& arg) {
  std::string k = arg.substr(0, arg.find('='));
  k.erase(0, k.find_first_not_of('-'));
  for (const char* neg : {"enable-prefix-caching", "async-scheduling", "enable-chunked-prefill"}) {
    if (k == std::string("no-") + neg) return neg;
  }
  return k;
}

// The servesim run fields a pasted line of each kind may set: vLLM's own flags of that command.
bool serve_field(const std::string& key) {
  static const std::set<std::string> kKeys = {"tensor_parallel_size",
                                              "pipeline_parallel_size",
                                              "data_parallel_size",
                                              "enable_expert_parallel",
                                              "quantization",
                                              "dtype",
                                              "kv_cache_dtype",
                                              "enforce_eager",
                                              "async_scheduling",
                                              "max_num_seqs",
                                              "max_num_batched_tokens",
                                              "block_size",
                                              "gpu_memory_utilization",
                                              "enable_prefix_caching",
                                              "long_prefill_token_threshold",
                                              "max_model_len",
                                              "scheduling_policy",
                                              "num_gpu_blocks_override",
                                              "disable_hybrid_kv_cache_manager",
                                              "enable_chunked_prefill",
                                              "num_scheduler_steps",
                                              "kv_offloading_size",
                                              "kv_offloading_backend",
                                              "speculative_config"};
  return kKeys.count(key) != 0;
}
bool bench_field(const std::string& key) {
  static const std::set<std::string> kKeys = {"request_rate",
                                              "burstiness",
                                              "num_prompts",
                                              "seed",
                                              "dataset_name",
                                              "random_input_len",
                                              "random_output_len",
                                              "random_range_ratio",
                                              "random_prefix_len",
                                              "dataset_path",
                                              "disable_shuffle",
                                              "no_oversample",
                                              "sharegpt_output_len",
                                              "custom_output_len",
                                              "sonnet_input_len",
                                              "sonnet_output_len",
                                              "sonnet_prefix_len",
                                              "prefix_repetition_prefix_len",
                                              "prefix_repetition_suffix_len",
                                              "prefix_repetition_num_prefixes",
                                              "prefix_repetition_output_len",
                                              "max_concurrency",
                                              "percentile_metrics",
                                              "metric_percentiles",
                                              "goodput"};
  return kKeys.count(key) != 0;
}

struct PastedLine {
  std::vector<Translated> flags;
  std::optional<std::string> model;
};

PastedLine translate_line(const std::vector<std::string>& words, LineKind kind,
                          const std::string& from) {
  const std::string where = from + " (" + line_name(kind) + ")";
  PastedLine out;
  const size_t n = words.size();
  size_t i = 0;
  auto is_flag = [](const std::string& w) { return w.size() >= 2 && w[0] == '-'; };
  auto looks_like_number = [](const std::string& w) {
    return w.size() >= 2 && w[0] == '-' &&
           (std::isdigit(static_cast<unsigned char>(w[1])) || w[1] == '.');
  };
  while (i < n) {
    const std::string& w = words[i++];
    if (!is_flag(w)) {
      if (kind == LineKind::kServe && !out.model) {
        out.model = w;  // vllm serve's positional model
        continue;
      }
      throw ConfigError(where + ": unexpected word '" + w + "'" +
                        (kind == LineKind::kServe
                             ? " (the model is already " + *out.model + ")"
                             : " (vllm bench serve takes no positional argument)"));
    }
    std::string name = w;
    std::optional<std::string> inline_value;
    if (const size_t eq = w.find('='); eq != std::string::npos && w.rfind("--", 0) == 0) {
      name = w.substr(0, eq);
      inline_value = w.substr(eq + 1);
    }
    // vLLM's FlexibleArgumentParser reads --dataset_name as --dataset-name.
    if (name.rfind("--", 0) == 0) std::replace(name.begin() + 2, name.end(), '_', '-');
    static const std::pair<const char*, const char*> kShort[] = {
        {"-tp", "--tensor-parallel-size"},
        {"-pp", "--pipeline-parallel-size"},
        {"-dp", "--data-parallel-size"},
        {"-q", "--quantization"},
        {"-ep", "--enable-expert-parallel"}};
    for (const auto& [s, l] : kShort) {
      if (name == s) name = l;
    }
    auto one_value = [&]() -> std::string {
      if (inline_value) return *inline_value;
      if (i < n && (!is_flag(words[i]) || looks_like_number(words[i]))) return words[i++];
      throw ConfigError(where + ": " + name + " expects a value");
    };
    auto many_values = [&]() {
      std::vector<std::string> v;
      if (inline_value) {
        v.push_back(*inline_value);
        return v;
      }
      while (i < n && (!is_flag(words[i]) || looks_like_number(words[i]))) v.push_back(words[i++]);
      return v;
    };
    auto bare = [&] {
      if (inline_value) throw ConfigError(where + ": " + name + " takes no value");
    };

    if (name == "--model") {
      out.model = one_value();
      continue;
    }
    if (kind == LineKind::kServe && name == "--seed") {
      out.flags.push_back({"vllm-serve-seed", {"--vllm-serve-seed", one_value()}});
      continue;
    }
    // --speculative-config is simulate's own run field (the table's entry is for serve).
    if (const VllmFlag* f = find_flag(name);
        f != nullptr && f->in != 0 && name != "--speculative-config") {
      if ((f->in & (kind == LineKind::kServe ? kServe : kBench)) == 0) {
        throw ConfigError(where + ": " + name + " is a flag of " +
                          (kind == LineKind::kServe ? "vllm bench serve" : "vllm serve") +
                          ", not of " + line_name(kind));
      }
      if (f->refused != nullptr) {
        throw ConfigError(where + ": " + name + ": " + f->refused +
                          "; servesim would simulate the run without it (remove the flag)");
      }
      Translated t{override_key(name), {name}};
      if (f->arity == Arity::kOne) {
        t.words.push_back(one_value());
      } else if (f->arity == Arity::kMany) {
        for (std::string& v : many_values()) t.words.push_back(std::move(v));
      } else {
        bare();
      }
      out.flags.push_back(std::move(t));
      continue;
    }
    // simulate's result-file flags, which are vllm bench serve's.
    if (kind == LineKind::kBench && (name == "--save-result" || name == "--save-detailed" ||
                                     name == "--result-dir" || name == "--result-filename")) {
      Translated t{override_key(name), {name}};
      if (name == "--result-dir" || name == "--result-filename") {
        t.words.push_back(one_value());
      } else {
        bare();
      }
      out.flags.push_back(std::move(t));
      continue;
    }
    // The engine's switches that have an off form in servesim.
    if (kind == LineKind::kServe &&
        (name == "--no-enable-prefix-caching" || name == "--no-enable-chunked-prefill" ||
         name == "--no-async-scheduling")) {
      bare();
      out.flags.push_back({override_key(name), {name}});
      continue;
    }
    // One of servesim's run fields, under vLLM's name.
    const std::string key = [&] {
      std::string k = name.substr(name.find_first_not_of('-'));
      std::replace(k.begin(), k.end(), '-', '_');
      return k;
    }();
    const ConfigField* field = nullptr;
    for (const ConfigField& f : config_fields()) {
      if (f.key == key) field = &f;
    }
    const bool allowed = field != nullptr && name.rfind("--", 0) == 0 &&
                         (kind == LineKind::kServe ? serve_field(key) : bench_field(key));
    const bool other_line = field != nullptr && name.rfind("--", 0) == 0 &&
                            (kind == LineKind::kServe ? bench_field(key) : serve_field(key));
    if (other_line) {
      throw ConfigError(where + ": " + name + " is a flag of " +
                        (kind == LineKind::kServe ? "vllm bench serve" : "vllm serve") +
                        ", not of " + line_name(kind));
    }
    if (field != nullptr && !allowed) {
      throw ConfigError(where + ": " + name + " is servesim's flag, not " + line_name(kind) +
                        "'s: type it outside the pasted line");
    }
    if (!allowed) {
      throw ConfigError(where + ": " + name +
                        " is not a flag servesim models or ignores (docs/cli.md lists both); "
                        "remove it, or give servesim's equivalent after the pasted line");
    }
    Translated t{override_key(name), {name}};
    if (field->kind == FieldKind::kBool) {
      // Old vLLM releases take an optional value (--enable-chunked-prefill True).
      std::optional<std::string> v = inline_value;
      if (!v && i < n &&
          (words[i] == "True" || words[i] == "False" || words[i] == "true" ||
           words[i] == "false")) {
        v = words[i++];
      }
      if (v && (*v == "False" || *v == "false")) {
        const std::string off = "--no-" + name.substr(2);
        if (off == "--no-enable-prefix-caching" || off == "--no-enable-chunked-prefill" ||
            off == "--no-async-scheduling") {
          t.words = {off};
        } else {
          continue;  // off is servesim's default for every other switch
        }
      } else if (v && *v != "True" && *v != "true") {
        throw ConfigError(where + ": " + name + " " + *v + ": expected True or False");
      }
    } else if (field->kind == FieldKind::kStringList) {
      const std::vector<std::string> v = many_values();
      if (v.empty()) throw ConfigError(where + ": " + name + " expects a value");
      t.words.insert(t.words.end(), v.begin(), v.end());
    } else {
      t.words.push_back(one_value());
    }
    out.flags.push_back(std::move(t));
  }
  return out;
}

bool run_command(const std::string& sub) {
  for (const char* c :
       {"simulate", "sweep", "compare", "plan", "matrix", "validate", "calibrate"}) {
    if (sub == c) return true;
  }
  return false;
}

}  // namespace

std::vector<std::string> expand_pasted_commands(const std::vector<std::string>& args) {
  if (args.empty() || !run_command(args[0])) return args;
  const std::string& sub = args[0];
  struct Pasted {
    std::string from;              // the flag it came with, for messages
    std::optional<LineKind> kind;  // required kind (null: `--`, either)
    std::vector<std::string> words;
  };
  std::vector<Pasted> pasted;
  std::vector<std::string> typed;  // the servesim flags typed, subcommand excluded
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    bool matched = false;
    for (const auto& [flag, kind] :
         {std::pair{std::string("--vllm-serve-cmd"), LineKind::kServe},
          std::pair{std::string("--vllm-bench-cmd"), LineKind::kBench}}) {
      if (a == flag || a.rfind(flag + "=", 0) == 0) {
        std::string text;
        if (a == flag) {
          if (i + 1 >= args.size()) throw ConfigError(flag + ": expects the command line, quoted");
          text = args[++i];
        } else {
          text = a.substr(flag.size() + 1);
        }
        pasted.push_back({flag, kind, split_shell_words(text, flag)});
        matched = true;
      }
    }
    if (matched) continue;
    if (a == "--" && i + 1 < args.size() &&
        (args[i + 1] == "vllm" || args[i + 1].rfind("vllm ", 0) == 0 ||
         args[i + 1].rfind("python", 0) == 0)) {
      std::vector<std::string> tail(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
      if (tail.size() == 1) tail = split_shell_words(tail[0], "--");  // the line as one word
      std::vector<std::string> cur;
      for (const std::string& w : tail) {
        if (w == "--") {
          pasted.push_back({"--", std::nullopt, cur});
          cur.clear();
        } else {
          cur.push_back(w);
        }
      }
      pasted.push_back({"--", std::nullopt, cur});
      break;
    }
    typed.push_back(a);
  }
  if (pasted.empty()) return args;
  if (sub != "simulate") {
    throw ConfigError(pasted.front().from +
                      ": a pasted vLLM command line is read by simulate "
                      "only; give " +
                      sub + " the flags themselves");
  }

  std::vector<Translated> serve_flags, bench_flags;
  std::optional<std::string> serve_model, bench_model;
  bool have_serve = false, have_bench = false;
  for (const Pasted& p : pasted) {
    if (p.words.empty()) throw ConfigError(p.from + ": the pasted command line is empty");
    // NAME=value words before the command set environment variables, which can change vLLM.
    if (const size_t eq = p.words[0].find('=');
        eq != std::string::npos && eq > 0 && p.words[0][0] != '-') {
      throw ConfigError(p.from + ": the environment variable " + p.words[0].substr(0, eq) +
                        " is not read (it can change vLLM's behaviour): remove the assignment "
                        "and give servesim's flags for what it sets");
    }
    std::optional<LineKind> kind = p.kind;
    if (!kind) {
      if (prefix_length(p.words, LineKind::kServe) > 0) kind = LineKind::kServe;
      if (prefix_length(p.words, LineKind::kBench) > 0) kind = LineKind::kBench;
    }
    const size_t skip = kind ? prefix_length(p.words, *kind) : 0;
    if (!kind || skip == 0) {
      throw ConfigError(p.from + ": expected a line starting with " +
                        (p.kind == LineKind::kServe   ? "`vllm serve`"
                         : p.kind == LineKind::kBench ? "`vllm bench serve`"
                                                      : "`vllm serve` or `vllm bench serve`") +
                        ", got '" + p.words[0] + (p.words.size() > 1 ? " " + p.words[1] : "") +
                        "…'");
    }
    const std::vector<std::string> rest(p.words.begin() + static_cast<std::ptrdiff_t>(skip),
                                        p.words.end());
    PastedLine line = translate_line(rest, *kind, p.from);
    if (*kind == LineKind::kServe) {
      if (have_serve) throw ConfigError(p.from + ": more than one vllm serve line");
      have_serve = true;
      serve_model = line.model;
      serve_flags = std::move(line.flags);
    } else {
      if (have_bench) throw ConfigError(p.from + ": more than one vllm bench serve line");
      have_bench = true;
      bench_model = line.model;
      bench_flags = std::move(line.flags);
    }
  }
  if (have_serve && !serve_model) {
    throw ConfigError("the pasted vllm serve line names no model");
  }

  std::set<std::string> typed_keys;
  for (const std::string& a : typed) {
    if (a.size() >= 2 && a[0] == '-') typed_keys.insert(override_key(a));
  }
  // The served model: the serve line's (the bench line's --model may be a --served-model-name).
  std::optional<std::string> model = serve_model ? serve_model : bench_model;
  if (!model && typed_keys.count("model") == 0) {
    throw ConfigError(
        "the pasted vllm bench serve line names no --model (vLLM asks the server "
        "which it serves): add --model, or paste the vllm serve line too");
  }
  std::vector<std::string> out = {sub};
  if (model && typed_keys.count("model") == 0) {
    out.push_back("--model");
    out.push_back(*model);
  }
  for (const std::vector<Translated>* flags : {&serve_flags, &bench_flags}) {
    for (const Translated& t : *flags) {
      if (typed_keys.count(t.key) != 0) continue;  // the typed flag wins
      out.insert(out.end(), t.words.begin(), t.words.end());
    }
  }
  out.insert(out.end(), typed.begin(), typed.end());
  return out;
}

}  // namespace servesim::app
