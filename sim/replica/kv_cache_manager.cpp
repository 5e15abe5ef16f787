#include "sim/replica/kv_cache_manager.h"

#include <algorithm>

#include "sim/base/error.h"

namespace servesim::sim {

KvCacheManager::KvCacheManager(int64_t num_blocks, int block_size, bool enable_prefix_caching)
    : num_blocks_(num_blocks),
      block_size_(block_size),
      prefix_caching_(enable_prefix_caching),
      num_free_(0) {
  SERVESIM_CHECK(num_blocks > 0 && num_blocks < (1ll << 31), "block count out of range");
  push_dead(num_blocks);  // every block starts free and empty
}

// ---------------------------------------------------------------------------------------------
// The free queue

int32_t KvCacheManager::new_node(const Node& n) {
  int32_t i;
  if (!free_nodes_.empty()) {
    i = free_nodes_.back();
    free_nodes_.pop_back();
    nodes_[i] = n;
  } else {
    i = static_cast<int32_t>(nodes_.size());
    nodes_.push_back(n);
  }
  queue_.push_back(nodes_, i);
  num_free_ += nodes_[i].size();
  return i;
}

void KvCacheManager::unlink(int32_t i) {
  queue_.unlink(nodes_, i);
  Node& n = nodes_[i];
  n.kind = Kind::kDead;
  n.a = 0;
  n.request_id = -1;
  free_nodes_.push_back(i);
}

void KvCacheManager::push_dead(int64_t n, Kind kind) {
  if (n <= 0) return;
  if (queue_.tail >= 0 && nodes_[queue_.tail].kind == kind) {
    nodes_[queue_.tail].a += static_cast<int32_t>(n);
    num_free_ += n;
    return;
  }
  Node node;
  node.kind = kind;
  node.a = static_cast<int32_t>(n);
  new_node(node);
}

int32_t KvCacheManager::new_block_id() {
  if (!free_ids_.empty()) {
    const int32_t b = free_ids_.back();
    free_ids_.pop_back();
    return b;
  }
  blocks_.emplace_back();
  return static_cast<int32_t>(blocks_.size() - 1);
}

void KvCacheManager::release_block_id(int32_t b) {
  blocks_[b] = Block{};
  free_ids_.push_back(b);
}

void KvCacheManager::evict(int32_t b) {
  // vLLM BlockPool._maybe_evict_cached_block: a reused block drops what it cached.
  Block& blk = blocks_[b];
  if (blk.key != kNoKey) {
    ++evicted_blocks_;
    shared_.erase_if(blk.key, b);  // unless a duplicate is the entry (register_shared)
    blk.key = kNoKey;
  }
  blk.node = -1;
}

void KvCacheManager::pop_head(int64_t n) {
  SERVESIM_CHECK(n <= num_free_, "KV cache over-allocated");
  num_free_ -= n;
  while (n > 0) {
    const int32_t i = queue_.head;
    Node& h = nodes_[i];
    if (h.kind == Kind::kDead || h.kind == Kind::kDeadKeyed) {
      const int64_t take = std::min<int64_t>(n, h.a);
      if (h.kind == Kind::kDeadKeyed) evicted_blocks_ += take;
      h.a -= static_cast<int32_t>(take);
      n -= take;
      if (h.a == 0) unlink(i);
    } else if (h.kind == Kind::kExtent) {
      // The extent was freed in reverse order: its highest index is the least recently freed.
      const int64_t take = std::min<int64_t>(n, int64_t{h.b} - h.a);
      evicted_blocks_ += take;  // the request's own cached blocks
      h.b -= static_cast<int32_t>(take);
      n -= take;
      if (h.b == h.a) unlink(i);
    } else {
      const int32_t b = h.a;
      unlink(i);
      evict(b);
      release_block_id(b);
      --n;
    }
  }
}

int32_t KvCacheManager::pop_identified() {
  SERVESIM_CHECK(queue_.head >= 0 && num_free_ > 0, "KV cache over-allocated");
  const Node& h = nodes_[queue_.head];
  if (h.kind == Kind::kBlock) {  // reuse the popped block's id
    const int32_t b = h.a;
    unlink(queue_.head);
    --num_free_;
    evict(b);
    return b;
  }
  pop_head(1);
  return new_block_id();
}

// ---------------------------------------------------------------------------------------------
// Requests

bool KvCacheManager::extent_valid(int64_t request_id, const KvTable& table) const {
  if (table.extent < 0) return false;
  const Node& n = nodes_[table.extent];
  return n.kind == Kind::kExtent && n.request_id == request_id;
}

int64_t KvCacheManager::find_cached(int64_t request_id, int64_t group, const KvTable& table,
                                    int64_t max_blocks, std::vector<int32_t>& shared_hits,
                                    const uint64_t* chain_keys) const {
  shared_hits.clear();
  if (!prefix_caching_ || max_blocks <= 0) return 0;
  const int64_t limit = table.shared_limit;
  for (int64_t i = 0; i < std::min(limit, max_blocks); ++i) {
    const int32_t b = shared_.find(chain_keys != nullptr ? chain_keys[i] : shared_key(group, i));
    if (b < 0) return static_cast<int64_t>(shared_hits.size());
    shared_hits.push_back(b);
  }
  if (max_blocks <= limit || !extent_valid(request_id, table)) {
    return static_cast<int64_t>(shared_hits.size());
  }
  // The request's own unique blocks [limit, hi) are still cached (lo == limit, see free()).
  const Node& e = nodes_[table.extent];
  return std::min<int64_t>(max_blocks, e.b);
}

int64_t KvCacheManager::blocks_needed(int64_t new_blocks, int64_t hits,
                                      const std::vector<int32_t>& shared_hits) const {
  int64_t evictable = hits - static_cast<int64_t>(shared_hits.size());  // own blocks: all free
  for (int32_t b : shared_hits) evictable += (blocks_[b].ref == 0);
  return new_blocks + evictable;
}

void KvCacheManager::take_hits(int64_t request_id, int64_t hits,
                               const std::vector<int32_t>& shared_hits, KvTable& table) {
  const int64_t own = hits - static_cast<int64_t>(shared_hits.size());
  if (extent_valid(request_id, table)) {
    Node& e = nodes_[table.extent];
    SERVESIM_CHECK(own <= int64_t{e.b} - e.a, "own cache hits beyond the cached extent");
    // The hit blocks [lo, lo + own) leave the queue; the rest of the extent stays where it is but
    // can never be hit again (the request's table is rebuilt from here on).
    num_free_ -= own;
    const int64_t rest = int64_t{e.b} - e.a - own;
    if (rest == 0) {
      unlink(table.extent);
    } else {
      e.kind = Kind::kDeadKeyed;  // still holds content, which nobody can hit any more
      e.a = static_cast<int32_t>(rest);
      e.b = 0;
      e.request_id = -1;
    }
  } else {
    SERVESIM_CHECK(own == 0, "own cache hits without a cached extent");
  }
  table.count = 0;
  table.ids.clear();
  table.extent = -1;
  for (int32_t b : shared_hits) {
    Block& blk = blocks_[b];
    if (blk.ref == 0) {
      unlink(blk.node);
      blk.node = -1;
      --num_free_;
    }
    ++blk.ref;
    table.ids.push_back(b);
  }
  table.count = hits;
}

void KvCacheManager::allocate(int64_t n, KvTable& table) {
  SERVESIM_CHECK(n <= num_free_, "allocate beyond free blocks");
  // Identified blocks for the part of the table inside the shared prefix, in table order.
  while (n > 0 && table.count < table.shared_limit) {
    const int32_t b = pop_identified();
    blocks_[b].ref = 1;
    table.ids.push_back(b);
    ++table.count;
    --n;
  }
  pop_head(n);
  table.count += n;
}

void KvCacheManager::register_shared(int64_t group, const KvTable& table, int64_t first,
                                     int64_t last, const uint64_t* chain_keys) {
  if (!prefix_caching_) return;
  SERVESIM_CHECK(last <= static_cast<int64_t>(table.ids.size()),
                 "registering blocks outside the shared prefix");
  for (int64_t i = first; i < last; ++i) {
    const int32_t b = table.ids[i];
    const uint64_t k = chain_keys != nullptr ? chain_keys[i] : shared_key(group, i);
    if (blocks_[b].key == k) continue;
    // Another copy may already be cached (two requests computed the same prefix at once); like
    // vLLM, the first one stays the map's entry and this block stays a private duplicate.
    if (shared_.insert(k, b)) blocks_[b].key = k;
  }
}

// The caller (Replica) never reports fewer full blocks than the hits it took at admission (cached
// blocks count as computed), so a hit block is always inside [0, full_blocks): the extent below
// covers every block that can still be hit.
void KvCacheManager::free(int64_t request_id, KvTable& table, int64_t full_blocks, bool preempted) {
  // Reverse order: the tail of a request is evicted before its head (vLLM free_blocks reversed).
  const int64_t first_anonymous = static_cast<int64_t>(table.ids.size());
  // Blocks [first_anonymous, full_end) hold content (vLLM keeps a full block's hash); the rest
  // are partial. A preempted request can hit its own; a finished one's can never be hit.
  const int64_t full_end = prefix_caching_
                               ? std::clamp<int64_t>(full_blocks, first_anonymous, table.count)
                               : first_anonymous;
  const int64_t cached_end = preempted ? full_end : first_anonymous;
  push_dead(table.count - full_end);  // partial blocks
  push_dead(full_end - cached_end, Kind::kDeadKeyed);
  table.extent = -1;
  if (cached_end > first_anonymous) {
    Node e;
    e.kind = Kind::kExtent;
    e.a = static_cast<int32_t>(first_anonymous);
    e.b = static_cast<int32_t>(cached_end);
    e.request_id = request_id;
    table.extent = new_node(e);
  }
  for (int64_t i = first_anonymous - 1; i >= 0; --i) {
    const int32_t b = table.ids[i];
    Block& blk = blocks_[b];
    SERVESIM_CHECK(blk.ref > 0, "double free of a KV block");
    if (--blk.ref > 0) continue;
    if (blk.key != kNoKey) {
      Node node;
      node.kind = Kind::kBlock;
      node.a = b;
      blk.node = new_node(node);
    } else {
      // Not in the map (never registered, or a private duplicate): nobody can hit it, but a
      // full one holds content (the per-block queue keyed it) and counts when evicted.
      release_block_id(b);
      push_dead(1, prefix_caching_ && i < full_blocks ? Kind::kDeadKeyed : Kind::kDead);
    }
  }
  table.ids.clear();
  table.count = 0;
}

}  // namespace servesim::sim
