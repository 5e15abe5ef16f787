#include "workloads/trace_replay.h"

#include <cmath>
#include <string>
#include <utility>

#include "sim/base/error.h"
#include "workloads/flag_format.h"

namespace servesim::workloads {
namespace {

uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

int64_t seconds_to_ns(double s) { return std::llround(s * 1e9); }

}  // namespace

std::vector<uint64_t> prefix_chain_of(const std::vector<int64_t>& hash_ids) {
  std::vector<uint64_t> chain;
  chain.reserve(hash_ids.size());
  uint64_t h = 0x6d6f6f6e63616b65ull;  // any fixed start value
  for (int64_t id : hash_ids) {
    h = splitmix64(h ^ splitmix64(static_cast<uint64_t>(id)));
    chain.push_back(h);
  }
  return chain;
}

int64_t TraceWindow::scaled_ns(int64_t recorded_offset_ns) const {
  return scale == 1.0 ? recorded_offset_ns
                      : std::llround(static_cast<double>(recorded_offset_ns) * scale);
}

TraceWindow scan_trace_window(const TraceReplayOptions& options,
                              const std::function<void(const TraceRow&)>& keep) {
  using detail::format_flag_value;
  if (!(options.time_scale >= 0) || !std::isfinite(options.time_scale)) {
    throw ConfigError("--trace-time-scale: " + format_flag_value(options.time_scale) +
                      " is out of range; expected a factor >= 0 (2 = twice as slow, 0 = all at "
                      "t = 0)");
  }
  if (!(options.start_s >= 0) || !std::isfinite(options.start_s)) {
    throw ConfigError("--trace-start: " + format_flag_value(options.start_s) +
                      " is out of range; expected seconds >= 0");
  }
  if (!(options.duration_s >= 0) || !std::isfinite(options.duration_s)) {
    throw ConfigError("--trace-duration: " + format_flag_value(options.duration_s) +
                      " is out of range; expected seconds >= 0 (0 = to the end)");
  }
  const bool rescale = std::isfinite(options.request_rate);
  if (rescale && options.time_scale != 1.0) {
    throw ConfigError("--trace-time-scale: " + format_flag_value(options.time_scale) +
                      " cannot be combined with --request-rate " +
                      format_flag_value(options.request_rate) +
                      "; expected one of them (both set the replay speed)");
  }
  TraceWindow w;
  auto reader = open_trace(options.path, options.format);
  TraceRow row;
  bool have_origin = false;
  while (reader->next(row)) {
    if (!have_origin) {
      have_origin = true;
      w.lo_ns = row.arrival_ns + seconds_to_ns(options.start_s);
      w.hi_ns = options.duration_s > 0 ? w.lo_ns + seconds_to_ns(options.duration_s)
                                       : std::numeric_limits<int64_t>::max();
    }
    if (row.arrival_ns < w.lo_ns) continue;
    if (row.arrival_ns >= w.hi_ns) break;  // rows are in time order
    if (w.count == 0) w.first_ns = row.arrival_ns;
    w.last_ns = row.arrival_ns;
    ++w.count;
    if (keep) keep(row);
  }
  if (!have_origin) {  // not one row, before any window was applied
    throw ConfigError("--trace: " + options.path + " has no request rows" +
                      (options.format == "burstgpt"
                           ? " (burstgpt: rows of failed requests, with 0 response tokens, are "
                             "skipped)"
                           : std::string()) +
                      "; expected at least one request");
  }
  if (w.count == 0) {
    throw ConfigError("--trace: " + options.path + " has no request in the window [" +
                      format_flag_value(options.start_s) + " s, " +
                      (options.duration_s > 0
                           ? format_flag_value(options.start_s + options.duration_s) + " s)"
                           : std::string("end)")) +
                      "; expected at least one (check --trace-start and --trace-duration)");
  }
  if (rescale) {
    if (w.count < 2 || w.last_ns == w.first_ns) {
      throw ConfigError("--request-rate: " + format_flag_value(options.request_rate) +
                        " cannot rescale a trace window whose requests all arrive at one instant; "
                        "expected a window with two or more arrival times");
    }
    w.scale = static_cast<double>(w.count - 1) /
              (options.request_rate * static_cast<double>(w.last_ns - w.first_ns) * 1e-9);
  } else {
    w.scale = options.time_scale;
  }
  // Arrival times are int64 ns: the last one must stay far inside that range.
  if (static_cast<double>(w.last_ns - w.lo_ns) * w.scale > 4.0e18) {
    throw ConfigError("--trace-time-scale: " + format_flag_value(w.scale) +
                      " stretches the window beyond 100 years of simulated time; expected a "
                      "smaller factor");
  }
  return w;
}

TraceReplayWorkload::TraceReplayWorkload(const TraceReplayOptions& options)
    : options_(options), window_(scan_trace_window(options)), count_(window_.count) {
  // Pass 2 streams from the start.
  reader_ = open_trace(options.path, options.format);
  block_tokens_ = reader_->block_tokens();
}

std::optional<RequestSpec> TraceReplayWorkload::next() {
  if (served_ == count_) return std::nullopt;
  do {
    SERVESIM_CHECK(reader_->next(row_), "trace ended before the counted rows");
  } while (row_.arrival_ns < window_.lo_ns);
  RequestSpec spec;
  spec.id = served_++;
  spec.arrival = SimTime::from_ns(window_.scaled_ns(row_.arrival_ns - window_.lo_ns));
  spec.prompt_tokens = row_.prompt_tokens;
  spec.output_tokens = row_.output_tokens;
  if (!row_.hash_ids.empty()) {
    spec.prefix_chain =
        std::make_shared<const std::vector<uint64_t>>(prefix_chain_of(row_.hash_ids));
    spec.chain_block_tokens = block_tokens_;
  }
  if (!row_.lora_adapter.empty()) {
    // Adapter ids stay within the replica's 20 bits for them (workloads/lora_workload.h).
    if (adapters_.size() >= (1u << 20) - 1 && adapters_.count(row_.lora_adapter) == 0) {
      throw ConfigError("--trace: " + options_.path + " names more than " +
                        std::to_string((1 << 20) - 1) +
                        " LoRA adapters in its lora_adapter column; expected fewer");
    }
    auto [it, added] = adapters_.emplace(row_.lora_adapter, static_cast<int32_t>(adapters_.size()));
    (void)added;
    spec.lora_adapter = it->second;
  }
  return spec;
}

}  // namespace servesim::workloads
