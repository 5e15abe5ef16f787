// KvLink (sim/cluster/kv_link.h): processor sharing of a KV-transfer link, against closed forms.
// Times are exact to the nanosecond: next_drain() rounds up, so every expected end below is a
// whole number of ns and the checks allow 1 ns.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "sim/base/error.h"
#include "sim/cluster/kv_link.h"

namespace servesim::sim {
namespace {

SimTime at_s(double s) { return SimTime::from_ns(static_cast<int64_t>(s * 1e9 + 0.5)); }

// Drains the link to the end; returns (key, time its last byte left) in drain order.
std::vector<std::pair<int64_t, SimTime>> run_out(KvLink& link) {
  std::vector<std::pair<int64_t, SimTime>> out;
  while (auto t = link.next_drain()) {
    for (int64_t k : link.drain(*t)) out.emplace_back(k, *t);
  }
  return out;
}

TEST_CASE("KV link: one transfer on an idle link takes bytes / bandwidth + latency", "[kv_link]") {
  KvLink link(1e10, 19.1e-6);  // 10 GB/s, InfiniBand NDR's α
  link.start(SimTime::zero(), 7, 1e9);
  REQUIRE(link.next_drain().has_value());
  // 1e9 B / 1e10 B/s = 0.1 s of bandwidth; the latency comes after the last byte.
  CHECK(link.next_drain()->ns() == 100'000'000);
  const std::vector<int64_t> done = link.drain(*link.next_drain());
  REQUIRE(done == std::vector<int64_t>{7});
  CHECK(link.latency_s() == 19.1e-6);  // complete at 0.1 s + α at the decode side
  CHECK_FALSE(link.next_drain().has_value());
  CHECK(link.busy().ns() == 100'000'000);
}

TEST_CASE("KV link: n equal concurrent transfers each take n times as long", "[kv_link]") {
  for (int n : {1, 2, 4, 7}) {
    KvLink link(2e9, 0);
    for (int i = 0; i < n; ++i) link.start(SimTime::zero(), i, 1e8);  // 0.05 s alone
    const auto out = run_out(link);
    REQUIRE(out.size() == static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      CHECK(out[i].first == i);  // same instant: start order
      CHECK(std::abs(out[i].second.ns() - static_cast<int64_t>(n) * 50'000'000) <= 1);
    }
    CHECK(std::abs(link.busy().ns() - static_cast<int64_t>(n) * 50'000'000) <= 1);
  }
}

TEST_CASE("KV link: staggered starts re-time the transfer in flight", "[kv_link]") {
  // W = 1 GB/s. A: 1e9 B at t = 0. B: 0.25e9 B at t = 0.5 s.
  //   [0, 0.5)  A alone: 0.5e9 B served, 0.5e9 B left.
  //   [0.5, 1)  both at 0.5 GB/s: B's 0.25e9 B take 0.5 s, so B ends at 1.0 s; A gets 0.25e9 B.
  //   [1, 1.25] A alone with 0.25e9 B left: ends at 1.25 s (alone it would have ended at 1.0 s).
  KvLink link(1e9, 0);
  link.start(SimTime::zero(), 1, 1e9);
  CHECK(link.next_drain()->ns() == 1'000'000'000);
  REQUIRE(link.drain(at_s(0.5)).empty());
  link.start(at_s(0.5), 2, 0.25e9);
  const auto out = run_out(link);
  REQUIRE(out.size() == 2);
  CHECK(out[0].first == 2);
  CHECK(std::abs(out[0].second.ns() - 1'000'000'000) <= 1);
  CHECK(out[1].first == 1);
  CHECK(std::abs(out[1].second.ns() - 1'250'000'000) <= 1);
  // Busy the whole time, and the bytes are conserved: 1.25e9 B at 1 GB/s is 1.25 s.
  CHECK(std::abs(link.busy().ns() - 1'250'000'000) <= 1);
  CHECK(link.bytes_started() == 1.25e9);
  CHECK(link.transfers_started() == 2);
}

TEST_CASE("KV link: three-way sharing, and an idle gap is not busy time", "[kv_link]") {
  // W = 3e9 B/s. X: 3e9 B at 0 (alone 1 s). Y and Z: 1e9 B each at 0.5 s.
  //   [0, 0.5) X alone: 1.5e9 B served. From 0.5 s three share 1e9 B/s each: Y and Z end at
  //   1.5 s; X has 0.5e9 B left, alone at 3e9 B/s: ends at 1.5 + 1/6 s.
  KvLink link(3e9, 0);
  link.start(SimTime::zero(), 0, 3e9);
  link.start(at_s(0.5), 1, 1e9);
  link.start(at_s(0.5), 2, 1e9);
  auto out = run_out(link);
  REQUIRE(out.size() == 3);
  CHECK(out[0].first == 1);
  CHECK(out[1].first == 2);
  CHECK(std::abs(out[0].second.ns() - 1'500'000'000) <= 1);
  CHECK(std::abs(out[2].second.ns() - 1'666'666'667) <= 1);
  // Idle from 1.667 s to 10 s, then 1e9 B alone: busy adds 1/3 s.
  link.start(at_s(10), 3, 1e9);
  out = run_out(link);
  REQUIRE(out.size() == 1);
  CHECK(std::abs(out[0].second.ns() - 10'333'333'334) <= 1);
  CHECK(std::abs(link.busy().ns() - 2'000'000'000) <= 2);
}

TEST_CASE("KV link: a bad bandwidth or latency is refused", "[kv_link]") {
  CHECK_THROWS_AS(KvLink(0, 0), ConfigError);
  CHECK_THROWS_AS(KvLink(1e9, -1), ConfigError);
}

}  // namespace
}  // namespace servesim::sim
