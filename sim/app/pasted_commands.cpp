#include "sim/app/pasted_commands.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>

#include "sim/app/run_config.h"
#include "sim/app/serve_keys.h"
#include "sim/app/shell_words.h"
#include "sim/app/vllm_flags.h"
#include "sim/base/error.h"

namespace servesim::app {
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

// The servesim run fields a pasted line of each kind may set: vLLM's own flags of that command
// (a serve line's: is_vllm_serve_flag_key, serve_keys.h).
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
    const bool allowed =
        field != nullptr && name.rfind("--", 0) == 0 &&
        (kind == LineKind::kServe ? is_vllm_serve_flag_key(key) : bench_field(key));
    const bool other_line =
        field != nullptr && name.rfind("--", 0) == 0 &&
        (kind == LineKind::kServe ? bench_field(key) : is_vllm_serve_flag_key(key));
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
