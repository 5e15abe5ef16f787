// KeyIndex: a map from 64-bit content keys to block ids (int32 >= 0), stored flat.
//
// The prefix cache's key -> block map (KvCacheManager) takes an insert when a block is cached and
// an erase when it is evicted: on shared-prefix workloads millions of each. std::unordered_map
// allocates and frees a node for every one of them (27 % of the instructions of servesim_bench's
// gsp scenario went to malloc/free; docs/performance.md), and Debian's Boost (1.74) has no flat
// map. This one keeps the entries in one power-of-two array: open addressing with linear probing,
// at most half full, and backward-shift deletion (no tombstones, so lookups never slow down after
// many erases). Keys are mixed (splitmix64's finaliser) because the cache's own keys are
// structured (group << 24 | index), not random.
//
// It is never iterated, so its layout cannot change a result. Not thread-safe.
#ifndef SERVESIM_SIM_REPLICA_KEY_INDEX_H_
#define SERVESIM_SIM_REPLICA_KEY_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace servesim::sim {

class KeyIndex {
 public:
  // The value mapped to `key`, or -1 when there is none.
  int32_t find(uint64_t key) const {
    if (size_ == 0) return -1;
    for (size_t i = home(key);; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.value < 0) return -1;
      if (s.key == key) return s.value;
    }
  }

  // Maps `key` to `value` unless `key` is already mapped (then nothing changes); true when it
  // inserted. REQUIRES: value >= 0.
  bool insert(uint64_t key, int32_t value) {
    if (2 * (size_ + 1) > slots_.size()) grow();
    size_t i = home(key);
    for (; slots_[i].value >= 0; i = (i + 1) & mask_) {
      if (slots_[i].key == key) return false;
    }
    slots_[i] = Slot{key, value};
    ++size_;
    return true;
  }

  // Removes `key`; true when it was there.
  bool erase(uint64_t key) { return erase_if(key, -1); }

  // Removes `key` if it maps to `value` (any value when `value` < 0); true when it removed it.
  bool erase_if(uint64_t key, int32_t value) {
    if (size_ == 0) return false;
    size_t i = home(key);
    for (;; i = (i + 1) & mask_) {
      if (slots_[i].value < 0) return false;
      if (slots_[i].key == key) break;
    }
    if (value >= 0 && slots_[i].value != value) return false;
    // Backward shift: every later entry of the run whose home is not in (i, j] moves into the
    // hole, so that no probe sequence crosses an empty slot it did not end at.
    for (size_t j = i;;) {
      j = (j + 1) & mask_;
      if (slots_[j].value < 0) break;
      const size_t k = home(slots_[j].key);
      const bool stays = i <= j ? (i < k && k <= j) : (i < k || k <= j);
      if (stays) continue;
      slots_[i] = slots_[j];
      i = j;
    }
    slots_[i].value = -1;
    --size_;
    return true;
  }

  size_t size() const { return size_; }

 private:
  struct Slot {
    uint64_t key = 0;
    int32_t value = -1;  // -1: empty
  };

  size_t home(uint64_t key) const {
    key ^= key >> 30;
    key *= 0xbf58476d1ce4e5b9ull;
    key ^= key >> 27;
    key *= 0x94d049bb133111ebull;
    key ^= key >> 31;
    return static_cast<size_t>(key) & mask_;
  }

  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 16 : 2 * old.size(), Slot{});
    mask_ = slots_.size() - 1;
    size_ = 0;
    for (const Slot& s : old) {
      if (s.value >= 0) insert(s.key, s.value);
    }
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_REPLICA_KEY_INDEX_H_
