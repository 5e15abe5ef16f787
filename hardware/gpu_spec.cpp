// GpuSpec loading and validation. File format: the GpuSpec fields by name (snake_case), with
// scale_up (and the optional host_link) as an object {kind, bandwidth_bytes_per_s, latency_s} and
// sources as an object field -> note. Keys starting with '_' are comments; any other unknown key is
// an error (typos in a hand-written GPU file must not be silently ignored).
#include "hardware/gpu_spec.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "sim/base/error.h"
#include "sim/base/json_file.h"
#include "sim/base/number_format.h"

namespace servesim::hardware {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path catalog_dir() { return data_dir() / "hardware" / "catalog"; }

void reject_unknown_keys(const json& j, const std::set<std::string>& known,
                         const std::string& where) {
  for (const auto& [key, value] : j.items()) {
    if (!key.empty() && key[0] == '_') continue;
    if (known.count(key) == 0) throw ConfigError(where + ": unknown field '" + key + "'");
  }
}

// Reads a finite number and checks lo < v (or lo <= v when lo_inclusive) and v <= hi.
double read_number(const json& j, const std::string& key, const std::string& where, bool required,
                   double fallback, double lo, bool lo_inclusive, double hi = INFINITY) {
  const double v = required ? require_field<double>(j, key, where)
                            : optional_field<double>(j, key, where, fallback);
  const bool ok = std::isfinite(v) && (lo_inclusive ? v >= lo : v > lo) && v <= hi;
  if (!ok) {
    std::string range = (lo_inclusive ? ">= " : "> ") + short_number(lo);
    if (std::isfinite(hi))
      range = "in " + std::string(lo_inclusive ? "[" : "(") + short_number(lo) + ", " +
              short_number(hi) + "]";
    throw ConfigError(where + ": field '" + key + "' must be a finite number " + range +
                      " (value " + short_number(v) + ")");
  }
  return v;
}

// Plausible ranges. Far outside them a step time overflows the simulator's int64 nanosecond clock
// or rounds to 1 ns (bf16_flops 1e-300 gave TTFT 1 ns): a unit slip, not a GPU. Every GPU made
// so far sits well inside (e.g. 1e9 FLOP/s is a CPU core; 1e18 is 1000x a B200).
constexpr double kMinMemory = 1e8, kMaxMemory = 1e14;  // bytes
constexpr double kMinRate = 1e9, kMaxRate = 1e18;      // FLOP/s, bytes/s
constexpr double kMinLinkRate = 1e6;                   // bytes/s (1 MB/s)
constexpr double kMaxOverhead = 1.0;                   // seconds per step or per sequence
constexpr double kMinEfficiency = 1e-3;                // of peak

LinkSpec parse_link(const json& link, const std::string& link_where) {
  if (!link.is_object()) throw ConfigError(link_where + ": expected an object");
  reject_unknown_keys(link, {"kind", "bandwidth_bytes_per_s", "latency_s"}, link_where);
  LinkSpec l;
  l.kind = require_field<std::string>(link, "kind", link_where);
  if (l.kind.empty()) throw ConfigError(link_where + ": field 'kind' must not be empty");
  l.bandwidth_bytes_per_s =
      read_number(link, "bandwidth_bytes_per_s", link_where, true, 0, kMinLinkRate, true, kMaxRate);
  l.latency_s = read_number(link, "latency_s", link_where, true, 0, 0, true, kMaxOverhead);
  return l;
}

GpuSpec parse_gpu(const json& j, const std::string& default_name, const std::string& where) {
  if (!j.is_object()) throw ConfigError(where + ": expected a JSON object");
  reject_unknown_keys(
      j,
      {"name", "display_name", "architecture", "memory_bytes", "hbm_bandwidth_bytes_per_s",
       "bf16_flops", "fp8_flops", "scale_up", "compute_efficiency", "memory_efficiency",
       "step_overhead_s", "per_seq_overhead_s", "non_torch_memory_bytes", "price_per_hour_usd",
       "host_link", "sources"},
      where);
  GpuSpec g;
  g.name = optional_field<std::string>(j, "name", where, default_name);
  if (g.name.empty()) throw ConfigError(where + ": field 'name' must not be empty");
  g.display_name = optional_field<std::string>(j, "display_name", where, g.name);
  g.architecture = optional_field<std::string>(j, "architecture", where, "");
  g.memory_bytes = read_number(j, "memory_bytes", where, true, 0, kMinMemory, true, kMaxMemory);
  g.hbm_bandwidth_bytes_per_s =
      read_number(j, "hbm_bandwidth_bytes_per_s", where, true, 0, kMinRate, true, kMaxRate);
  g.bf16_flops = read_number(j, "bf16_flops", where, true, 0, kMinRate, true, kMaxRate);
  g.fp8_flops = read_number(j, "fp8_flops", where, false, 0, 0, true, kMaxRate);
  if (g.fp8_flops > 0 && g.fp8_flops < kMinRate) {
    throw ConfigError(where + ": field 'fp8_flops' must be 0 (none) or in [1e+09, 1e+18] (value " +
                      short_number(g.fp8_flops) + ")");
  }

  g.scale_up = parse_link(require_field<json>(j, "scale_up", where), where + ": scale_up");
  if (j.contains("host_link")) g.host_link = parse_link(j["host_link"], where + ": host_link");

  g.compute_efficiency =
      read_number(j, "compute_efficiency", where, false, 1.0, kMinEfficiency, true, 1.0);
  g.memory_efficiency =
      read_number(j, "memory_efficiency", where, false, 1.0, kMinEfficiency, true, 1.0);
  g.step_overhead_s = read_number(j, "step_overhead_s", where, false, 0, 0, true, kMaxOverhead);
  g.per_seq_overhead_s =
      read_number(j, "per_seq_overhead_s", where, false, 0, 0, true, kMaxOverhead);
  g.non_torch_memory_bytes =
      read_number(j, "non_torch_memory_bytes", where, false, 0, 0, true, g.memory_bytes);
  g.price_per_hour_usd = read_number(j, "price_per_hour_usd", where, false, 0, 0, true);
  g.sources = optional_field<json>(j, "sources", where, json::object());
  if (!g.sources.is_object()) throw ConfigError(where + ": field 'sources' must be an object");
  return g;
}

}  // namespace

