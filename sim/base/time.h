// Simulated time: a signed 64-bit count of nanoseconds (584 years of range).
//
// Integer time gives a total, platform-independent order of events; cost models compute in
// double seconds and convert exactly once, through from_seconds_ceil (see STYLE.md rule 4).
#ifndef SERVESIM_SIM_BASE_TIME_H_
#define SERVESIM_SIM_BASE_TIME_H_

#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>
#include <string>

#include "sim/base/error.h"

namespace servesim {

class SimTime {
 public:
  constexpr SimTime() = default;
  static constexpr SimTime from_ns(int64_t ns) { return SimTime(ns); }
  // Rounds up so that a positive duration never becomes zero (a step always takes time).
  // Checked: NaN or a value beyond ±kMaxSeconds (the cast would be undefined, and a GPU JSON with
  // bf16_flops 1e-300 once gave 1 ns steps that way) throws ConfigError, since such a duration
  // can only come from input numbers far outside any real model, GPU or trace.
  static SimTime from_seconds_ceil(double s) {
    if (!(s >= -kMaxSeconds && s <= kMaxSeconds)) {
      throw ConfigError("a duration of " + std::to_string(s) +
                        " s does not fit the simulator's clock (expected at most " +
                        std::to_string(static_cast<int64_t>(kMaxSeconds)) +
                        " s, about 146 years); a model, GPU, calibration or trace number is out "
                        "of range");
    }
    return SimTime(static_cast<int64_t>(std::ceil(s * 1e9 - 1e-6)));
  }
  // 2^62 ns: half the int64 range, so that a sum of two durations cannot overflow either.
  static constexpr double kMaxSeconds = 4611686018.427387904;
  static constexpr SimTime zero() { return SimTime(0); }
  static constexpr SimTime max() { return SimTime(std::numeric_limits<int64_t>::max()); }

  constexpr int64_t ns() const { return ns_; }
  constexpr double seconds() const { return static_cast<double>(ns_) * 1e-9; }
  constexpr double ms() const { return static_cast<double>(ns_) * 1e-6; }

  constexpr SimTime operator+(SimTime o) const { return SimTime(ns_ + o.ns_); }
  constexpr SimTime operator-(SimTime o) const { return SimTime(ns_ - o.ns_); }
  constexpr SimTime& operator+=(SimTime o) {
    ns_ += o.ns_;
    return *this;
  }
  constexpr auto operator<=>(const SimTime&) const = default;

 private:
  constexpr explicit SimTime(int64_t ns) : ns_(ns) {}
  int64_t ns_ = 0;
};

}  // namespace servesim

#endif  // SERVESIM_SIM_BASE_TIME_H_
