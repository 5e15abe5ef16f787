#include "sim/replica/kv_cache_manager.h"

#include "sim/base/error.h"

namespace servesim::sim {

KvCacheManager::KvCacheManager(int64_t num_blocks, int block_size, bool enable_prefix_caching)
    : num_blocks_(num_blocks),
      block_size_(block_size),
      prefix_caching_(enable_prefix_caching),
      num_free_(0),
      key_(num_blocks, kNoKey),
      ref_(num_blocks, 0),
      prev_(num_blocks, -1),
      next_(num_blocks, -1) {
  SERVESIM_CHECK(num_blocks > 0 && num_blocks < (1ll << 31), "block count out of range");
  for (int32_t b = 0; b < num_blocks; ++b) push_free_tail(b);
}

void KvCacheManager::push_free_tail(int32_t b) {
  prev_[b] = tail_;
  next_[b] = -1;
  if (tail_ >= 0) {
    next_[tail_] = b;
  } else {
    head_ = b;
  }
  tail_ = b;
  ++num_free_;
}

void KvCacheManager::unlink_free(int32_t b) {
  if (prev_[b] >= 0) {
    next_[prev_[b]] = next_[b];
  } else {
    head_ = next_[b];
  }
  if (next_[b] >= 0) {
    prev_[next_[b]] = prev_[b];
  } else {
    tail_ = prev_[b];
  }
  prev_[b] = next_[b] = -1;
  --num_free_;
}

int32_t KvCacheManager::pop_free_head() {
  SERVESIM_CHECK(head_ >= 0, "KV cache over-allocated");
  const int32_t b = head_;
  unlink_free(b);
  // Evict whatever the block cached (vLLM BlockPool._maybe_evict_cached_block).
  if (key_[b] != kNoKey) {
    if ((key_[b] >> 62) == 0) {
      auto it = shared_.find(key_[b]);
      if (it != shared_.end() && it->second == b) shared_.erase(it);
    }
    key_[b] = kNoKey;
  }
  return b;
}

int64_t KvCacheManager::find_cached(int64_t request_id, int64_t group, int64_t shared_blocks,
                                    const std::vector<int32_t>& previous, int64_t max_blocks,
                                    std::vector<int32_t>& hits) const {
  hits.clear();
  if (!prefix_caching_) return 0;
  for (int64_t i = 0; i < max_blocks; ++i) {
    if (i < shared_blocks) {
      auto it = shared_.find(shared_key(group, i));
      if (it == shared_.end()) break;
      hits.push_back(it->second);
    } else {
      if (i >= static_cast<int64_t>(previous.size())) break;
      const int32_t b = previous[i];
      if (key_[b] != unique_key(request_id, i)) break;
      hits.push_back(b);
    }
  }
  return static_cast<int64_t>(hits.size());
}

int64_t KvCacheManager::blocks_needed(int64_t new_blocks, const std::vector<int32_t>& hits) const {
  int64_t evictable = 0;
  for (int32_t b : hits) evictable += (ref_[b] == 0);
  return new_blocks + evictable;
}

void KvCacheManager::take_hits(const std::vector<int32_t>& hits, std::vector<int32_t>& table) {
  for (int32_t b : hits) {
    if (ref_[b] == 0) unlink_free(b);
    ++ref_[b];
    table.push_back(b);
  }
}

void KvCacheManager::allocate(int64_t n, std::vector<int32_t>& table) {
  SERVESIM_CHECK(n <= num_free_, "allocate beyond free blocks");
  for (int64_t i = 0; i < n; ++i) {
    const int32_t b = pop_free_head();
    ref_[b] = 1;
    table.push_back(b);
  }
}

void KvCacheManager::register_shared(int64_t group, const std::vector<int32_t>& table,
                                     int64_t first, int64_t last) {
  if (!prefix_caching_) return;
  for (int64_t i = first; i < last; ++i) {
    const int32_t b = table[i];
    const uint64_t k = shared_key(group, i);
    if (key_[b] == k) continue;
    // Another copy may already be cached (two requests computed the same prefix at once); like
    // vLLM, the first one stays the map's entry and this block stays a private duplicate.
    if (shared_.emplace(k, b).second) key_[b] = k;
  }
}

void KvCacheManager::free(int64_t request_id, const std::vector<int32_t>& table,
                          int64_t full_blocks) {
  // Reverse order: the tail of a request is evicted before its head (vLLM free_blocks reversed).
  for (int64_t i = static_cast<int64_t>(table.size()) - 1; i >= 0; --i) {
    const int32_t b = table[i];
    SERVESIM_CHECK(ref_[b] > 0, "double free of a KV block");
    if (prefix_caching_ && i < full_blocks && key_[b] == kNoKey) {
      key_[b] = unique_key(request_id, i);
    }
    if (--ref_[b] == 0) push_free_tail(b);
  }
}

}  // namespace servesim::sim
