#include "sim/measured/readers.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <numeric>
#include <regex>
#include <sstream>

#include "sim/base/error.h"
#include "sim/base/json_file.h"
#include "sim/base/resource_limits.h"
#include "sim/base/rng.h"
#include "sim/replica/vllm_version.h"

namespace servesim::measured {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
constexpr double kInf = std::numeric_limits<double>::infinity();

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path.string() + ": cannot open file");
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

// Lines without their '\n' and any '\r' (CRLF files).
std::vector<std::string> read_lines(const fs::path& path) {
  std::vector<std::string> lines;
  std::stringstream in(read_text(path));
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\"'");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\"'");
  return s.substr(b, e - b + 1);
}

double to_double(const std::string& text, const std::string& where) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(v)) {
    throw ConfigError(where + ": '" + text + "' is not a finite number");
  }
  return v;
}

// An integer setting read as a number (a client flag, a YAML value, a CSV cell): a whole number
// in [lo, hi], so the cast is defined (a double beyond int64's range cast to it is undefined
// behaviour, and 1e300 or -1 read as a concurrency or a seed is not what the file meant).
int64_t whole_number(double v, int64_t lo, int64_t hi, const std::string& where) {
  if (!(v >= static_cast<double>(lo) && v <= static_cast<double>(hi) && v == std::floor(v))) {
    std::ostringstream os;
    os << where << ": " << v << " is invalid; expected an integer in [" << lo << ", " << hi << "]";
    throw ConfigError(os.str());
  }
  return static_cast<int64_t>(v);
}

// A token count or index read as a number: an integer in [0, 2^31 - 1], so the cast is defined.
int32_t token_count(double v, const std::string& where) {
  if (!(v >= 0 && v <= 2147483647.0 && v == std::floor(v))) {
    std::ostringstream os;
    os << where << ": " << v << " is not a count; expected an integer in [0, 2147483647]";
    throw ConfigError(os.str());
  }
  return static_cast<int32_t>(v);
}

// A request rate as files write it: a number, or "inf" / "Infinity" (also after
// parse_python_json). null = unknown, taken as inf.
double rate_of(const json& v, const std::string& where) {
  if (v.is_null()) return kInf;
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s == "inf" || s == "Infinity" || s == "infinity" || s == "Inf") return kInf;
    return to_double(s, where + ": request_rate");
  }
  throw ConfigError(where + ": request_rate has value " + v.dump() +
                    "; expected a number or \"inf\"");
}

double number_of(const json& j, const std::string& key, const std::string& where) {
  const json& v = j.at(key);
  if (!v.is_number()) {
    throw ConfigError(where + ": field '" + key + "' has value " + v.dump() + "; expected a number");
  }
  return v.get<double>();
}

// A per-request array of numbers (seconds or counts); empty when absent.
std::vector<double> number_array(const json& j, const std::string& key, const std::string& where) {
  std::vector<double> out;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return out;
  if (!it->is_array()) throw ConfigError(where + ": field '" + key + "' is not an array");
  out.reserve(it->size());
  for (size_t i = 0; i < it->size(); ++i) {
    const json& v = (*it)[i];
    if (!v.is_number()) {
      throw ConfigError(where + ": " + key + "[" + std::to_string(i) + "] has value " + v.dump() +
                        "; expected a number");
    }
    out.push_back(v.get<double>());
  }
  return out;
}

void require_size(const std::vector<double>& v, size_t n, const std::string& key,
                  const std::string& where) {
  if (!v.empty() && v.size() != n) {
    throw ConfigError(where + ": field '" + key + "' has " + std::to_string(v.size()) +
                      " entries but input_lens has " + std::to_string(n));
  }
}

// Per-request arrays shared by vLLM and SGLang result files (seconds).
void read_request_arrays(const json& j, MeasuredRun& run, const std::string& where) {
  const std::vector<double> in = number_array(j, "input_lens", where);
  if (in.empty()) return;
  const size_t n = in.size();
  const std::vector<double> out = number_array(j, "output_lens", where);
  if (out.size() != n) {
    throw ConfigError(where + ": field 'output_lens' has " + std::to_string(out.size()) +
                      " entries but input_lens has " + std::to_string(n));
  }
  const std::vector<double> ttfts = number_array(j, "ttfts", where);
  const std::vector<double> latencies = number_array(j, "latencies", where);
  const std::vector<double> starts = number_array(j, "start_times", where);
  require_size(ttfts, n, "ttfts", where);
  require_size(latencies, n, "latencies", where);
  require_size(starts, n, "start_times", where);
  const json* itls = nullptr;
  if (auto it = j.find("itls"); it != j.end() && !it->is_null()) {
    if (!it->is_array() || it->size() != n) {
      throw ConfigError(where + ": field 'itls' must be an array of " + std::to_string(n) +
                        " lists (one per request)");
    }
    itls = &*it;
  }
  const json* errors = nullptr;
  if (auto it = j.find("errors"); it != j.end() && it->is_array() && it->size() == n) {
    errors = &*it;
  }
  const double t0 = starts.empty() ? 0.0 : *std::min_element(starts.begin(), starts.end());
  run.requests.resize(n);
  for (size_t i = 0; i < n; ++i) {
    MeasuredRequest& r = run.requests[i];
    r.input_tokens = token_count(in[i], where + ": input_lens[" + std::to_string(i) + "]");
    r.output_tokens = token_count(out[i], where + ": output_lens[" + std::to_string(i) + "]");
    if (!ttfts.empty() && ttfts[i] < 0) {
      throw ConfigError(where + ": ttfts[" + std::to_string(i) + "] is " +
                        std::to_string(ttfts[i]) + "; expected a time >= 0");
    }
    if (!ttfts.empty()) r.ttft_s = ttfts[i];
    if (!latencies.empty()) r.e2e_s = latencies[i];
    if (!starts.empty()) r.start_s = starts[i] - t0;
    if (itls != nullptr) {
      const json& list = (*itls)[i];
      if (!list.is_array()) {
        throw ConfigError(where + ": itls[" + std::to_string(i) + "] is not a list");
      }
      for (const json& g : list) {
        if (!g.is_number()) {
          throw ConfigError(where + ": itls[" + std::to_string(i) + "] holds " + g.dump() +
                            "; expected numbers (seconds)");
        }
        r.itls_s.push_back(g.get<double>());
      }
    }
    // vLLM's calculate_metrics records output length 0 for a failed request; newer files also
    // carry its error text.
    r.failed = r.output_tokens <= 0 ||
               (errors != nullptr && (*errors)[i].is_string() &&
                !(*errors)[i].get<std::string>().empty());
  }
  run.has_start_times = !starts.empty();
  run.num_prompts = static_cast<int64_t>(n);
}

// Copies "<stat>_<metric>_ms" summary keys (stat: mean, median, std, pNN) for `metric` named
// `file_metric` in the file.
void read_summaries(const json& j, MeasuredRun& run, const std::string& file_metric,
                    const std::string& metric) {
  static const std::regex kKey(R"(^(mean|median|std|p[0-9]+(\.[0-9]+)?)_(.+)_ms$)");
  for (const auto& [key, value] : j.items()) {
    std::smatch m;
    if (!value.is_number() || !std::regex_match(key, m, kKey) || m[3] != file_metric) continue;
    run.metrics[metric_key(m[1], metric)] = value.get<double>();
  }
}

