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

TraceReplayWorkload::TraceReplayWorkload(const TraceReplayOptions& options) : options_(options) {
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
  // Pass 1: validate, count, span.
  auto reader = open_trace(options.path, options.format);
  TraceRow row;
  bool have_origin = false;
  while (reader->next(row)) {
    if (!have_origin) {
      have_origin = true;
      window_lo_ns_ = row.arrival_ns + seconds_to_ns(options.start_s);
      window_hi_ns_ = options.duration_s > 0 ? window_lo_ns_ + seconds_to_ns(options.duration_s)
                                             : std::numeric_limits<int64_t>::max();
    }
    if (row.arrival_ns < window_lo_ns_) continue;
    if (row.arrival_ns >= window_hi_ns_) break;  // rows are in time order
    if (count_ == 0) first_ns_ = row.arrival_ns;
    last_ns_ = row.arrival_ns;
    ++count_;
  }
  if (count_ == 0) {
    throw ConfigError("--trace: " + options.path + " has no request in the window [" +
                      format_flag_value(options.start_s) + " s, " +
                      (options.duration_s > 0 ? format_flag_value(options.start_s + options.duration_s) + " s)"
                                              : std::string("end)")) +
                      "; expected at least one (check --trace-start and --trace-duration)");
  }
  if (rescale) {
    if (count_ < 2 || last_ns_ == first_ns_) {
      throw ConfigError("--request-rate: " + format_flag_value(options.request_rate) +
                        " cannot rescale a trace window whose requests all arrive at one instant; "
                        "expected a window with two or more arrival times");
    }
    scale_ = static_cast<double>(count_ - 1) /
             (options.request_rate * static_cast<double>(last_ns_ - first_ns_) * 1e-9);
  } else {
    scale_ = options.time_scale;
  }
  // Arrival times are int64 ns: the last one must stay far inside that range.
  if (static_cast<double>(last_ns_ - window_lo_ns_) * scale_ > 4.0e18) {
    throw ConfigError("--trace-time-scale: " + format_flag_value(scale_) +
                      " stretches the window beyond 100 years of simulated time; expected a "
                      "smaller factor");
  }
  // Pass 2 streams from the start.
  reader_ = open_trace(options.path, options.format);
  block_tokens_ = reader_->block_tokens();
}

std::optional<RequestSpec> TraceReplayWorkload::next() {
  if (served_ == count_) return std::nullopt;
  do {
    SERVESIM_CHECK(reader_->next(row_), "trace ended before the counted rows");
  } while (row_.arrival_ns < window_lo_ns_);
  RequestSpec spec;
  spec.id = served_++;
  const int64_t offset = row_.arrival_ns - window_lo_ns_;
  spec.arrival = SimTime::from_ns(scale_ == 1.0 ? offset
                                                : std::llround(static_cast<double>(offset) * scale_));
  spec.prompt_tokens = row_.prompt_tokens;
  spec.output_tokens = row_.output_tokens;
  if (!row_.hash_ids.empty()) {
    spec.prefix_chain = std::make_shared<const std::vector<uint64_t>>(prefix_chain_of(row_.hash_ids));
    spec.chain_block_tokens = block_tokens_;
  }
  return spec;
}

}  // namespace servesim::workloads
