#include "sim/cluster/kv_link.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "sim/base/error.h"

namespace servesim::sim {
namespace {

// A transfer whose remaining time is at most half a nanosecond has drained: SimTime's resolution
// (next_drain() rounds up, so the floating-point V may sit a hair below the transfer's end).
constexpr double kDrainedNs = 0.5;

}  // namespace

KvLink::KvLink(double bandwidth_bytes_per_s, double latency_s)
    : bandwidth_(bandwidth_bytes_per_s), latency_s_(latency_s) {
  if (!(bandwidth_ > 0) || !std::isfinite(bandwidth_)) {
    throw ConfigError("KV transfer link: bandwidth " + std::to_string(bandwidth_) +
                      " B/s is invalid; expected a finite value > 0");
  }
  if (!(latency_s_ >= 0) || !std::isfinite(latency_s_)) {
    throw ConfigError("KV transfer link: latency " + std::to_string(latency_s_) +
                      " s is invalid; expected a finite value >= 0");
  }
}

void KvLink::advance(SimTime now) {
  SERVESIM_CHECK(now >= last_, "KV link time went backwards");
  if (!active_.empty()) {
    const double dt = (now - last_).seconds();
    v_ += dt * bandwidth_ / static_cast<double>(active_.size());
    busy_ = busy_ + (now - last_);
  }
  last_ = now;
}

void KvLink::start(SimTime now, int64_t key, double bytes) {
  SERVESIM_CHECK(bytes >= 0 && std::isfinite(bytes), "KV transfer of a bad byte count");
  advance(now);
  active_.emplace(v_ + bytes, seq_++, key);
  bytes_started_ += bytes;
  ++started_;
}

std::optional<SimTime> KvLink::next_drain() const {
  if (active_.empty()) return std::nullopt;
  const double remaining_ns =
      (std::get<0>(*active_.begin()) - v_) * static_cast<double>(active_.size()) / bandwidth_ * 1e9;
  const double ns = std::max(0.0, std::ceil(remaining_ns - 1e-3));
  return last_ + SimTime::from_ns(static_cast<int64_t>(ns));
}

std::vector<int64_t> KvLink::drain(SimTime now) {
  advance(now);
  std::vector<std::pair<int64_t, int64_t>> done;  // (start sequence, key)
  while (!active_.empty()) {
    const auto& [v_end, seq, key] = *active_.begin();
    const double remaining_ns =
        (v_end - v_) * static_cast<double>(active_.size()) / bandwidth_ * 1e9;
    if (remaining_ns > kDrainedNs) break;
    done.emplace_back(seq, key);
    active_.erase(active_.begin());
  }
  std::sort(done.begin(), done.end());
  std::vector<int64_t> keys;
  keys.reserve(done.size());
  for (const auto& d : done) keys.push_back(d.second);
  return keys;
}

}  // namespace servesim::sim