bool close_rel(double a, double b, double rel) {
  return std::fabs(a - b) <= rel * std::max(std::fabs(a), std::fabs(b));
}

// vLLM commit 8668d7c's benchmark_serving.py wrote mean_e2el_ms = np.median and
// median_e2el_ms = np.mean. With per-request data the swap shows; it is undone and noted.
void fix_e2el_swap(MeasuredRun& run) {
  auto mean_it = run.metrics.find("mean_e2el_ms");
  auto median_it = run.metrics.find("median_e2el_ms");
  if (mean_it == run.metrics.end() || median_it == run.metrics.end()) return;
  MeasuredRun probe;
  probe.requests = run.requests;
  fill_metrics_from_requests(probe);
  if (!probe.metrics.count("mean_e2el_ms")) return;
  const double mean = probe.metrics["mean_e2el_ms"];
  const double median = probe.metrics["median_e2el_ms"];
  const double kRel = 0.005;  // arrays may be rounded (llm-k8s: 1 µs)
  if (!close_rel(mean_it->second, mean, kRel) && close_rel(mean_it->second, median, kRel) &&
      close_rel(median_it->second, mean, kRel)) {
    std::swap(mean_it->second, median_it->second);
    run.notes.push_back(
        "mean_e2el_ms and median_e2el_ms were swapped in the file (benchmark_serving.py at vLLM "
        "commit 8668d7c wrote mean = np.median and median = np.mean); swapped back, as the "
        "per-request latencies show");
  }
}

// Splits a shell command line on blanks ("--flag value" and "--flag=value" both occur).
std::map<std::string, std::string> command_flags(const std::string& command) {
  std::map<std::string, std::string> flags;
  std::stringstream in(command);
  std::vector<std::string> words;
  std::string w;
  while (in >> w) words.push_back(w);
  for (size_t i = 0; i < words.size(); ++i) {
    if (words[i].rfind("--", 0) != 0) continue;
    const auto eq = words[i].find('=');
    if (eq != std::string::npos) {
      flags[words[i].substr(0, eq)] = words[i].substr(eq + 1);
    } else if (i + 1 < words.size() && words[i + 1].rfind("--", 0) != 0) {
      flags[words[i]] = words[i + 1];
      ++i;
    } else {
      flags[words[i]] = "";
    }
  }
  return flags;
}

// The llm-k8s layout: "<stem>.commands" beside "<stem>.json" = {"client_command", "gpu_type"}.
void read_commands_file(MeasuredRun& run, const fs::path& json_path) {
  fs::path commands = json_path;
  commands.replace_extension(".commands");
  if (!fs::is_regular_file(commands)) return;
  const std::string where = commands.string();
  const json j = read_json_file(commands);
  if (!j.is_object()) throw ConfigError(where + ": expected a JSON object");
  if (auto it = j.find("gpu_type"); it != j.end() && it->is_string()) {
    run.deployment.hardware = it->get<std::string>();
    run.deployment.source["hardware"] = where + " (gpu_type)";
    const std::string gpu = catalog_gpu_for(run.deployment.hardware);
    if (!gpu.empty()) run.deployment.set("gpu", gpu, where + " (gpu_type)");
  }
  if (auto it = j.find("client_command"); it != j.end() && it->is_string()) {
    const auto flags = command_flags(it->get<std::string>());
    if (auto f = flags.find("--seed"); f != flags.end()) {
      // Exactly representable integers only (2^53): a seed is an identity, not a magnitude.
      run.seed = static_cast<uint64_t>(
          whole_number(to_double(f->second, where + ": --seed"), 0, int64_t{1} << 53, where + ": --seed"));
    }
    if (auto f = flags.find("--dataset-name"); f != flags.end()) {
      run.notes.push_back("client dataset: " + f->second + " (" + where + ")");
    }
    if (auto f = flags.find("--max-concurrency"); f != flags.end() && run.max_concurrency == 0) {
      run.max_concurrency = whole_number(to_double(f->second, where + ": --max-concurrency"), 0,
                                         std::numeric_limits<int32_t>::max(),
                                         where + ": --max-concurrency");
    }
  }
}

// "key: value" lines of a flat YAML file (no nesting needed here); comments dropped.
std::map<std::string, std::string> flat_yaml(const fs::path& path) {
  std::map<std::string, std::string> out;
  for (std::string line : read_lines(path)) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = trim(line.substr(0, colon));
    const std::string value = trim(line.substr(colon + 1));
    if (!key.empty() && !value.empty()) out.emplace(key, value);  // first occurrence wins
  }
  return out;
}

// The cells of a CSV line without quoted fields (the summary tables read here have none).
std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> cells;
  std::string cell;
  std::stringstream in(line);
  while (std::getline(in, cell, ',')) cells.push_back(cell);
  if (!line.empty() && line.back() == ',') cells.emplace_back();  // an empty last cell
  return cells;
}

// The cells of data line `line` (at = "file:line") of a table whose columns `col` names (from
// csv_columns); ConfigError when it lacks a cell a column points at. The width is the largest
// index + 1, not col.size(): a header naming one column twice maps fewer names than positions.
std::vector<std::string> csv_row(const std::string& line, const std::map<std::string, size_t>& col,
                                 const std::string& at) {
  size_t width = 0;
  for (const auto& [name, index] : col) width = std::max(width, index + 1);
  std::vector<std::string> cells = split_csv_line(line);
  if (cells.size() < width) {
    throw ConfigError(at + ": " + std::to_string(cells.size()) + " cells; expected " +
                      std::to_string(width));
  }
  return cells;
}

// Column name -> index of a CSV header; ConfigError naming `path` for a missing required one.
std::map<std::string, size_t> csv_columns(const std::string& header, const std::string& path,
                                          std::initializer_list<const char*> required) {
  const std::vector<std::string> names = split_csv_line(header);
  std::map<std::string, size_t> col;
  for (size_t i = 0; i < names.size(); ++i) col[trim(names[i])] = i;
  for (const char* key : required) {
    if (!col.count(key)) throw ConfigError(path + ": missing column '" + key + "'");
  }
  return col;
}

std::string join_index(const std::string& path, int64_t n) { return path + "#" + std::to_string(n); }

// ---- genai-perf ----

double genai_unit_to_ms(const std::string& unit, const std::string& where) {
  if (unit.empty() || unit == "ms") return 1.0;
  if (unit == "ns") return 1e-6;
  if (unit == "us") return 1e-3;
  if (unit == "s" || unit == "sec") return 1e3;
  throw ConfigError(where + ": unknown time unit '" + unit + "'; expected ms, ns, us or s");
}

}  // namespace

json parse_python_json(const std::string& text, const std::string& where) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      out += c;
    } else if (text.compare(i, 9, "-Infinity") == 0) {
      out += "\"-inf\"";
      i += 8;
    } else if (text.compare(i, 8, "Infinity") == 0) {
      out += "\"inf\"";
      i += 7;
    } else if (text.compare(i, 3, "NaN") == 0) {
      out += "null";
      i += 2;
    } else {
      out += c;
    }
  }
  return parse_json_text(out, where);  // also refuses 1e400 and duplicate keys
}

