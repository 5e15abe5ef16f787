// IndexList: the two ends of a doubly linked list threaded through the elements of a
// std::vector by index. Each element has `int32_t prev, next` (-1: none). The KV tiers keep their
// LRU queues this way (KvCacheManager's free queue, KvOffloadTier's held keys): the nodes live in
// one vector, so a step allocates nothing, and a node leaves the middle of the queue in O(1).
#ifndef SERVESIM_SIM_REPLICA_INDEX_LIST_H_
#define SERVESIM_SIM_REPLICA_INDEX_LIST_H_

#include <cstdint>
#include <vector>

namespace servesim::sim {

struct IndexList {
  int32_t head = -1;  // the least recent end
  int32_t tail = -1;  // the most recent end

  // Links nodes[i] at the tail. REQUIRES: nodes[i] is not linked.
  template <class Node>
  void push_back(std::vector<Node>& nodes, int32_t i) {
    Node& n = nodes[i];
    n.prev = tail;
    n.next = -1;
    if (tail >= 0) {
      nodes[tail].next = i;
    } else {
      head = i;
    }
    tail = i;
  }

  // Unlinks nodes[i], leaving its prev and next at -1. REQUIRES: nodes[i] is linked.
  template <class Node>
  void unlink(std::vector<Node>& nodes, int32_t i) {
    Node& n = nodes[i];
    if (n.prev >= 0) {
      nodes[n.prev].next = n.next;
    } else {
      head = n.next;
    }
    if (n.next >= 0) {
      nodes[n.next].prev = n.prev;
    } else {
      tail = n.prev;
    }
    n.prev = n.next = -1;
  }
};

}  // namespace servesim::sim

#endif  // SERVESIM_SIM_REPLICA_INDEX_LIST_H_
