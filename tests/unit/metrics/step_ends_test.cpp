// StepEnds and AppendLog: every value read back is exactly the one appended, across the layouts
// they switch between (32-bit offsets / full times per block; the first chunk / fixed chunks).
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "sim/base/append_log.h"
#include "sim/metrics/step_ends.h"

namespace servesim::metrics {
namespace {

// Both ways of reading (operator[] and for_each) give back exactly what was appended.
void require_same(const StepEnds& log, const std::vector<int64_t>& want) {
  REQUIRE(log.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (log[i].ns() != want[i]) FAIL("step " << i << ": " << log[i].ns() << " != " << want[i]);
  }
  std::size_t next = 0;
  log.for_each([&](std::size_t i, SimTime t) {
    if (i != next || t.ns() != want[i]) FAIL("for_each at " << next << ": step " << i);
    ++next;
  });
  CHECK(next == want.size());
}

TEST_CASE("step ends: a block's offsets hold up to 2^32 - 1 ns, one more turns the block wide") {
  constexpr int64_t kMax = 4294967295;  // 2^32 − 1
  const int64_t base = 1'000'000'007;
  for (const int64_t last : {kMax, kMax + 1}) {
    StepEnds log;
    std::vector<int64_t> want;
    // Block 0: its steps but the last close together, the last at base + last.
    for (std::size_t i = 0; i + 1 < StepEnds::kBlock; ++i) want.push_back(base + int64_t(i) * 1000);
    want.push_back(base + last);
    // Block 1 starts again from a fresh base and stays compact.
    for (int64_t i = 0; i < 300; ++i) want.push_back(base + last + 1 + i * 7);
    for (int64_t t : want) log.push_back(SimTime::from_ns(t));
    require_same(log, want);
    CHECK(log.front().ns() == base);
    CHECK(log.back().ns() == want.back());
  }
}

TEST_CASE("step ends: idle gaps and equal times, wide blocks between compact ones") {
  StepEnds log;
  std::vector<int64_t> want;
  int64_t t = 0;
  for (int i = 0; i < 5000; ++i) {
    // Mostly 7 ms steps; every 301st step follows a 10-minute idle gap; some steps repeat a time.
    t += (i % 301 == 300) ? 600'000'000'000 : (i % 17 == 0 ? 0 : 7'000'000);
    want.push_back(t);
    log.push_back(SimTime::from_ns(t));
  }
  require_same(log, want);
  const StepEnds copy = log;  // copies read the same
  require_same(copy, want);
  StepEnds moved = std::move(log);
  require_same(moved, want);
}

TEST_CASE("step ends: negative times read back too") {
  StepEnds log;
  std::vector<int64_t> want;
  for (int64_t i = -40; i < 40; ++i) want.push_back(i * 3);
  for (int64_t t : want) log.push_back(SimTime::from_ns(t));
  require_same(log, want);
}

TEST_CASE("step ends: an initializer list, and an empty log") {
  StepEnds empty;
  CHECK(empty.empty());
  CHECK(empty.size() == 0);
  StepEnds log = {SimTime::from_ns(5), SimTime::from_ns(9), SimTime::from_ns(9)};
  require_same(log, {5, 9, 9});
}

TEST_CASE("append log: values cross from the growing first chunk into fixed chunks unchanged") {
  AppendLog<uint32_t> log;
  const std::size_t n = 2 * AppendLog<uint32_t>::kChunk + 12345;  // two chunk boundaries
  for (std::size_t i = 0; i < n; ++i) log.push_back(static_cast<uint32_t>(i * 2654435761u));
  REQUIRE(log.size() == n);
  for (std::size_t i :
       {std::size_t{0}, std::size_t{4095}, std::size_t{4096}, AppendLog<uint32_t>::kChunk - 1,
        AppendLog<uint32_t>::kChunk, 2 * AppendLog<uint32_t>::kChunk, n - 1}) {
    CHECK(log[i] == static_cast<uint32_t>(i * 2654435761u));
  }
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < n; ++i)
    mismatches += log[i] != static_cast<uint32_t>(i * 2654435761u);
  CHECK(mismatches == 0);
  std::size_t seen = 0;
  std::size_t span_mismatches = 0;
  log.for_each_span([&](const uint32_t* p, std::size_t m) {
    for (std::size_t j = 0; j < m; ++j, ++seen) {
      span_mismatches += p[j] != static_cast<uint32_t>(seen * 2654435761u);
    }
  });
  CHECK(seen == n);
  CHECK(span_mismatches == 0);
  AppendLog<uint32_t> copy = log;
  CHECK(copy.size() == n);
  CHECK(copy[n - 1] == log[n - 1]);
  CHECK(copy.back() == log.back());
}

TEST_CASE("step ends: discard_before frees whole chunks before a step, the rest reads the same") {
  constexpr std::size_t kChunk = AppendLog<uint32_t>::kChunk;
  StepEnds log;
  const std::size_t n = 3 * kChunk + 100;
  auto end_of = [](std::size_t i) { return SimTime::from_ns(static_cast<int64_t>(i) * 7'000'000); };
  for (std::size_t i = 0; i < kChunk / 2; ++i) log.push_back(end_of(i));
  // Inside the first chunk, still growing: nothing to free.
  CHECK(log.discard_before(kChunk / 4) == 0);
  for (std::size_t i = kChunk / 2; i < n; ++i) log.push_back(end_of(i));
  // Chunks 0 and 1 lie wholly before step 2·kChunk + 5; chunk 2 holds it.
  CHECK(log.discard_before(2 * kChunk + 5) == 2 * kChunk);
  CHECK(log.discarded() == 2 * kChunk);
  CHECK(log.discard_before(kChunk) == 2 * kChunk);  // never un-frees
  // The chunk being written is never freed, even when the step asked for lies past it.
  CHECK(log.discard_before(10 * kChunk) == 3 * kChunk);
  CHECK(log.size() == n);
  std::size_t mismatches = 0;
  for (std::size_t i = 3 * kChunk; i < n; ++i) mismatches += log[i] != end_of(i);
  CHECK(mismatches == 0);
  log.push_back(end_of(n));  // appending goes on
  CHECK(log[n] == end_of(n));
  CHECK(log.back() == end_of(n));
}

}  // namespace
}  // namespace servesim::metrics