std::string detect_format(const std::string& path) {
  const fs::path p(path);
  if (fs::is_directory(p)) {
    if (fs::is_regular_file(p / "requests.jsonl") || fs::is_regular_file(p / "vllm" / "requests.jsonl")) {
      return "llmservingsim";
    }
    throw ConfigError(path + ": a folder without requests.jsonl or vllm/requests.jsonl; expected a "
                             "result file");
  }
  if (!fs::exists(p)) throw ConfigError(path + ": no such file");
  const std::string name = p.filename().string();
  if (name == "requests.jsonl") return "llmservingsim";
  if (p.extension() == ".jsonl") return "sglang-bench";
  if (p.extension() == ".csv") {
    // InferenceX's and Argonne's summary tables are recognised by their headers; other CSVs are
    // guidellm's.
    const std::vector<std::string> lines = read_lines(p);
    if (!lines.empty() && lines[0].rfind("model,gpu,precision,framework,tp,isl_osl_label", 0) == 0) {
      return "inferencex";
    }
    if (!lines.empty() && lines[0].rfind("Hardware,Num of Hardware,Framework,Model", 0) == 0) {
      return "argonne";
    }
    return "guidellm";
  }
  if (name.size() >= 15 && name.compare(name.size() - 15, 15, "genai_perf.json") == 0) {
    return "genai-perf";
  }
  if (p.extension() == ".json") {
    const json j = parse_python_json(read_text(p), path);
    if (j.is_object() && j.contains("time_to_first_token")) return "genai-perf";
    if (j.is_object() && (j.contains("ttfts") || j.contains("mean_ttft_ms") || j.contains("completed"))) {
      return "vllm-bench";
    }
  }
  throw ConfigError(path + ": unknown result format; expected a vllm bench serve JSON, an SGLang "
                           "bench_serving JSONL, a genai-perf profile_export_genai_perf.json, an "
                           "LLMServingSim requests.jsonl or a guidellm per-request CSV");
}

std::vector<MeasuredRun> read_vllm_bench_json(const std::string& path) {
  const json j = parse_python_json(read_text(path), path);
  if (!j.is_object() ||
      !(j.contains("ttfts") || j.contains("mean_ttft_ms") || j.contains("completed"))) {
    throw ConfigError(path + ": not a vllm bench serve result (no 'ttfts', 'mean_ttft_ms' or "
                             "'completed')");
  }
  MeasuredRun run;
  run.id = path;
  run.path = path;
  run.format = "vllm-bench";
  if (auto it = j.find("model_id"); it != j.end() && it->is_string()) {
    run.deployment.model_id = it->get<std::string>();
    const std::string model = catalog_model_for(run.deployment.model_id);
    if (!model.empty()) run.deployment.set("model", model, path + " (model_id)");
  }
  if (j.contains("request_rate")) run.request_rate = rate_of(j["request_rate"], path);
  if (auto it = j.find("burstiness"); it != j.end() && !it->is_null()) {
    run.burstiness = number_of(j, "burstiness", path);
  }
  if (auto it = j.find("max_concurrency"); it != j.end() && !it->is_null()) {
    run.max_concurrency = whole_number(number_of(j, "max_concurrency", path), 0,
                                       std::numeric_limits<int32_t>::max(),
                                       path + ": field 'max_concurrency'");
  }
  read_request_arrays(j, run, path);
  if (run.num_prompts == 0) {
    if (auto it = j.find("num_prompts"); it != j.end() && it->is_number()) {
      run.num_prompts = json_value_as<int64_t>(*it, path + ": field 'num_prompts'");
    } else if (auto c = j.find("completed"); c != j.end() && c->is_number()) {
      run.num_prompts = json_value_as<int64_t>(*c, path + ": field 'completed'");
    }
  }
  for (const std::string& m : latency_metric_names()) read_summaries(j, run, m, m);
  for (const char* key : {"request_throughput", "output_throughput", "total_token_throughput"}) {
    if (auto it = j.find(key); it != j.end() && it->is_number()) run.metrics[key] = it->get<double>();
  }
  // Goodput: "request_goodput:" (old, trailing colon) or "request_goodput" (new); null unless
  // --goodput was given. Kept for reference, not compared.
  for (const char* key : {"request_goodput:", "request_goodput"}) {
    if (auto it = j.find(key); it != j.end() && it->is_number()) {
      run.metrics["request_goodput"] = it->get<double>();
    }
  }
  if (run.requests.empty()) {
    // --save-result without --save-detailed: no per-request arrays. vLLM still writes the token
    // totals, so the replay uses their means (replay.cpp refuses a file that has neither).
    const double completed = optional_field<double>(j, "completed", path, 0);
    if (completed > 0) {
      run.mean_input_tokens = optional_field<double>(j, "total_input_tokens", path, 0) / completed;
      run.mean_output_tokens =
          optional_field<double>(j, "total_output_tokens", path, 0) / completed;
    }
    run.notes.push_back("no per-request arrays (saved without --save-detailed): replayed with the "
                        "mean input and output lengths");
  }
  if (!run.requests.empty()) {
    fix_e2el_swap(run);
    if (!j.contains("latencies")) {
      run.notes.push_back("E2E = ttft + sum(itls) per request (the file has no 'latencies')");
    }
  }
  read_commands_file(run, path);
  fill_metrics_from_requests(run);
  return {run};
}

std::vector<MeasuredRun> read_sglang_jsonl(const std::string& path) {
  const std::vector<std::string> lines = read_lines(path);
  std::vector<MeasuredRun> runs;
  for (size_t li = 0; li < lines.size(); ++li) {
    if (trim(lines[li]).empty()) continue;
    const std::string where = path + ":" + std::to_string(li + 1);
    const json j = parse_python_json(lines[li], where);
    if (!j.is_object() || !(j.contains("completed") || j.contains("mean_ttft_ms"))) {
      throw ConfigError(where + ": not an SGLang bench_serving result (no 'completed' or "
                                "'mean_ttft_ms')");
    }
    MeasuredRun run;
    run.id = join_index(path, static_cast<int64_t>(runs.size()) + 1);
    run.path = path;
    run.format = "sglang-bench";
    for (const char* key : {"model_id", "model", "tokenizer_id"}) {
      if (auto it = j.find(key); it != j.end() && it->is_string()) {
        run.deployment.model_id = it->get<std::string>();
        const std::string model = catalog_model_for(run.deployment.model_id);
        if (!model.empty()) run.deployment.set("model", model, where + " (" + key + ")");
        break;
      }
    }
    if (j.contains("request_rate")) run.request_rate = rate_of(j["request_rate"], where);
    if (auto it = j.find("max_concurrency"); it != j.end() && it->is_number()) {
      run.max_concurrency = json_value_as<int64_t>(*it, where + ": field 'max_concurrency'");
    }
    if (auto it = j.find("backend"); it != j.end() && it->is_string()) {
      run.label = it->get<std::string>();
    }
    read_request_arrays(j, run, where);
    if (run.num_prompts == 0) {
      run.num_prompts = optional_field<int64_t>(j, "completed", where, 0);
    }
    read_summaries(j, run, "ttft", "ttft");
    read_summaries(j, run, "tpot", "tpot");
    read_summaries(j, run, "itl", "itl");
    read_summaries(j, run, "e2e_latency", "e2el");
    for (const char* key : {"request_throughput", "output_throughput"}) {
      if (auto it = j.find(key); it != j.end() && it->is_number()) {
        run.metrics[key] = it->get<double>();
      }
    }
    if (run.requests.empty()) {
      const double completed = optional_field<double>(j, "completed", where, 0);
      if (completed > 0) {
        run.mean_input_tokens = optional_field<double>(j, "total_input_tokens", where, 0) / completed;
        run.mean_output_tokens =
            optional_field<double>(j, "total_output_tokens", where, 0) / completed;
      }
      run.notes.push_back("no per-request data (run without --output-details): replayed with the "
                          "mean input and output lengths");
    } else if (!j.contains("latencies")) {
      run.notes.push_back("E2E = ttft + sum(itls) per request");
    }
    fill_metrics_from_requests(run);
    runs.push_back(std::move(run));
  }
  if (runs.empty()) throw ConfigError(path + ": no runs (the file is empty)");
  return runs;
}

