#include "workloads/workload_classes.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <limits>
#include <set>
#include <utility>

#include "sim/base/error.h"
#include "sim/base/json_file.h"
#include "workloads/request_spec.h"
#include "workloads/trace_reader.h"

namespace servesim::workloads {
namespace {

using nlohmann::json;

// Errors name the file, the JSON path, the value and what was expected.
class Where {
 public:
  Where(std::string file, std::string path) : file_(std::move(file)), path_(std::move(path)) {}
  Where operator/(const std::string& key) const {
    return Where(file_, path_.empty() ? key : path_ + "." + key);
  }
  Where operator[](size_t i) const { return Where(file_, path_ + "[" + std::to_string(i) + "]"); }
  [[noreturn]] void fail(const json& value, const std::string& expected) const {
    throw ConfigError(file_ + ": " + path_ + ": value " +
                      value.dump(-1, ' ', false, json::error_handler_t::replace) + "; expected " +
                      expected);
  }
  [[noreturn]] void missing(const std::string& expected) const {
    throw ConfigError(file_ + ": " + path_ + ": missing; expected " + expected);
  }
  const std::string& file() const { return file_; }
  std::string prefix() const { return file_ + ": " + path_; }

 private:
  std::string file_;
  std::string path_;
};

void reject_unknown_keys(const json& obj, const Where& at, const std::set<std::string>& known) {
  for (const auto& [key, value] : obj.items()) {
    if (!known.count(key)) {
      std::string list;
      for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
      (at / key).fail(value, "one of the keys " + list + " (unknown key)");
    }
  }
}

const json* find(const json& obj, const std::string& key) {
  auto it = obj.find(key);
  return it == obj.end() || it->is_null() ? nullptr : &*it;
}

double number(const json& obj, const std::string& key, const Where& at, double lo_exclusive,
              const std::string& expected, const double* fallback = nullptr) {
  const json* v = find(obj, key);
  if (v == nullptr) {
    if (fallback != nullptr) return *fallback;
    (at / key).missing(expected);
  }
  if (!v->is_number() || !std::isfinite(v->get<double>()) || !(v->get<double>() > lo_exclusive)) {
    (at / key).fail(*v, expected);
  }
  return v->get<double>();
}

int32_t integer(const json& obj, const std::string& key, const Where& at, int64_t lo, int64_t hi,
                const std::string& expected, const int32_t* fallback = nullptr) {
  const json* v = find(obj, key);
  if (v == nullptr) {
    if (fallback != nullptr) return *fallback;
    (at / key).missing(expected);
  }
  if (!v->is_number_integer() || v->get<int64_t>() < lo || v->get<int64_t>() > hi ||
      (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(hi))) {
    (at / key).fail(*v, expected);
  }
  return static_cast<int32_t>(v->get<int64_t>());
}

std::string text(const json& obj, const std::string& key, const Where& at,
                 const std::string& expected) {
  const json* v = find(obj, key);
  if (v == nullptr) (at / key).missing(expected);
  if (!v->is_string()) (at / key).fail(*v, expected);
  return v->get<std::string>();
}

LengthDistribution parse_length(const json& j, const Where& at) {
  if (!j.is_object()) at.fail(j, "an object with \"dist\": \"fixed\" or \"lognormal\"");
  const std::string dist = text(j, "dist", at, "\"fixed\" or \"lognormal\"");
  LengthDistribution d;
  if (dist == "fixed") {
    reject_unknown_keys(j, at, {"dist", "tokens"});
    d.kind = LengthDistribution::Kind::kFixed;
    d.tokens = integer(j, "tokens", at, 1, kMaxTokens, "an integer number of tokens >= 1");
  } else if (dist == "lognormal") {
    reject_unknown_keys(j, at, {"dist", "mean", "sigma", "min", "max"});
    d.kind = LengthDistribution::Kind::kLognormal;
    d.mean = number(j, "mean", at, 0.0, "a mean length in tokens > 0");
    const double zero = 0.0;
    d.sigma = number(j, "sigma", at, -1e-300, "the standard deviation of ln(length), >= 0", &zero);
    if (d.sigma > 10) (at / "sigma").fail(j["sigma"], "a value <= 10 (the log-scale spread)");
    const int32_t one = 1;
    const int32_t top = static_cast<int32_t>(kMaxTokens);
    d.min =
        integer(j, "min", at, 1, kMaxTokens, "an integer >= 1 (draws below it are raised)", &one);
    d.max = integer(j, "max", at, 1, kMaxTokens, "an integer >= min (draws above it are lowered)",
                    &top);
    if (d.max < d.min)
      (at / "max").fail(j["max"], "an integer >= min (" + std::to_string(d.min) + ")");
  } else {
    (at / "dist")
        .fail(j["dist"],
              "\"fixed\" or \"lognormal\" (for recorded pairs use "
              "\"lengths\": {\"dist\": \"empirical\", ...})");
  }
  return d;
}

// A relative "path" is read relative to the workload file's folder, so a file and its data can
// move together (unless it names a file from where servesim runs).
std::string resolve_length_path(const std::string& path, const std::string& workload_file) {
  if (path.empty() || !std::filesystem::path(path).is_relative()) return path;
  const auto base = std::filesystem::path(workload_file).parent_path();
  if (!std::filesystem::exists(path) && std::filesystem::exists(base / path)) {
    return (base / path).string();
  }
  return path;
}

// The (prompt, output) pairs of an empirical source.
std::vector<LengthPair> read_empirical(const json& j, const Where& at, std::string* source) {
  if (!j.is_object()) at.fail(j, "an object with \"dist\": \"empirical\"");
  reject_unknown_keys(j, at, {"dist", "source", "path", "format"});
  if (text(j, "dist", at, "\"empirical\"") != "empirical") {
    (at / "dist").fail(j["dist"], "\"empirical\" (\"lengths\" holds recorded pairs)");
  }
  const char* kSources =
      "\"lengths-csv\", \"sharegpt\", \"sharegpt-multiturn\", \"burstgpt\" or \"trace\"";
  const std::string kind = text(j, "source", at, kSources);
  std::string path;
  if (const json* p = find(j, "path")) {
    if (!p->is_string() || p->get<std::string>().empty()) (at / "path").fail(*p, "a file path");
    path = p->get<std::string>();
  }
  path = resolve_length_path(path, at.file());
  std::vector<LengthPair> pairs;
  const std::string flag = (at / "path").prefix();
  try {
    if (kind == "sharegpt-multiturn") {
      if (!path.empty()) {
        (at / "path")
            .fail(j["path"],
                  "no \"path\" (\"sharegpt-multiturn\" is the shipped "
                  "multi-turn set; use \"sharegpt\" with a path for a file)");
      }
      path = shipped_sharegpt_multiturn_path();
      pairs = read_lengths_csv(path, flag);
    } else if (kind == "sharegpt") {
      if (path.empty()) path = shipped_sharegpt_first_turn_path();
      const bool csv = path.size() >= 4 && path.compare(path.size() - 4, 4, ".csv") == 0;
      pairs = csv ? read_lengths_csv(path, flag) : read_sharegpt_json(path, 4.0);
    } else if (kind == "lengths-csv") {
      if (path.empty()) (at / "path").missing("the lengths CSV file");
      pairs = read_lengths_csv(path, flag);
    } else if (kind == "burstgpt") {
      if (path.empty()) (at / "path").missing("the BurstGPT CSV file");
      pairs = read_burstgpt_csv(path);
    } else if (kind == "trace") {
      if (path.empty()) (at / "path").missing("the trace file");
      const std::string format =
          text(j, "format", at, "a --trace-format name (azure, mooncake, ...)");
      std::unique_ptr<TraceReader> reader = open_trace(path, format);
      TraceRow row;
      while (reader->next(row)) pairs.push_back(LengthPair{row.prompt_tokens, row.output_tokens});
    } else {
      (at / "source").fail(j["source"], kSources);
    }
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    if (what.rfind(at.file() + ": ", 0) == 0) throw;  // already names the workload file
    throw ConfigError(at.prefix() + ": " + what);
  }
  if (kind != "trace" && find(j, "format") != nullptr) {
    (at / "format").fail(j["format"], "no \"format\" (only \"source\": \"trace\" takes one)");
  }
  if (pairs.empty())
    at.fail(j, "a source with at least one (prompt, output) pair; " + path + " has none");
  *source = relative_to_data_dir(path);
  return pairs;
}

bool valid_name(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
}

}  // namespace

int32_t LengthDistribution::sample(RngStream& rng) const {
  if (kind == Kind::kFixed) return tokens;
  const double mu = std::log(mean) - 0.5 * sigma * sigma;
  const double x = std::exp(mu + sigma * rng.normal());
  const double r = std::round(x);
  if (!(r >= min)) return min;  // also NaN (cannot happen for finite inputs)
  if (r >= max) return max;
  return static_cast<int32_t>(r);
}

std::vector<std::string> WorkloadClasses::names() const {
  std::vector<std::string> out;
  for (const WorkloadClass& c : classes) out.push_back(c.name);
  return out;
}

std::vector<std::string> workload_input_paths(const std::string& path) {
  std::vector<std::string> out = {path};
  const json root = read_json_file(path);
  const json* classes = root.is_object() ? find(root, "classes") : nullptr;
  if (classes == nullptr || !classes->is_array()) return out;  // the loader says what is wrong
  for (const json& c : *classes) {
    const json* lengths = c.is_object() ? find(c, "lengths") : nullptr;
    const json* p = lengths != nullptr && lengths->is_object() ? find(*lengths, "path") : nullptr;
    if (p != nullptr && p->is_string() && !p->get<std::string>().empty()) {
      out.push_back(resolve_length_path(p->get<std::string>(), path));
    }
  }
  return out;
}

WorkloadClasses load_workload_classes(const std::string& path) {
  const json root = read_json_file(path);
  const Where top(path, "");
  if (!root.is_object()) {
    throw ConfigError(path + ": expected a JSON object {\"classes\": [...]}");
  }
  reject_unknown_keys(root, Where(path, ""), {"classes"});
  const json* list = find(root, "classes");
  if (list == nullptr) throw ConfigError(path + ": classes: missing; expected a list of classes");
  const Where at(path, "classes");
  if (!list->is_array() || list->empty()) at.fail(*list, "a non-empty list of class objects");
  if (list->size() > 1000) at.fail(json(list->size()), "at most 1000 classes");
  WorkloadClasses out;
  out.path = path;
  std::set<std::string> seen;
  double total = 0;
  for (size_t i = 0; i < list->size(); ++i) {
    const json& j = (*list)[i];
    const Where c = at[i];
    if (!j.is_object()) c.fail(j, "a class object");
    reject_unknown_keys(j, c, {"name", "share", "priority", "prompt", "output", "lengths", "slo"});
    WorkloadClass k;
    k.name = text(j, "name", c, "a class name of letters, digits, '_', '-' or '.'");
    if (!valid_name(k.name)) {
      (c / "name").fail(j["name"], "a class name of 1 to 64 letters, digits, '_', '-' or '.'");
    }
    if (!seen.insert(k.name).second) (c / "name").fail(j["name"], "a name no other class has");
    k.share = number(j, "share", c, 0.0, "a fraction of the requests in (0, 1]");
    if (k.share > 1) (c / "share").fail(j["share"], "a fraction of the requests in (0, 1]");
    total += k.share;
    const int32_t zero = 0;
    k.priority = integer(
        j, "priority", c, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(),
        "an integer (lower = served first under --scheduling-policy priority)", &zero);
    const json* lengths = find(j, "lengths");
    const json* prompt = find(j, "prompt");
    const json* output = find(j, "output");
    if (lengths != nullptr) {
      if (prompt != nullptr || output != nullptr) {
        (c / "lengths")
            .fail(*lengths,
                  "either \"lengths\" (recorded pairs) or \"prompt\" and "
                  "\"output\", not both");
      }
      k.empirical = read_empirical(*lengths, c / "lengths", &k.empirical_source);
    } else {
      if (prompt == nullptr) (c / "prompt").missing("a length distribution (or \"lengths\")");
      if (output == nullptr) (c / "output").missing("a length distribution (or \"lengths\")");
      k.prompt = parse_length(*prompt, c / "prompt");
      k.output = parse_length(*output, c / "output");
    }
    if (const json* slo = find(j, "slo")) {
      if (!slo->is_array()) (c / "slo").fail(*slo, "a list of SLOs like \"p99_ttft_ms<=500\"");
      for (size_t s = 0; s < slo->size(); ++s) {
        if (!(*slo)[s].is_string()) {
          (c / "slo")[s].fail((*slo)[s], "an SLO string like \"p99_ttft_ms<=500\"");
        }
        k.slo.push_back((*slo)[s].get<std::string>());
      }
    }
    out.classes.push_back(std::move(k));
  }
  if (std::fabs(total - 1.0) > 1e-6) {
    at.fail(json(total), "shares that sum to 1 (they sum to " + std::to_string(total) + ")");
  }
  return out;
}

ClassMixDataset::ClassMixDataset(std::shared_ptr<const WorkloadClasses> classes, int64_t size,
                                 uint64_t seed)
    : classes_(std::move(classes)), size_(size), class_rng_(seed, "workload-class") {
  double sum = 0;
  for (const WorkloadClass& c : classes_->classes) {
    length_rng_.emplace_back(seed, "class/" + c.name);
    sum += c.share;
    cumulative_.push_back(sum);
  }
  cumulative_.back() = 1.0;  // shares sum to 1 within 1e-6: no request falls past the last class
}

RequestSpec ClassMixDataset::next() {
  const double u = class_rng_.uniform01();
  const auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), u);
  return next_of_class(static_cast<int32_t>(it - cumulative_.begin()));
}

RequestSpec ClassMixDataset::next_of_class(int32_t c) {
  const WorkloadClass& k = classes_->classes[static_cast<size_t>(c)];
  RngStream& rng = length_rng_[static_cast<size_t>(c)];
  RequestSpec spec;
  if (!k.empirical.empty()) {
    const LengthPair& p = k.empirical[static_cast<size_t>(
        rng.uniform_int(0, static_cast<int64_t>(k.empirical.size()) - 1))];
    spec.prompt_tokens = p.prompt;
    spec.output_tokens = p.output;
  } else {
    spec.prompt_tokens = k.prompt.sample(rng);
    spec.output_tokens = k.output.sample(rng);
  }
  spec.class_id = c;
  spec.priority = k.priority;
  return spec;
}

}  // namespace servesim::workloads