GpuSpec load_gpu(const std::string& name_or_path) {
  if (looks_like_path(name_or_path)) {
    return parse_gpu(read_json_file(name_or_path), fs::path(name_or_path).stem().string(),
                     name_or_path);
  }
  const fs::path file = catalog_dir() / (name_or_path + ".json");
  if (fs::is_regular_file(file)) {
    return parse_gpu(read_json_file(file), name_or_path, file.string());
  }
  // "H100-SXM" is h100-sxm; "h100" is a family of several entries, which one is not guessed.
  auto lower = [](std::string t) {
    std::transform(t.begin(), t.end(), t.begin(),
                   [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
    return t;
  };
  const std::string key = lower(name_or_path);
  std::vector<std::string> family;
  for (const std::string& name : gpu_catalog_names()) {
    if (name == key) return load_gpu(name);
    if (name.rfind(key + "-", 0) == 0) family.push_back(name);
  }
  if (!family.empty()) {
    throw ConfigError("unknown GPU '" + name_or_path + "'; the catalog has " + join_names(family) +
                      ": pass one of them (servesim list gpus)");
  }
  throw ConfigError("unknown GPU '" + name_or_path + "'; known: " +
                    join_names(gpu_catalog_names()) + " (or give a path to a GPU JSON file)");
}

std::vector<std::string> gpu_catalog_names() { return catalog_names_in(catalog_dir()); }

}  // namespace servesim::hardware