std::vector<MeasuredRun> read_genai_perf_json(const std::string& path) {
  const json j = parse_python_json(read_text(path), path);
  if (!j.is_object() || !j.contains("time_to_first_token")) {
    throw ConfigError(path + ": not a genai-perf profile export (no 'time_to_first_token')");
  }
  MeasuredRun run;
  run.id = path;
  run.path = path;
  run.format = "genai-perf";
  // genai-perf metric -> vLLM metric. inter_token_latency is per request
  // (request_latency − TTFT)/(output − 1) (genai_perf/metrics/llm_metrics.py), vLLM's TPOT.
  const std::pair<const char*, const char*> kMap[] = {
      {"time_to_first_token", "ttft"}, {"inter_token_latency", "tpot"}, {"request_latency", "e2el"}};
  const std::pair<const char*, const char*> kStats[] = {
      {"avg", "mean"}, {"p50", "median"}, {"std", "std"}, {"p90", "p90"}, {"p95", "p95"}, {"p99", "p99"}};
  for (const auto& [name, metric] : kMap) {
    auto it = j.find(name);
    if (it == j.end()) continue;
    const std::string where = path + ": " + name;
    if (!it->is_object()) throw ConfigError(where + " is not an object");
    const double scale = genai_unit_to_ms(optional_field<std::string>(*it, "unit", where, "ms"), where);
    for (const auto& [from, to] : kStats) {
      if (auto v = it->find(from); v != it->end() && v->is_number()) {
        run.metrics[metric_key(to, metric)] = v->get<double>() * scale;
      }
    }
  }
  auto avg_of = [&](const char* name) -> double {
    auto it = j.find(name);
    if (it == j.end() || !it->is_object() || !it->contains("avg") || !(*it)["avg"].is_number()) {
      return kUnknown;
    }
    return (*it)["avg"].get<double>();
  };
  if (double v = avg_of("request_throughput"); !std::isnan(v)) run.metrics["request_throughput"] = v;
  if (double v = avg_of("output_token_throughput"); !std::isnan(v)) {
    run.metrics["output_throughput"] = v;
  }
  run.mean_input_tokens = avg_of("input_sequence_length");
  run.mean_output_tokens = avg_of("output_sequence_length");
  if (std::isnan(run.mean_input_tokens) || std::isnan(run.mean_output_tokens)) {
    throw ConfigError(path + ": missing input_sequence_length.avg or output_sequence_length.avg "
                             "(needed to replay the run)");
  }
  run.num_prompts = 0;
  if (auto ic = j.find("input_config"); ic != j.end() && ic->is_object()) {
    const std::string where = path + ": input_config";
    if (auto m = ic->find("model"); m != ic->end()) {
      if (m->is_array() && !m->empty() && (*m)[0].is_string()) {
        run.deployment.model_id = (*m)[0].get<std::string>();
      } else if (m->is_string()) {
        run.deployment.model_id = m->get<std::string>();
      }
      const std::string model = catalog_model_for(run.deployment.model_id);
      if (!model.empty()) run.deployment.set("model", model, where + ".model");
    }
    if (auto c = ic->find("concurrency"); c != ic->end() && c->is_number() && c->get<double>() > 0) {
      run.max_concurrency = json_value_as<int64_t>(*c, path + ": input_config.concurrency");
    }
    if (auto r = ic->find("request_rate"); r != ic->end() && r->is_number()) {
      run.request_rate = r->get<double>();
      // perf_analyzer's --request-distribution defaults to constant.
      run.arrival_process = "constant";
      if (auto d = ic->find("request_distribution"); d != ic->end() && d->is_string() &&
                                                     d->get<std::string>() == "poisson") {
        run.arrival_process = "poisson";
      }
    }
    if (auto n = ic->find("request_count"); n != ic->end() && n->is_number()) {
      run.num_prompts = json_value_as<int64_t>(*n, path + ": input_config num_prompts");
    }
  }
  if (run.num_prompts <= 0) {
    run.num_prompts = 100;
    run.notes.push_back("the number of requests is not in the file; replayed 100");
  }
  run.notes.push_back("no per-request data: replayed with the mean input and output lengths");
  return {run};
}

