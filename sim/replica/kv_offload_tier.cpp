#include "sim/replica/kv_offload_tier.h"

#include "sim/base/error.h"

namespace servesim::sim {

KvOffloadTier::KvOffloadTier(int64_t capacity_blocks) : capacity_(capacity_blocks) {
  SERVESIM_CHECK(capacity_blocks > 0 && capacity_blocks < (1ll << 31),
                 "offload tier capacity out of range");
}

int64_t KvOffloadTier::lookup(const uint64_t* keys, int64_t n) const {
  int64_t hits = 0;
  while (hits < n && index_.find(keys[hits]) >= 0) ++hits;
  return hits;
}

void KvOffloadTier::touch(const uint64_t* keys, int64_t n) {
  for (int64_t j = n - 1; j >= 0; --j) {
    const int32_t i = index_.find(keys[j]);
    if (i < 0 || i == lru_.tail) continue;
    lru_.unlink(nodes_, i);
    lru_.push_back(nodes_, i);
  }
}

int64_t KvOffloadTier::store(const uint64_t* keys, int64_t n) {
  fresh_.clear();
  for (int64_t j = 0; j < n; ++j) {
    if (index_.find(keys[j]) < 0) fresh_.push_back(keys[j]);
  }
  const auto add = static_cast<int64_t>(fresh_.size());
  if (add == 0) return 0;
  if (add > capacity_) return -1;  // vLLM: "we could not evict enough blocks"
  for (int64_t over = size() + add - capacity_; over > 0; --over) {
    const int32_t i = lru_.head;
    lru_.unlink(nodes_, i);
    index_.erase(nodes_[i].key);
    free_.push_back(i);
    ++evicted_;
  }
  for (uint64_t k : fresh_) {
    int32_t i;
    if (!free_.empty()) {
      i = free_.back();
      free_.pop_back();
    } else {
      i = static_cast<int32_t>(nodes_.size());
      nodes_.emplace_back();
    }
    nodes_[i].key = k;
    lru_.push_back(nodes_, i);
    index_.insert(k, i);
  }
  return add;
}

std::vector<uint64_t> KvOffloadTier::lru_order() const {
  std::vector<uint64_t> out;
  for (int32_t i = lru_.head; i >= 0; i = nodes_[i].next) out.push_back(nodes_[i].key);
  return out;
}

}  // namespace servesim::sim
