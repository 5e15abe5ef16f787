#include "sim/measured/reader_helpers.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <regex>
#include <sstream>

#include "sim/base/error.h"
#include "sim/base/input_files.h"
#include "sim/base/json_file.h"
#include "sim/base/line_reader.h"
#include "sim/base/number_text.h"

namespace servesim::measured::detail {

namespace {

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

}  // namespace

std::string read_text(const fs::path& path) {
  check_input_file(path.string(), "", kMaxDataFileBytes);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path.string() + ": cannot open file");
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

std::vector<std::string> read_lines(const fs::path& path) {
  check_input_file(path.string(), "", kMaxDataFileBytes);
  // The project's line reader (sim/base/line_reader.h): the same line ends, byte-order marks and
  // messages as the dataset and trace readers.
  LineReader reader(path.string(), "");
  std::vector<std::string> lines;
  std::string line;
  while (reader.next(line)) lines.push_back(line);
  return lines;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\"'");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\"'");
  return s.substr(b, e - b + 1);
}

double to_double(const std::string& text, const std::string& where) {
  const std::optional<double> v = parse_finite_double(text);
  if (!v) throw ConfigError(where + ": '" + text + "' is not a finite number");
  return *v;
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
    r.failed = r.output_tokens <= 0 || (errors != nullptr && (*errors)[i].is_string() &&
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

void read_mean_lengths(const json& j, MeasuredRun& run, const std::string& where) {
  const double completed = optional_field<double>(j, "completed", where, 0);
  if (completed > 0) {
    run.mean_input_tokens = optional_field<double>(j, "total_input_tokens", where, 0) / completed;
    run.mean_output_tokens = optional_field<double>(j, "total_output_tokens", where, 0) / completed;
  }
}

std::vector<std::string> split_csv_line(const std::string& line) { return split_csv(line); }

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

std::string join_index(const std::string& path, int64_t n) {
  return path + "#" + std::to_string(n);
}

}  // namespace servesim::measured::detail