std::vector<MeasuredRun> read_llmservingsim(const std::string& path) {
  fs::path example(path);
  if (example.filename() == "requests.jsonl") {
    example = example.parent_path().parent_path();
  } else if (fs::is_regular_file(example / "requests.jsonl")) {
    example = example.parent_path();
  }
  const fs::path requests_path = example / "vllm" / "requests.jsonl";
  const std::string where = requests_path.string();
  if (!fs::is_regular_file(requests_path)) throw ConfigError(where + ": no such file");

  MeasuredRun run;
  run.path = requests_path.string();
  run.id = run.path;
  run.format = "llmservingsim";
  const std::vector<std::string> lines = read_lines(requests_path);
  std::vector<double> arrivals;
  for (size_t li = 0; li < lines.size(); ++li) {
    if (trim(lines[li]).empty()) continue;
    const std::string at = where + ":" + std::to_string(li + 1);
    const json j = parse_python_json(lines[li], at);
    for (const char* key : {"input_toks", "output_toks", "arrival_time", "queued_ts",
                            "first_token_ts", "last_token_ts"}) {
      if (!j.contains(key) || !j[key].is_number()) {
        throw ConfigError(at + ": missing required field '" + key + "'");
      }
    }
    MeasuredRequest r;
    r.input_tokens = require_field<int32_t>(j, "input_toks", at);
    r.output_tokens = require_field<int32_t>(j, "output_toks", at);
    const double queued = j["queued_ts"].get<double>();
    const double first = j["first_token_ts"].get<double>();
    const double last = j["last_token_ts"].get<double>();
    // The engine's clock only (arrival_time is another clock): realdata README.
    r.ttft_s = first - queued;
    r.e2e_s = last - queued;
    if (r.output_tokens > 1) r.tpot_s = (last - first) / (r.output_tokens - 1);
    r.failed = r.output_tokens <= 0;
    arrivals.push_back(j["arrival_time"].get<double>());
    run.requests.push_back(r);
  }
  if (run.requests.empty()) throw ConfigError(where + ": no requests");
  const double a0 = *std::min_element(arrivals.begin(), arrivals.end());
  for (size_t i = 0; i < arrivals.size(); ++i) run.requests[i].start_s = arrivals[i] - a0;
  run.has_start_times = true;
  run.num_prompts = static_cast<int64_t>(run.requests.size());
  const double span = *std::max_element(arrivals.begin(), arrivals.end()) - a0;
  if (span > 0) run.request_rate = double(run.requests.size() - 1) / span;
  run.notes.push_back("send times: arrival_time deltas; latencies from the engine's *_ts (TTFT = "
                      "first_token_ts - queued_ts)");

  const fs::path meta_path = example / "vllm" / "meta.json";
  if (fs::is_regular_file(meta_path)) {
    const std::string mw = meta_path.string();
    const json meta = read_json_file(meta_path);
    if (auto v = meta.find("vllm_version"); v != meta.end() && v->is_string()) {
      run.deployment.engine_version = v->get<std::string>();
      run.deployment.source["engine_version"] = mw;
    }
    if (auto v = meta.find("model"); v != meta.end() && v->is_string()) {
      run.deployment.model_id = v->get<std::string>();
      const std::string model = catalog_model_for(run.deployment.model_id);
      if (!model.empty()) run.deployment.set("model", model, mw + " (model)");
    }
    if (auto ek = meta.find("engine_kwargs"); ek != meta.end() && ek->is_object()) {
      for (const char* key : {"tensor_parallel_size", "max_num_seqs", "max_num_batched_tokens",
                              "max_model_len"}) {
        if (auto v = ek->find(key); v != ek->end() && v->is_number_integer()) {
          run.deployment.set(key, *v, mw + " (engine_kwargs)");
        }
      }
      if (auto v = ek->find("kv_cache_dtype"); v != ek->end() && v->is_string()) {
        run.deployment.set("kv_cache_dtype", *v, mw + " (engine_kwargs)");
      }
    }
    // The server's resolved scheduler config says whether async scheduling was on (vLLM 0.19:
    // resolved_config.scheduler_config.async_scheduling = true, its default).
    if (auto rc = meta.find("resolved_config"); rc != meta.end() && rc->is_object()) {
      if (auto sc = rc->find("scheduler_config"); sc != rc->end() && sc->is_object()) {
        if (auto v = sc->find("async_scheduling"); v != sc->end() && v->is_boolean()) {
          run.deployment.set("async_scheduling", *v,
                             mw + " (resolved_config.scheduler_config.async_scheduling)");
        }
      }
    }
    if (auto kv = meta.find("kv_cache"); kv != meta.end() && kv->is_object()) {
      if (auto v = kv->find("num_gpu_blocks"); v != kv->end() && v->is_number_integer()) {
        run.deployment.set("num_gpu_blocks_override", *v, mw + " (kv_cache.num_gpu_blocks)");
      }
      if (auto v = kv->find("block_size"); v != kv->end() && v->is_number_integer()) {
        run.deployment.set("block_size", *v, mw + " (kv_cache)");
      }
      if (auto v = kv->find("gpu_memory_utilization"); v != kv->end() && v->is_number()) {
        run.deployment.set("gpu_memory_utilization", *v, mw + " (kv_cache)");
      }
      if (auto v = kv->find("enable_prefix_caching"); v != kv->end() && v->is_boolean()) {
        run.deployment.set("enable_prefix_caching", *v, mw + " (kv_cache)");
      }
    }
    if (auto hw = meta.find("hardware"); hw != meta.end() && hw->is_object()) {
      if (auto v = hw->find("device_name"); v != hw->end() && v->is_string()) {
        run.deployment.hardware = v->get<std::string>();
        const std::string gpu = catalog_gpu_for(run.deployment.hardware);
        if (!gpu.empty()) run.deployment.set("gpu", gpu, mw + " (hardware.device_name)");
      }
    }
  }
  // LLMServingSim's own cluster config names the hardware when meta.json does not.
  const fs::path config_path = example / "config.json";
  if (!run.deployment.config.contains("gpu") && fs::is_regular_file(config_path)) {
    const json c = read_json_file(config_path);
    const json* inst = nullptr;
    if (c.contains("nodes") && c["nodes"].is_array() && !c["nodes"].empty() &&
        c["nodes"][0].contains("instances") && c["nodes"][0]["instances"].is_array() &&
        !c["nodes"][0]["instances"].empty()) {
      inst = &c["nodes"][0]["instances"][0];
    }
    if (inst != nullptr && inst->contains("hardware") && (*inst)["hardware"].is_string()) {
      run.deployment.hardware = (*inst)["hardware"].get<std::string>();
      const std::string gpu = catalog_gpu_for(run.deployment.hardware);
      if (!gpu.empty()) run.deployment.set("gpu", gpu, config_path.string() + " (hardware)");
    }
  }
  // Published summary: the vLLM column of validation/summary.txt.
  const fs::path summary_path = example / "validation" / "summary.txt";
  if (fs::is_regular_file(summary_path)) {
    const std::map<std::string, std::string> kMetric = {
        {"TTFT", "ttft"}, {"TPOT", "tpot"}, {"Latency", "e2el"}, {"ITL", "itl"}};
    const std::map<std::string, std::string> kStat = {
        {"Mean", "mean"}, {"Median", "median"}, {"P90", "p90"}, {"P95", "p95"}, {"P99", "p99"}};
    const std::vector<std::string> lines2 = read_lines(summary_path);
    for (size_t li = 0; li < lines2.size(); ++li) {
      std::stringstream in(lines2[li]);
      std::string metric, stat, value;
      if (!(in >> metric >> stat >> value)) continue;
      auto m = kMetric.find(metric);
      auto s = kStat.find(stat);
      if (m == kMetric.end() || s == kStat.end()) continue;
      run.metrics[metric_key(s->second, m->second)] = to_double(
          value, summary_path.string() + ":" + std::to_string(li + 1) + ": vLLM column");
    }
  }
  fill_metrics_from_requests(run);
  return {run};
}

