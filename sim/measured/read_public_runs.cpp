// Public `vllm bench serve` result blocks transcribed one row per run (readers.h).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "models/chat_template_tokens.h"
#include "sim/base/error.h"
#include "sim/measured/reader_helpers.h"
#include "sim/measured/readers.h"
#include "sim/replica/vllm_version.h"
#include "workloads/length_datasets.h"

namespace servesim::measured {

using namespace detail;  // the parsing helpers every reader shares

namespace {

// The models of the table that servesim's catalog holds, by the row's Hugging Face id (the part
// before any parenthesis). Qwen3-235B-A22B-Instruct-2507 is Qwen3-235B-A22B's architecture
// (same hidden size, layers, heads, experts; a longer context); Qwen2-7B-Instruct has
// Qwen2.5-7B's shape (hidden, intermediate, layers, heads, KV heads, vocab), as in the Argonne
// reader.
struct PublicModel {
  const char* id;
  const char* catalog;
  const char* why;  // "" when the catalog entry is the model itself
};
constexpr PublicModel kModels[] = {
    {"zai-org/GLM-4.5-Air", "glm-4.5-air", ""},
    {"openai/gpt-oss-120b", "gpt-oss-120b", ""},
    {"openai/gpt-oss-20b", "gpt-oss-20b", ""},
    {"Qwen/Qwen3-14B", "qwen3-14b", ""},
    {"Qwen/Qwen3-32B", "qwen3-32b", ""},
    {"Qwen/Qwen3-235B-A22B-Instruct-2507", "qwen3-235b-a22b",
     "Qwen3-235B-A22B-Instruct-2507: Qwen3-235B-A22B's architecture"},
    {"Qwen/Qwen2-7B-Instruct", "qwen2.5-7b", "Qwen2-7B-Instruct: Qwen2.5-7B's shape"},
};

// One CSV line with RFC 4180 quoting: fields in double quotes may hold commas, and "" inside
// them is one quote. The table has no line breaks inside fields.
std::vector<std::string> split_quoted(const std::string& line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cells.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cells.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      cells.emplace_back();
    } else {
      cells.back() += c;
    }
  }
  return cells;
}

// The leading number of a cell such as "2048 (server log)" or "450,192 tokens (12.02 GiB)":
// digits, '.' and thousands commas up to the first other character. NaN when the cell does not
// start with a digit (blank, "not passed", "inf ...").
double leading_number(const std::string& cell) {
  std::string digits;
  for (char c : trim(cell)) {
    if ((c >= '0' && c <= '9') || c == '.') {
      digits += c;
    } else if (c == ',' && !digits.empty()) {
      continue;
    } else {
      break;
    }
  }
  if (digits.empty()) return kUnknown;
  return std::stod(digits);
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

// The flags of the serve command that the row's columns or servesim model, and those that change
// nothing simulated here; any other flag makes the row refused, by name.
const std::map<std::string, bool>& serve_flags() {
  // flag -> takes a value
  static const std::map<std::string, bool> kFlags = {
      {"-tp", true},
      {"--tensor-parallel-size", true},
      {"-pp", true},
      {"--pipeline-parallel-size", true},
      {"--max-num-batched-tokens", true},
      {"--max-model-len", true},
      {"--gpu-memory-utilization", true},
      {"--max-num-seqs", true},
      {"--max-num-seq", true},  // argparse takes the unambiguous prefix of --max-num-seqs
      {"--async-scheduling", false},
      {"--enable-expert-parallel", false},
      {"--enforce-eager", false},
      {"--port", true},
      // Structured output only: the benchmark's random prompts ask for none.
      {"--guided-decoding-backend", true},
  };
  return kFlags;
}

// "" when every flag of `command` is one servesim reads or may ignore; else why not.
std::string unmodelled_serve_flag(const std::string& command) {
  std::string cmd = command.substr(0, command.find('['));  // "[reconstructed from ...]"
  std::istringstream in(cmd);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  if (words.size() < 3 || words[0] != "vllm" || words[1] != "serve") {
    return "the serve command is not shown ('" + trim(command) + "')";
  }
  for (size_t i = 3; i < words.size(); ++i) {
    const std::string flag = words[i].substr(0, words[i].find('='));
    auto it = serve_flags().find(flag);
    if (it == serve_flags().end()) {
      return "serve flag '" + flag + "' is not modelled by this reader";
    }
    if (it->second && words[i].find('=') == std::string::npos) ++i;
  }
  return "";
}

// `n` integer lengths summing to `total` (as evenly as integers allow), in a fixed order.
std::vector<int32_t> even_split(int64_t total, int64_t n) {
  std::vector<int32_t> out;
  for (int64_t i = 0; i < n; ++i) {
    out.push_back(static_cast<int32_t>(total * (i + 1) / n - total * i / n));
  }
  return out;
}

}  // namespace

