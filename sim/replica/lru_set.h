// LruSet: a set of integer keys with a capacity, in least-recently-used order — the order of
// vLLM's LRUCache (vllm/utils, used by the LoRA managers: touch() moves a key to the most recent
// end, inserting into a full set first removes the least recent key).
#ifndef SERVESIM_SIM_REPLICA_LRU_SET_H_
#define SERVESIM_SIM_REPLICA_LRU_SET_H_

#include <cstddef>
#include <cstdint>
#include <list>
#include <unordered_map>
#include <vector>

namespace servesim::sim {

class LruSet {
 public:
  // REQUIRES: capacity >= 1.
  explicit LruSet(size_t capacity) : capacity_(capacity) {}

  bool contains(int32_t key) const { return where_.count(key) > 0; }
  size_t size() const { return order_.size(); }
  size_t capacity() const { return capacity_; }
  // Makes `key` the most recent. Returns the key removed to make room (-1 when none was).
  // REQUIRES: key >= 0.
  int32_t touch(int32_t key) {
    auto it = where_.find(key);
    if (it != where_.end()) {
      order_.splice(order_.end(), order_, it->second);
      return -1;
    }
    int32_t evicted = -1;
    if (order_.size() == capacity_) {
      evicted = order_.front();
      erase(evicted);
    }
    order_.push_back(key);
    where_[key] = std::prev(order_.end());
    return evicted;
  }
  void erase(int32_t key) {
    auto it = where_.find(key);
    if (it == where_.end()) return;
    order_.erase(it->second);
    where_.erase(it);
  }
  // The keys, least recent first.
  std::vector<int32_t> keys() const { return {order_.begin(), order_.end()}; }

 private:
  size_t capacity_;
  std::list<int32_t> order_;  // least recent first
  std::unordered_map<int32_t, std::list<int32_t>::iterator> where_;
};

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_REPLICA_LRU_SET_H_