std::vector<MeasuredRun> read_guidellm_csv(const std::string& path) {
  const std::vector<std::string> lines = read_lines(path);
  if (lines.empty()) throw ConfigError(path + ": empty file");
  const size_t width = split_csv_line(lines[0]).size();
  const std::map<std::string, size_t> col =
      csv_columns(lines[0], path, {"bench_idx", "strategy", "target_rate", "status",
                                   "request_start_time", "prompt_tokens", "output_tokens",
                                   "ttft_ms", "itl_ms", "request_latency_s"});
  struct Bench {
    std::string strategy;
    double target_rate = kUnknown;
    std::vector<MeasuredRequest> requests;
    std::vector<double> starts;
  };
  std::map<int64_t, Bench> benches;
  for (size_t li = 1; li < lines.size(); ++li) {
    if (trim(lines[li]).empty()) continue;
    const std::string at = path + ":" + std::to_string(li + 1);
    std::vector<std::string> cells = split_csv_line(lines[li]);
    if (cells.size() < width) cells.resize(width);
    auto cell = [&](const char* key) { return cells[col.at(key)]; };
    const int64_t idx =
        token_count(to_double(cell("bench_idx"), at + ": bench_idx"), at + ": bench_idx");
    Bench& b = benches[idx];
    b.strategy = cell("strategy");
    if (!cell("target_rate").empty()) b.target_rate = to_double(cell("target_rate"), at);
    MeasuredRequest r;
    r.failed = cell("status") != "successful";
    r.input_tokens = token_count(to_double(cell("prompt_tokens"), at), at + ": prompt_tokens");
    const double start = to_double(cell("request_start_time"), at + ": request_start_time");
    if (!r.failed) {
      r.output_tokens = token_count(to_double(cell("output_tokens"), at), at + ": output_tokens");
      r.ttft_s = to_double(cell("ttft_ms"), at + ": ttft_ms") * 1e-3;
      r.e2e_s = to_double(cell("request_latency_s"), at + ": request_latency_s");
      // guidellm's per-request itl_ms = (latency − TTFT)/(output − 1): vLLM's TPOT.
      if (r.output_tokens > 1) r.tpot_s = to_double(cell("itl_ms"), at + ": itl_ms") * 1e-3;
    }
    b.requests.push_back(r);
    b.starts.push_back(start);
  }
  if (benches.empty()) throw ConfigError(path + ": no rows");

  // Deployment and workload files beside the CSV (inference-sim's ground-truth layout).
  const fs::path folder = fs::path(path).parent_path();
  MeasuredDeployment dep;
  std::vector<std::string> notes;
  const fs::path exp = folder / "exp-config.yaml";
  if (fs::is_regular_file(exp)) {
    const auto y = flat_yaml(exp);
    const std::string w = exp.string();
    if (auto it = y.find("model"); it != y.end()) {
      dep.model_id = it->second;
      const std::string model = catalog_model_for(dep.model_id);
      if (!model.empty()) dep.set("model", model, w);
    }
    const std::pair<const char*, const char*> kKeys[] = {
        {"tensor_parallelism", "tensor_parallel_size"},
        {"max_model_len", "max_model_len"},
        {"max_num_batched_tokens", "max_num_batched_tokens"},
        {"max_num_seqs", "max_num_seqs"}};
    for (const auto& [from, to] : kKeys) {
      if (auto it = y.find(from); it != y.end()) {
        dep.set(to,
                whole_number(to_double(it->second, w + ": " + from), 0,
                             std::numeric_limits<int32_t>::max(), w + ": " + from),
                w);
      }
    }
  }
  int32_t prefix_tokens = 0;
  const fs::path profile = folder / "profile.yaml";
  if (fs::is_regular_file(profile)) {
    const auto y = flat_yaml(profile);
    if (auto it = y.find("prefix_tokens"); it != y.end()) {
      prefix_tokens = token_count(to_double(it->second, profile.string() + ": prefix_tokens"),
                                  profile.string() + ": prefix_tokens");
    }
  }
  const fs::path log = folder / "vllm.log";
  if (fs::is_regular_file(log)) {
    static const std::regex kVersion(R"(vLLM API server version ([0-9][^\s]*))");
    static const std::regex kKvTokens(R"(GPU KV cache size: ([0-9,]+) tokens)");
    for (const std::string& line : read_lines(log)) {
      std::smatch m;
      if (dep.engine_version.empty() && std::regex_search(line, m, kVersion)) {
        dep.engine_version = m[1];
        dep.source["engine_version"] = log.string();
      }
      if (std::regex_search(line, m, kKvTokens)) {
        std::string digits = m[1];
        digits.erase(std::remove(digits.begin(), digits.end(), ','), digits.end());
        const int64_t tokens = std::stoll(digits);
        const int64_t block = 16;  // vLLM's CUDA default; the log's KV size is blocks × 16
        if (tokens % block == 0) {
          dep.set("num_gpu_blocks_override", tokens / block,
                  log.string() + " (GPU KV cache size: " + m[1].str() + " tokens)");
        }
      }
    }
  }

  std::vector<MeasuredRun> runs;
  for (auto& [idx, b] : benches) {
    MeasuredRun run;
    run.id = join_index(path, idx);
    run.path = path;
    run.format = "guidellm";
    run.deployment = dep;
    run.shared_prefix_tokens = prefix_tokens;
    const double t0 = *std::min_element(b.starts.begin(), b.starts.end());
    for (size_t i = 0; i < b.requests.size(); ++i) {
      MeasuredRequest r = b.requests[i];
      r.start_s = b.starts[i] - t0;
      if (r.failed) continue;  // rejected at once (≈12 ms); not replayed, not measured
      run.requests.push_back(r);
    }
    const size_t failed = b.requests.size() - run.requests.size();
    if (failed > 0) {
      run.notes.push_back(std::to_string(failed) + " errored request(s) left out");
    }
    std::stable_sort(run.requests.begin(), run.requests.end(),
                     [](const MeasuredRequest& a, const MeasuredRequest& c) { return a.start_s < c.start_s; });
    run.num_prompts = static_cast<int64_t>(run.requests.size());
    if (b.strategy == "synchronous") {
      // One request at a time: the next is sent when the previous finishes.
      run.label = "synchronous";
      run.max_concurrency = 1;
      run.request_rate = kInf;
      run.has_start_times = false;
    } else if (b.strategy == "throughput") {
      run.label = "throughput";
      run.request_rate = kInf;
      run.has_start_times = true;
    } else if (b.strategy == "constant") {
      std::ostringstream os;
      os.precision(3);
      os << "constant " << b.target_rate << " req/s";
      run.label = os.str();
      run.request_rate = b.target_rate;
      run.arrival_process = "constant";
      run.has_start_times = true;
    } else {
      run.label = b.strategy;
      run.has_start_times = true;
    }
    // Pooled ITL mean = Σ per-request mean gap × (output − 1) / Σ (output − 1), exactly.
    double gaps = 0, weight = 0;
    for (const MeasuredRequest& r : run.requests) {
      if (r.output_tokens > 1 && !std::isnan(r.tpot_s)) {
        gaps += r.tpot_s * (r.output_tokens - 1);
        weight += r.output_tokens - 1;
      }
    }
    if (weight > 0) run.metrics["mean_itl_ms"] = gaps / weight * 1e3;
    // Request starts are known for every benchmark; fill_metrics_from_requests uses them for
    // the achieved throughput.
    fill_metrics_from_requests(run);
    runs.push_back(std::move(run));
  }
  for (MeasuredRun& run : runs) {
    if (prefix_tokens > 0) {
      run.notes.push_back("every prompt starts with the same " + std::to_string(prefix_tokens) +
                          "-token prefix (profile.yaml)");
    }
  }
  return runs;
}

