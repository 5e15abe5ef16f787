// KvOffloadTier: the CPU tier of vLLM's native KV offloading, as its scheduler side sees it — a
// fixed number of block slots in host memory, each holding one KV block by content key, evicted
// least recently used first.
//
// Follows vLLM's CPU offloading manager with its default LRU policy (vllm/v1/kv_offload/
// lru_manager.py, later cpu/manager.py with cpu/policies/lru.py; docs/deployment-modes.md,
// "KV offload"):
//   lookup(keys)   how many leading keys are held (stops at the first miss);
//   touch(keys)    the held ones become the most recently used, the first key last, so that the
//                  start of a prefix outlives its tail (vLLM iterates reversed(block_hashes));
//   store(keys)    prepare_store: keys already held are skipped; room for the others is made by
//                  evicting from the LRU end; when more new keys come than the tier holds it
//                  refuses the whole store (vLLM returns None and stores nothing), else the new
//                  keys enter at the most-recent end, in order.
// Not modelled: a block being loaded is protected from eviction in vLLM (ref_cnt); here it can
// be evicted during its load (the load itself is unaffected). Stored blocks count as held at once
// (vLLM: once the store's transfer completes).
//
// Invariants: size() <= capacity(); every key appears at most once. Not thread-safe.
#ifndef SERVESIM_SIM_REPLICA_KV_OFFLOAD_TIER_H_
#define SERVESIM_SIM_REPLICA_KV_OFFLOAD_TIER_H_

#include <cstdint>
#include <vector>

#include "sim/replica/index_list.h"
#include "sim/replica/key_index.h"

namespace servesim::sim {

class KvOffloadTier {
 public:
  // REQUIRES: 0 < capacity_blocks < 2^31.
  explicit KvOffloadTier(int64_t capacity_blocks);

  int64_t capacity() const { return capacity_; }
  int64_t size() const { return static_cast<int64_t>(index_.size()); }
  bool contains(uint64_t key) const { return index_.find(key) >= 0; }

  int64_t lookup(const uint64_t* keys, int64_t n) const;
  void touch(const uint64_t* keys, int64_t n);
  // Returns the keys newly stored (0 when all were held), or -1 when the store is refused.
  int64_t store(const uint64_t* keys, int64_t n);

  int64_t evicted_blocks() const { return evicted_; }

  // The held keys from least to most recently used (tests).
  std::vector<uint64_t> lru_order() const;

 private:
  struct Node {
    uint64_t key = 0;
    int32_t prev = -1, next = -1;
  };

  int64_t capacity_;
  std::vector<Node> nodes_;
  std::vector<int32_t> free_;
  IndexList lru_;   // head: least recently used
  KeyIndex index_;  // key -> node
  int64_t evicted_ = 0;
  std::vector<uint64_t> fresh_;  // scratch: the keys of a store not yet held
};

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_REPLICA_KV_OFFLOAD_TIER_H_
