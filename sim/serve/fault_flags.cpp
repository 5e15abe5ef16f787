#include "sim/serve/fault_flags.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "sim/base/error.h"

namespace servesim::serve {
namespace {

// Reads a finite number of seconds >= 0 at `p`, moving past it; false when there is none.
bool read_number(const char*& p, double& out) {
  if (*p == '\0' || *p == '-' || *p == '+' || *p == ' ') return false;
  char* end = nullptr;
  errno = 0;
  out = std::strtod(p, &end);
  if (end == p || errno != 0 || !std::isfinite(out) || out < 0) return false;
  p = end;
  return true;
}

bool read_literal(const char*& p, const char* lit) {
  const char* q = p;
  for (; *lit != '\0'; ++lit, ++q) {
    if (*q != *lit) return false;
  }
  p = q;
  return true;
}

// A window in seconds: "T1-T2" at p, T1 < T2.
bool read_window(const char*& p, double& from, double& to) {
  return read_number(p, from) && read_literal(p, "-") && read_number(p, to) && from < to &&
         to <= SimTime::kMaxSeconds;
}

}  // namespace

sim::ReplicaOutages::Outage parse_replica_outage(const std::string& text) {
  const char* p = text.c_str();
  char* end = nullptr;
  const long replica = std::strtol(p, &end, 10);  // NOLINT(runtime/int): strtol's type
  double from = 0;
  double to = 0;
  bool ok = end != p && *p >= '0' && *p <= '9' && replica <= 1'000'000;
  if (ok) {
    p = end;
    ok = read_literal(p, "@") && read_window(p, from, to) && *p == '\0';
  }
  if (!ok) {
    throw ConfigError("--replica-outage: \"" + text +
                      "\" is invalid; expected R@T1-T2: a replica index (0-based), then the "
                      "simulated seconds it goes down and comes back, 0 <= T1 < T2 (e.g. 1@30-90)");
  }
  return {static_cast<int32_t>(replica), SimTime::from_seconds_ceil(from),
          SimTime::from_seconds_ceil(to)};
}

sim::LatencySpikes::Window parse_latency_spike(const std::string& text) {
  const char* p = text.c_str();
  double from = 0;
  double to = 0;
  double factor = 0;
  if (!(read_window(p, from, to) && read_literal(p, ":x") && read_number(p, factor) && *p == '\0' &&
        factor > 0 && factor <= 1000)) {
    throw ConfigError("--latency-spike: \"" + text +
                      "\" is invalid; expected T1-T2:xF: simulated seconds 0 <= T1 < T2, then a "
                      "step-time factor F in (0, 1000] (e.g. 60-120:x3)");
  }
  return {SimTime::from_seconds_ceil(from), SimTime::from_seconds_ceil(to), factor};
}

}  // namespace servesim::serve