std::vector<MeasuredRun> read_inferencex_csv(const std::string& path) {
  const std::vector<std::string> lines = read_lines(path);
  if (lines.empty()) throw ConfigError(path + ": empty file");
  const std::map<std::string, size_t> col =
      csv_columns(lines[0], path, {"model", "gpu", "precision", "framework", "tp", "isl_osl_label",
                                   "source_run_date", "concurrency", "mean_tpot_us", "mean_ttft_us"});
  // "1k" = 1024, "8k" = 8192 (the data set's README).
  auto tokens_of = [&](const std::string& label, const std::string& at) -> int32_t {
    if (label == "1k") return 1024;
    if (label == "8k") return 8192;
    throw ConfigError(at + ": isl_osl_label part '" + label + "' is not 1k or 8k");
  };
  std::vector<MeasuredRun> runs;
  for (size_t li = 1; li < lines.size(); ++li) {
    if (trim(lines[li]).empty()) continue;
    const std::string at = path + ":" + std::to_string(li + 1);
    const std::vector<std::string> cells = csv_row(lines[li], col, at);
    auto cell = [&](const char* key) { return cells[col.at(key)]; };
    if (cell("framework") != "vllm") {
      throw ConfigError(at + ": framework '" + cell("framework") + "'; expected vllm");
    }
    const std::string label = cell("isl_osl_label");
    const auto k = label.find('k');
    if (k == std::string::npos || k + 1 >= label.size()) {
      throw ConfigError(at + ": isl_osl_label '" + label + "'; expected e.g. 1k8k");
    }
    const int32_t isl = tokens_of(label.substr(0, k + 1), at);
    const int32_t osl = tokens_of(label.substr(k + 1), at);
    // 10 x concurrency requests are replayed: concurrency is bounded so that they fit in memory
    // (replay_requests' guard would refuse them only after this loop had drawn them).
    const int64_t conc = whole_number(to_double(cell("concurrency"), at + ": concurrency"), 1,
                                      std::numeric_limits<int32_t>::max() / 10,
                                      at + ": concurrency");
    check_fits_in_memory(at + ": concurrency", 10 * conc, "requests", 1024);
    const int64_t tp = whole_number(to_double(cell("tp"), at + ": tp"), 1,
                                    std::numeric_limits<int32_t>::max(), at + ": tp");

    MeasuredRun run;
    run.id = join_index(path, static_cast<int64_t>(li));
    run.path = path;
    run.format = "inferencex";
    const std::string precision = cell("precision");
    const std::string model_id = cell("model");
    run.label = model_id + " " + precision + " " + cell("gpu") + " TP" + cell("tp") + " " + label +
                " conc " + cell("concurrency");
    MeasuredDeployment& dep = run.deployment;
    dep.model_id = model_id;
    dep.hardware = cell("gpu");
    // The file records no vLLM version; runs of one month used one recipe revision, so the month
    // of the nightly stands for the version (grouping, calibration domains), never a release.
    const std::string month = cell("source_run_date").substr(0, 7);
    dep.engine_version = "nightly-" + month;
    dep.source["engine_version"] = at + " (source_run_date: the version itself is not recorded)";
    // The behaviour the nightly is simulated with: the release line it was built from. v0.11.0 was
    // tagged on 2025-10-02 and v0.11.1 in mid-November 2025, so October 2025 nightlies are the
    // 0.11 line; a later nightly gets the newest line servesim models (it is at least that new).
    // An earlier month is left to the sidecar (or the default version).
    if (month >= "2025-10") {
      const std::string line =
          month == "2025-10" ? std::string("0.11") : sim::vllm_version_table().back().version;
      dep.set("vllm_version", line,
              at + " (source_run_date " + month + " -> the vLLM " + line + " release line)");
    }
    // The catalog holds the FP8 checkpoint of Llama under its own name (its config.json differs by
    // the quantization_config); other models under their base name.
    std::string model = catalog_model_for(model_id);
    if (precision == "fp8" && !model.empty()) {
      const std::string fp8 = catalog_model_for(model + "-fp8");
      if (!fp8.empty()) model = fp8;
    }
    if (!model.empty()) dep.set("model", model, at + " (model)");
    const std::string gpu = cell("gpu") == "h100" ? "h100-sxm" : cell("gpu") == "h200" ? "h200" : "";
    if (!gpu.empty()) dep.set("gpu", gpu, at + " (gpu)");
    dep.set("tensor_parallel_size", tp, at + " (tp)");
    // FP8 weights; "fp4" is gpt-oss's own checkpoint format, MXFP4 experts (its config.json
    // quantization_config, models/catalog/gpt-oss-120b.json), which vLLM detects by itself.
    if (precision == "fp8") dep.set("quantization", "fp8", at + " (precision)");
    if (precision == "fp4") dep.set("quantization", "mxfp4", at + " (precision: MXFP4 checkpoint)");
    // The recipe's "≈ --max-num-seqs = CONC" and max-model-len (README): the client never has
    // more than CONC requests outstanding, so a larger value would not change the schedule.
    dep.set("max_num_seqs", conc, path + " README (max-num-seqs = CONC)");
    dep.set("max_model_len", static_cast<int64_t>(isl) + osl, path + " README (ISL + OSL)");

    // Load: benchmark_serving.py --request-rate inf --max-concurrency CONC, 10×CONC prompts,
    // --ignore-eos, lengths uniform on [int(0.8·L), L] (the older client's range rule). The file
    // has no per-request data: the lengths are drawn here from a fixed stream (seed 0), so every
    // read gives the same requests.
    run.request_rate = kInf;
    run.max_concurrency = conc;
    run.num_prompts = 10 * conc;
    run.has_start_times = false;
    RngStream rng(0, "inferencex-lengths:" + label + ":" + cell("concurrency"));
    const int32_t in_lo = static_cast<int32_t>(0.8 * isl), out_lo = static_cast<int32_t>(0.8 * osl);
    for (int64_t i = 0; i < run.num_prompts; ++i) {
      MeasuredRequest r;
      r.input_tokens = static_cast<int32_t>(rng.uniform_int(in_lo, isl));
      r.output_tokens = static_cast<int32_t>(rng.uniform_int(out_lo, osl));
      run.requests.push_back(r);
    }
    run.metrics["mean_tpot_ms"] = to_double(cell("mean_tpot_us"), at + ": mean_tpot_us") * 1e-3;
    run.metrics["mean_ttft_ms"] = to_double(cell("mean_ttft_us"), at + ": mean_ttft_us") * 1e-3;
    run.notes.push_back("summary only (mean TPOT and TTFT); request lengths drawn from the client's "
                        "rule [int(0.8 L), L], L = " + std::to_string(isl) + " in / " +
                        std::to_string(osl) + " out; vLLM version not recorded: 'nightly-" +
                        cell("source_run_date").substr(0, 7) + "' is the run's month");
    runs.push_back(std::move(run));
  }
  if (runs.empty()) throw ConfigError(path + ": no rows");
  return runs;
}

