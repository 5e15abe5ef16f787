#include "sim/replica/kv_cache_manager.h"

#include "sim/base/error.h"

namespace servesim::sim {

KvCacheManager::KvCacheManager(int64_t num_blocks, int block_size, bool enable_prefix_caching)
    : num_blocks_(num_blocks),
      block_size_(block_size),
      prefix_caching_(enable_prefix_caching),
      num_free_(0),
      blocks_(num_blocks) {
  SERVESIM_CHECK(num_blocks > 0 && num_blocks < (1ll << 31), "block count out of range");
  for (int32_t b = 0; b < num_blocks; ++b) push_free_tail(b);
}

void KvCacheManager::push_free_tail(int32_t b) {
  blocks_[b].prev = tail_;
  blocks_[b].next = -1;
  if (tail_ >= 0) {
    blocks_[tail_].next = b;
  } else {
    head_ = b;
  }
  tail_ = b;
  ++num_free_;
}

void KvCacheManager::unlink_free(int32_t b) {
  Block& blk = blocks_[b];
  if (blk.prev >= 0) {
    blocks_[blk.prev].next = blk.next;
  } else {
    head_ = blk.next;
  }
  if (blk.next >= 0) {
    blocks_[blk.next].prev = blk.prev;
  } else {
    tail_ = blk.prev;
  }
  blk.prev = blk.next = -1;
  --num_free_;
}

int32_t KvCacheManager::pop_free_head() {
  SERVESIM_CHECK(head_ >= 0, "KV cache over-allocated");
  const int32_t b = head_;
  unlink_free(b);
  // Evict whatever the block cached (vLLM BlockPool._maybe_evict_cached_block).
  if (blocks_[b].key != kNoKey) {
    ++evicted_blocks_;
    if ((blocks_[b].key >> 62) == 0) {
      auto it = shared_.find(blocks_[b].key);
      if (it != shared_.end() && it->second == b) shared_.erase(it);
    }
    blocks_[b].key = kNoKey;
  }
  return b;
}

int64_t KvCacheManager::find_cached(int64_t request_id, int64_t group, int64_t shared_blocks,
                                    const std::vector<int32_t>& previous, int64_t max_blocks,
                                    std::vector<int32_t>& hits,
                                    const uint64_t* chain_keys) const {
  hits.clear();
  if (!prefix_caching_) return 0;
  for (int64_t i = 0; i < max_blocks; ++i) {
    if (i < shared_blocks) {
      auto it = shared_.find(chain_keys != nullptr ? chain_keys[i] : shared_key(group, i));
      if (it == shared_.end()) break;
      hits.push_back(it->second);
    } else {
      if (i >= static_cast<int64_t>(previous.size())) break;
      const int32_t b = previous[i];
      if (blocks_[b].key != unique_key(request_id, i)) break;
      hits.push_back(b);
    }
  }
  return static_cast<int64_t>(hits.size());
}

int64_t KvCacheManager::blocks_needed(int64_t new_blocks, const std::vector<int32_t>& hits) const {
  int64_t evictable = 0;
  for (int32_t b : hits) evictable += (blocks_[b].ref == 0);
  return new_blocks + evictable;
}

void KvCacheManager::take_hits(const std::vector<int32_t>& hits, std::vector<int32_t>& table) {
  for (int32_t b : hits) {
    if (blocks_[b].ref == 0) unlink_free(b);
    ++blocks_[b].ref;
    table.push_back(b);
  }
}

void KvCacheManager::allocate(int64_t n, std::vector<int32_t>& table) {
  SERVESIM_CHECK(n <= num_free_, "allocate beyond free blocks");
  for (int64_t i = 0; i < n; ++i) {
    const int32_t b = pop_free_head();
    blocks_[b].ref = 1;
    table.push_back(b);
  }
}

void KvCacheManager::register_shared(int64_t group, const std::vector<int32_t>& table,
                                     int64_t first, int64_t last, const uint64_t* chain_keys) {
  if (!prefix_caching_) return;
  for (int64_t i = first; i < last; ++i) {
    const int32_t b = table[i];
    const uint64_t k = chain_keys != nullptr ? chain_keys[i] : shared_key(group, i);
    if (blocks_[b].key == k) continue;
    // Another copy may already be cached (two requests computed the same prefix at once); like
    // vLLM, the first one stays the map's entry and this block stays a private duplicate.
    if (shared_.emplace(k, b).second) blocks_[b].key = k;
  }
}

void KvCacheManager::free(int64_t request_id, const std::vector<int32_t>& table,
                          int64_t full_blocks) {
  // Reverse order: the tail of a request is evicted before its head (vLLM free_blocks reversed).
  for (int64_t i = static_cast<int64_t>(table.size()) - 1; i >= 0; --i) {
    const int32_t b = table[i];
    SERVESIM_CHECK(blocks_[b].ref > 0, "double free of a KV block");
    if (prefix_caching_ && i < full_blocks && blocks_[b].key == kNoKey) {
      blocks_[b].key = unique_key(request_id, i);
    }
    if (--blocks_[b].ref == 0) push_free_tail(b);
  }
}

}  // namespace servesim::sim
