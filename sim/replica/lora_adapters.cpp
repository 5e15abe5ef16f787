#include "sim/replica/lora_adapters.h"

#include <algorithm>

namespace servesim::sim {

LoraAdapters::LoraAdapters(const LoraConfig& config)
    : max_loras_(config.max_loras),
      storage_load_s_(config.storage_load_s),
      slot_copy_s_(config.slot_copy_s),
      gpu_(static_cast<size_t>(config.max_loras)),
      cpu_(static_cast<size_t>(config.max_cpu_loras)) {}

void LoraAdapters::add_running(int32_t adapter) {
  if (adapter < 0) return;
  if (++running_[adapter] == 1) changed_ = true;
}

void LoraAdapters::remove_running(int32_t adapter) {
  if (adapter < 0) return;
  auto it = running_.find(adapter);
  if (it == running_.end()) return;
  if (--it->second == 0) {
    running_.erase(it);
    changed_ = true;
  }
}

double LoraAdapters::prepare_step() {
  // Touching the same adapters in the same order again leaves both LRU orders as they are, so
  // only a change of the batch's adapters can load or reorder anything.
  if (!changed_) return 0.0;
  changed_ = false;
  double s = 0.0;
  for (const auto& [adapter, n] : running_) {
    (void)n;
    if (!cpu_.contains(adapter)) {
      ++stats_.storage_loads;
      s += storage_load_s_;
      const int32_t dropped = cpu_.touch(adapter);
      if (dropped >= 0) {
        ++stats_.cpu_evictions;
        gpu_.erase(dropped);  // removing a registered adapter deactivates it
      }
    } else {
      cpu_.touch(adapter);
    }
    if (!gpu_.contains(adapter)) {
      ++stats_.slot_loads;
      s += slot_copy_s_;
    }
    gpu_.touch(adapter);
  }
  stats_.load_s += s;
  return s;
}

void LoraAdapters::record_wait(int64_t wait_ns) {
  ++stats_.waited_requests;
  stats_.wait_ns += wait_ns;
  stats_.max_wait_ns = std::max(stats_.max_wait_ns, wait_ns);
}

}  // namespace servesim::sim