std::vector<MeasuredRun> read_public_runs_csv(const std::string& path) {
  const std::vector<std::string> lines = read_lines(path);
  if (lines.empty()) throw ConfigError(path + ": empty file");
  const std::vector<std::string> header = split_quoted(lines[0]);
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < header.size(); ++i) col[trim(header[i])] = i;
  for (const char* key : {"row_id",
                          "source_id",
                          "gpu",
                          "tp",
                          "pp",
                          "dp_ep",
                          "model",
                          "dtype_quant",
                          "vllm_version",
                          "serve_command",
                          "max_num_seqs",
                          "max_num_batched_tokens",
                          "max_model_len",
                          "gpu_memory_utilization",
                          "async_scheduling",
                          "kv_cache_tokens",
                          "endpoint",
                          "dataset",
                          "input_len",
                          "output_len",
                          "request_rate",
                          "max_concurrency",
                          "num_prompts",
                          "successful_requests",
                          "duration_s",
                          "total_input_tokens",
                          "total_output_tokens"}) {
    if (col.count(key) == 0) throw ConfigError(path + ": no column '" + key + "'");
  }
  std::vector<MeasuredRun> runs;
  for (size_t li = 1; li < lines.size(); ++li) {
    if (trim(lines[li]).empty()) continue;
    const std::string at = path + ":" + std::to_string(li + 1);
    const std::vector<std::string> cells = split_quoted(lines[li]);
    if (cells.size() != header.size()) {
      throw ConfigError(at + ": " + std::to_string(cells.size()) + " cells; expected " +
                        std::to_string(header.size()));
    }
    auto cell = [&](const std::string& key) { return trim(cells[col.at(key)]); };
    auto number = [&](const std::string& key) { return leading_number(cell(key)); };
    auto field = [&](const std::string& key) { return at + " (" + key + ")"; };

    MeasuredRun run;
    const int64_t row = whole_number(to_double(cell("row_id"), at + ": row_id"), 0,
                                     std::numeric_limits<int32_t>::max(), at + ": row_id");
    run.id = join_index(path, row);
    run.path = path;
    run.format = "public-vllm-runs";
    const std::string model_id = trim(cell("model").substr(0, cell("model").find('(')));
    const std::string quant = cell("dtype_quant");
    run.label = cell("source_id") + " row " + cell("row_id") + ": " + model_id + " TP" +
                cell("tp") + ", " + cell("dataset").substr(0, cell("dataset").find(' ')) + " " +
                cell("input_len").substr(0, cell("input_len").find(' ')) + "/" +
                cell("output_len").substr(0, cell("output_len").find(' '));
    MeasuredDeployment& dep = run.deployment;
    dep.model_id = model_id;
    dep.hardware = cell("gpu");
    dep.engine_version = cell("vllm_version");
    dep.source["engine_version"] = field("vllm_version");
    std::vector<std::string> refusals;
    auto refuse = [&](const std::string& why) { refusals.push_back(why); };

    // --- model and checkpoint ---
    std::string base_id = model_id;
    std::string quantization;
    if (starts_with(quant, "FP8")) {
      quantization = "fp8";
      if (base_id.size() > 4 && base_id.compare(base_id.size() - 4, 4, "-FP8") == 0) {
        base_id.resize(base_id.size() - 4);
      }
    } else if (starts_with(quant, "MXFP4")) {
      quantization = "mxfp4";
    } else if (!starts_with(quant, "BF16")) {
      refuse("checkpoint '" + quant +
             "' is not modelled from the catalog (integer-weight checkpoints are read from "
             "their own config.json: give it with --model)");
    }
    const PublicModel* m = nullptr;
    for (const PublicModel& pm : kModels) {
      if (base_id == pm.id) m = &pm;
    }
    if (m == nullptr) {
      refuse("model '" + model_id + "' is not in servesim's catalog");
    } else {
      dep.set("model", std::string(m->catalog), field("model"));
      if (*m->why != '\0') run.notes.push_back(m->why);
      // MXFP4 is gpt-oss's own checkpoint format (experts at 4.25 bits), named as the
      // InferenceX reader names it.
      if (quantization == "mxfp4") dep.set("quantization", "mxfp4", field("dtype_quant"));
      if (quantization == "fp8") {
        dep.set("quantization", "fp8", field("dtype_quant"));
        run.notes.push_back(
            "FP8 checkpoint on an A100 (no FP8 tensor cores): 1-byte weights at bf16 compute, "
            "vLLM's weight-only FP8 path");
      }
    }
    // --- GPU: every row is an A100; the 80 GB part unless the row says 40 GB ---
    const std::string gpu = cell("gpu");
    if (gpu.find("A100") == std::string::npos) {
      refuse("GPU '" + gpu + "' is not an A100");
    } else if (gpu.find("40GB") != std::string::npos) {
      dep.set("gpu", "a100-40gb", field("gpu"));
    } else {
      dep.set("gpu", "a100-80gb", field("gpu"));
      if (gpu.find("80GB") == std::string::npos) {
        run.notes.push_back("GPU memory not stated ('" + gpu +
                            "'): the 80 GB A100, as the publisher's other A100 pages name it");
      } else if (gpu.find("SXM 80GB") == std::string::npos) {
        run.notes.push_back("form factor not stated ('" + gpu + "'): the SXM part");
      }
    }
    // --- engine flags ---
    const std::string flag_problem = unmodelled_serve_flag(cell("serve_command"));
    if (!flag_problem.empty()) refuse(flag_problem);
    const double tp = number("tp"), pp = number("pp");
    dep.set("tensor_parallel_size",
            std::isnan(tp) ? int64_t{1} : whole_number(tp, 1, 1024, field("tp")), field("tp"));
    if (!std::isnan(pp)) {
      dep.set("pipeline_parallel_size", whole_number(pp, 1, 1024, field("pp")), field("pp"));
    }
    if (cell("dp_ep").find("expert-parallel") != std::string::npos) {
      dep.set("enable_expert_parallel", true, field("dp_ep"));
    } else if (!cell("dp_ep").empty()) {
      refuse("dp_ep '" + cell("dp_ep") + "' is not modelled by this reader");
    }
    for (const char* key : {"max_num_seqs", "max_num_batched_tokens", "max_model_len"}) {
      const double v = number(key);
      if (!std::isnan(v)) {
        dep.set(key, whole_number(v, 1, std::numeric_limits<int32_t>::max(), field(key)),
                field(key));
      }
    }
    if (const double v = number("gpu_memory_utilization"); !std::isnan(v)) {
      dep.set("gpu_memory_utilization", v, field("gpu_memory_utilization"));
    }
    if (starts_with(cell("async_scheduling"), "on")) {
      dep.set("async_scheduling", true, field("async_scheduling"));
    }
    if (cell("serve_command").find("--enforce-eager") != std::string::npos) {
      dep.set("enforce_eager", true, field("serve_command"));
    }
    // The server log's "GPU KV cache size: N tokens" is num_gpu_blocks × block_size (16).
    if (const double kv = number("kv_cache_tokens"); !std::isnan(kv)) {
      const int64_t tokens =
          whole_number(kv, 16, std::numeric_limits<int32_t>::max(), field("kv_cache_tokens"));
      dep.set("num_gpu_blocks_override", tokens / 16, field("kv_cache_tokens") + " / 16");
    }
    const std::string version = sim::vllm_minor_version(cell("vllm_version"));
    if (version.empty()) {
      refuse("vLLM version '" + cell("vllm_version") + "' is not X.Y");
    } else {
      try {
        sim::vllm_version(version, field("vllm_version"));
        dep.set("vllm_version", version, field("vllm_version"));
      } catch (const ConfigError& e) {
        refuse(e.what());
      }
    }

    // --- load ---
    const std::string rate = cell("request_rate");
    if (starts_with(rate, "inf") || rate.find("default inf") != std::string::npos) {
      run.request_rate = kInf;
    } else if (const double r = leading_number(rate); !std::isnan(r) && r > 0) {
      run.request_rate = r;
    } else {
      refuse("request_rate '" + rate + "' is not a rate");
    }
    if (const double c = number("max_concurrency"); !std::isnan(c)) {
      run.max_concurrency =
          whole_number(c, 1, std::numeric_limits<int32_t>::max(), field("max_concurrency"));
    }
    const double prompts = number("num_prompts"), ok = number("successful_requests");
    if (std::isnan(prompts) && std::isnan(ok)) refuse("neither num_prompts nor a success count");
    run.num_prompts =
        whole_number(std::isnan(prompts) ? ok : prompts, 0, 1 << 24, field("num_prompts"));
    if (std::isnan(prompts)) {
      run.notes.push_back("num_prompts not stated: the " + std::to_string(run.num_prompts) +
                          " successful requests");
    }
    if (!std::isnan(ok) && ok < static_cast<double>(run.num_prompts)) {
      refuse("only " + cell("successful_requests") + " of " + std::to_string(run.num_prompts) +
             " requests completed (the failed requests' load is not known)");
    }
    const bool chat = cell("endpoint").find("chat/completions") != std::string::npos;
    if (chat || cell("endpoint").find("/v1/completions") != std::string::npos) {
      run.endpoint = chat ? "chat" : "completions";
    }
    const std::string dataset = cell("dataset");
    const double total_in = number("total_input_tokens"), total_out = number("total_output_tokens");
    const int64_t n = run.num_prompts;
    if (n > 0 && starts_with(dataset, "sharegpt")) {
      // vllm bench serve's ShareGPT: first-turn prompts and completions, shuffled with seed 0.
      // The shipped first-turn set (Llama 3 tokenizer) sampled the same way, each length scaled
      // so the totals are the row's (its tokenizer counts the same texts differently).
      workloads::LengthSampling s;
      s.mode = workloads::LengthSampling::Mode::kShareGpt;
      s.num_prompts = n;
      s.filtered_upstream = true;
      const std::string source = workloads::shipped_sharegpt_first_turn_path();
      workloads::SampledLengthDataset ds(workloads::read_lengths_csv(source, source), s, 0, source);
      double sum_in = 0, sum_out = 0;
      for (const auto& p : ds.chosen()) {
        sum_in += p.prompt;
        sum_out += p.output;
      }
      const double fin = std::isnan(total_in) ? 1.0 : total_in / sum_in;
      const double fout = std::isnan(total_out) ? 1.0 : total_out / sum_out;
      for (const auto& p : ds.chosen()) {
        MeasuredRequest r;
        r.input_tokens = std::max<int32_t>(1, static_cast<int32_t>(std::lround(p.prompt * fin)));
        r.output_tokens = std::max<int32_t>(1, static_cast<int32_t>(std::lround(p.output * fout)));
        run.requests.push_back(r);
      }
      std::ostringstream note;
      note.precision(3);
      note << "ShareGPT first turns: the shipped first-turn set (seed 0) scaled x" << fin
           << " in, x" << fout << " out to the row's token totals";
      run.notes.push_back(note.str());
    } else if (n > 0 && dataset == "random") {
      // Random prompts of input_len, range ratio 0 (the client's default): the row's totals
      // split evenly (outputs stop early without --ignore-eos; the totals say how early).
      const double in = number("input_len"), out = number("output_len");
      if (std::isnan(in) || std::isnan(out)) refuse("random lengths not stated");
      const int64_t tin =
          std::isnan(total_in) ? static_cast<int64_t>(in) * n : static_cast<int64_t>(total_in);
      const int64_t tout =
          std::isnan(total_out) ? static_cast<int64_t>(out) * n : static_cast<int64_t>(total_out);
      if (tin < n || tout < n) refuse("token totals below one token per request");
      if (refusals.empty()) {
        const std::vector<int32_t> ins = even_split(tin, n), outs = even_split(tout, n);
        for (int64_t i = 0; i < n; ++i) {
          MeasuredRequest r;
          r.input_tokens = ins[static_cast<size_t>(i)];
          r.output_tokens = outs[static_cast<size_t>(i)];
          run.requests.push_back(r);
        }
        run.notes.push_back("random " + cell("input_len") + "/" + cell("output_len") +
                            ": the row's totals split evenly over the requests");
      }
    } else {
      refuse("dataset '" + dataset + "' is not modelled by this reader");
    }

    // The chat endpoint: the server prefills the rendered template, the row's lengths are the
    // client's (models/chat_template_tokens.h).
    if (chat) {
      if (const auto t = models::chat_template_tokens(model_id)) {
        for (MeasuredRequest& r : run.requests) r.input_tokens += t->tokens;
        // The template's opening is the same in every request (gpt-oss's system message: 62
        // tokens, 3 KV blocks vLLM's prefix cache shares; Qwen3's 3 and GLM's 4 fill none).
        run.shared_prefix_tokens = t->leading;
        run.notes.push_back("/v1/chat/completions: + " + std::to_string(t->tokens) +
                            " prompt tokens per request, the " + t->family +
                            " chat template around one user message, the first " +
                            std::to_string(t->leading) + " shared by every request");
      } else {
        run.notes.push_back(
            "/v1/chat/completions: the chat template's prompt tokens are not counted for " +
            model_id + " (lengths are the client's)");
      }
    }

    // --- measured ---
    for (const char* metric : {"ttft", "tpot", "itl", "e2el"}) {
      for (const char* stat : {"mean", "median", "p99"}) {
        const std::string key = std::string(metric) + "_" + stat + "_ms";
        if (col.count(key) == 0) continue;
        const double v = number(key);
        if (!std::isnan(v)) run.metrics[metric_key(stat, metric)] = v;
      }
    }
    // vLLM's request_throughput is completed / duration; the row's is rounded to 0.01.
    if (const double d = number("duration_s"); !std::isnan(d) && d > 0 && n > 0) {
      run.metrics["request_throughput"] = static_cast<double>(n) / d;
      if (!std::isnan(total_out)) run.metrics["output_throughput"] = total_out / d;
    }
    if (!refusals.empty()) {
      std::string why;
      for (const std::string& r : refusals) why += (why.empty() ? "" : "; ") + r;
      run.refused = why;
    }
    runs.push_back(std::move(run));
  }
  if (runs.empty()) throw ConfigError(path + ": no rows");
  return runs;
}

}  // namespace servesim::measured
