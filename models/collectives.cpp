#include "models/collectives.h"

namespace servesim::models {

double ring_all_reduce_s(double bytes, int ranks, const hardware::LinkSpec& link) {
  if (ranks <= 1 || bytes <= 0) {
    return 0;
  }
  const double steps = 2.0 * (ranks - 1);
  return steps * link.latency_s + steps / ranks * bytes / link.bandwidth_bytes_per_s;
}

bool has_custom_all_reduce(const hardware::LinkSpec& link) {
  return link.kind == "nvlink" || link.kind == "nvswitch" || link.kind == "infinity-fabric";
}

double all_reduce_s(double bytes, int ranks, const hardware::LinkSpec& link) {
  if (ranks <= 1 || bytes <= 0) {
    return 0;
  }
  if (!has_custom_all_reduce(link)) {
    return ring_all_reduce_s(bytes, ranks, link);
  }
  // Two-shot: reduce-scatter then all-gather, every rank talking to all peers at once over the
  // switch, so the latency is two hops whatever the rank count.
  return 2.0 * link.latency_s + 2.0 * (ranks - 1) / ranks * bytes / link.bandwidth_bytes_per_s;
}

double ring_all_gather_s(double bytes, int ranks, const hardware::LinkSpec& link) {
  if (ranks <= 1 || bytes <= 0) {
    return 0;
  }
  const double steps = ranks - 1.0;
  return steps * link.latency_s + steps / ranks * bytes / link.bandwidth_bytes_per_s;
}

}  // namespace servesim::models
