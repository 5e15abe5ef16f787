#include "sim/replica/latency_spikes.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "sim/base/error.h"

namespace servesim::sim {
namespace {

std::string window_text(const LatencySpikes::Window& w) {
  std::ostringstream os;
  os << w.from.seconds() << "-" << w.to.seconds() << ":x" << w.factor;
  return os.str();
}

}  // namespace

LatencySpikes::LatencySpikes(std::vector<Window> windows) : windows_(std::move(windows)) {
  std::sort(windows_.begin(), windows_.end(),
            [](const Window& a, const Window& b) { return a.from < b.from; });
  for (size_t i = 0; i < windows_.size(); ++i) {
    const Window& w = windows_[i];
    if (!(w.from < w.to)) {
      throw ConfigError("--latency-spike: " + window_text(w) +
                        " is invalid; expected T1 < T2 (an empty window changes nothing)");
    }
    if (!(w.factor > 0 && w.factor <= 1000)) {
      throw ConfigError("--latency-spike: " + window_text(w) +
                        " is invalid; expected a factor in (0, 1000]");
    }
    if (i > 0 && w.from < windows_[i - 1].to) {
      throw ConfigError("--latency-spike: " + window_text(windows_[i - 1]) + " and " +
                        window_text(w) +
                        " overlap; expected disjoint windows (give one window its product)");
    }
  }
}

SimTime LatencySpikes::apply(SimTime start, SimTime duration) const {
  // The last window that begins at or before `start`.
  auto it = std::upper_bound(windows_.begin(), windows_.end(), start,
                             [](SimTime t, const Window& w) { return t < w.from; });
  if (it == windows_.begin()) return duration;
  --it;
  if (!(start < it->to)) return duration;
  return SimTime::from_ns(
      static_cast<int64_t>(std::ceil(static_cast<double>(duration.ns()) * it->factor)));
}

}  // namespace servesim::sim