namespace {

// The models of the Argonne tables that servesim's catalog holds (models/catalog), and what a
// run of them needs beyond the catalog entry. Llama 3 (8B, 70B) has Llama 3.1's shape with an
// 8,192-token context (3.1's original_max_position_embeddings); Qwen2-7B and Qwen2-72B have the
// shapes of Qwen2.5-7B and -72B (hidden, intermediate, layers, heads, KV heads, vocab).
struct ArgonneModel {
  const char* id;           // the file's Model column
  const char* catalog;      // servesim model
  int64_t max_model_len;    // 0 = the catalog's
  const char* why;
};
constexpr ArgonneModel kArgonneModels[] = {
    {"meta-llama/Llama-2-7b-hf", "llama-2-7b", 0, ""},
    {"meta-llama/Llama-2-70b-hf", "llama-2-70b", 0, ""},
    {"meta-llama/Meta-Llama-3-8B", "llama-3.1-8b", 8192,
     "Llama 3 8B: Llama 3.1 8B's shape, 8,192-token context"},
    {"meta-llama/Meta-Llama-3-70B", "llama-3.1-70b", 8192,
     "Llama 3 70B: Llama 3.1 70B's shape, 8,192-token context"},
    {"mistralai/Mistral-7B-v0.1", "mistral-7b", 0, ""},
    {"mistralai/Mixtral-8x7B-v0.1", "mixtral-8x7b", 0, ""},
    {"Qwen/Qwen2-7B", "qwen2.5-7b", 0, "Qwen2-7B: Qwen2.5-7B's shape"},
    {"Qwen/Qwen2-72B", "qwen2.5-72b", 0, "Qwen2-72B: Qwen2.5-72B's shape"},
};

}  // namespace

std::vector<MeasuredRun> read_argonne_csv(const std::string& path) {
  const std::vector<std::string> lines = read_lines(path);
  if (lines.empty()) throw ConfigError(path + ": empty file");
  const std::map<std::string, size_t> col =
      csv_columns(lines[0], path, {"Hardware", "Num of Hardware", "Framework", "Model",
                                   "Input Output Length", "Batch Size", "Latency"});
  // The GPUs and the vLLM each was benchmarked with (the upstream repository's vLLM/<gpu>/
  // scripts, data/realdata/README.md): A100 on ALCF Polaris (4 × A100-SXM4-40GB per node), its
  // requirements pinning a vLLM 0.6.1+ stack; H100 on the JLSE testbed with a script importing
  // vllm.inputs.PromptInputs (vLLM 0.5.1 to 0.6.1). Both are simulated with servesim's oldest
  // release row, 0.6 (V0 engine).
  struct Gpu {
    const char* hardware;
    const char* catalog;
    const char* why;
  };
  static constexpr Gpu kGpus[] = {
      {"Nvidia A100 GPU", "a100-40gb",
       "ALCF Polaris (PBS script, /lus/grand): A100-SXM4-40GB; vLLM 0.6.x by its requirements"},
      {"Nvidia H100 GPU", "h100-sxm",
       "JLSE H100 (variant not recorded; SXM: a 7.8 ms batch-1 Llama-3-8B decode step needs "
       "1.9 TB/s, beyond an H100 PCIe); vLLM 0.5.1-0.6.1 by its script's imports"},
  };
  std::vector<MeasuredRun> runs;
  for (size_t li = 1; li < lines.size(); ++li) {
    if (trim(lines[li]).empty()) continue;
    const std::string at = path + ":" + std::to_string(li + 1);
    const std::vector<std::string> cells = csv_row(lines[li], col, at);
    auto cell = [&](const char* key) { return trim(cells[col.at(key)]); };
    // Only vLLM on the NVIDIA GPUs and models servesim has: the other frameworks, vendors and
    // models of the table are not what it simulates.
    if (cell("Framework") != "vLLM") continue;
    const Gpu* gpu = nullptr;
    for (const Gpu& g : kGpus) {
      if (cell("Hardware") == g.hardware) gpu = &g;
    }
    const ArgonneModel* model = nullptr;
    for (const ArgonneModel& m : kArgonneModels) {
      if (cell("Model") == m.id) model = &m;
    }
    if (gpu == nullptr || model == nullptr) continue;
    const int64_t tp = whole_number(to_double(cell("Num of Hardware"), at + ": Num of Hardware"), 1,
                                    std::numeric_limits<int32_t>::max(), at + ": Num of Hardware");
    const int32_t length =
        token_count(to_double(cell("Input Output Length"), at + ": Input Output Length"),
                    at + ": Input Output Length");
    const int64_t batch = whole_number(to_double(cell("Batch Size"), at + ": Batch Size"), 1,
                                       std::numeric_limits<int32_t>::max(), at + ": Batch Size");
    check_fits_in_memory(at + ": Batch Size", batch, "requests", 1024);
    const double latency_s = to_double(cell("Latency"), at + ": Latency");
    if (length < 1 || !(latency_s > 0)) {
      throw ConfigError(at + ": Input Output Length " + std::to_string(length) + ", Latency " +
                        cell("Latency") + "; expected positive values");
    }

    MeasuredRun run;
    run.id = join_index(path, static_cast<int64_t>(li));
    run.path = path;
    run.format = "argonne";
    run.label = "static batch " + std::to_string(batch) + " x " + std::to_string(length) + "/" +
                std::to_string(length);
    MeasuredDeployment& dep = run.deployment;
    dep.model_id = cell("Model");
    dep.hardware = gpu->hardware;
    dep.engine_version = "0.6";
    dep.source["engine_version"] = at + " (" + gpu->why + ")";
    dep.set("vllm_version", "0.6", at + " (" + gpu->why + ")");
    dep.set("gpu", gpu->catalog, at + " (" + gpu->why + ")");
    dep.set("model", model->catalog,
            at + (*model->why ? " (" + std::string(model->why) + ")" : std::string(" (Model)")));
    if (model->max_model_len > 0) {
      dep.set("max_model_len", model->max_model_len, at + " (" + model->why + ")");
    }
    dep.set("tensor_parallel_size", tp, at + " (Num of Hardware)");

    // vLLM's benchmark_latency.py / benchmark_throughput.py as the repository ran them: one
    // LLM.generate of `batch` random prompts of `length` tokens, ignore_eos, max_tokens =
    // `length`, timed from the call to its return. No API server and no HTTP client.
    run.offline = true;
    run.request_rate = kInf;
    run.num_prompts = batch;
    for (int64_t i = 0; i < batch; ++i) {
      MeasuredRequest r;
      r.input_tokens = length;
      r.output_tokens = length;
      run.requests.push_back(r);
    }
    // The call returns when the last request finishes: its latency is the batch's last E2E,
    // and completed / duration is batch / latency (vLLM's request_throughput).
    run.metrics["p100_e2el_ms"] = latency_s * 1e3;
    run.metrics["request_throughput"] = static_cast<double>(batch) / latency_s;
    run.notes.push_back("static batch (offline LLM.generate): the measured latency is the last "
                        "request's E2E; no per-request data");
    runs.push_back(std::move(run));
  }
  return runs;
}

std::vector<MeasuredRun> read_runs(const std::string& path) {
  const std::string format = detect_format(path);
  if (format == "vllm-bench") return read_vllm_bench_json(path);
  if (format == "sglang-bench") return read_sglang_jsonl(path);
  if (format == "genai-perf") return read_genai_perf_json(path);
  if (format == "llmservingsim") return read_llmservingsim(path);
  if (format == "inferencex") return read_inferencex_csv(path);
  if (format == "argonne") return read_argonne_csv(path);
  return read_guidellm_csv(path);
}

}  // namespace servesim::measured
