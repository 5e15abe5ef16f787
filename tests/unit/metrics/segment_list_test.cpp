#include "sim/metrics/segment_list.h"

#include <catch2/catch.hpp>

#include <utility>
#include <vector>

#include "sim/metrics/request_record.h"

namespace servesim::metrics {
namespace {

std::vector<TokenSegment> as_vector(const SegmentList& l) { return {l.begin(), l.end()}; }

bool same(const std::vector<TokenSegment>& a, const std::vector<TokenSegment>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].first_step != b[i].first_step || a[i].last_step != b[i].last_step) return false;
  }
  return true;
}

TEST_CASE("SegmentList behaves like a vector of segments, inline or on the heap", "[metrics]") {
  std::vector<TokenSegment> expected;
  SegmentList l;
  REQUIRE(l.empty());
  for (int64_t i = 0; i < 9; ++i) {  // 1 inline, then heap capacities 2, 4, 8, 16
    l.push_back(TokenSegment{10 * i, 10 * i + 3});
    expected.push_back(TokenSegment{10 * i, 10 * i + 3});
    REQUIRE(l.size() == expected.size());
    REQUIRE(same(as_vector(l), expected));
    REQUIRE(l.front().first_step == 0);
    REQUIRE(l.back().last_step == 10 * i + 3);
    SegmentList copy(l);
    REQUIRE(same(as_vector(copy), expected));
    SegmentList moved(std::move(copy));
    REQUIRE(same(as_vector(moved), expected));
    REQUIRE(copy.empty());  // NOLINT(bugprone-use-after-move): a moved-from list is empty
    SegmentList assigned;
    assigned.push_back(TokenSegment{1, 1});
    assigned.push_back(TokenSegment{2, 2});
    assigned = l;
    REQUIRE(same(as_vector(assigned), expected));
    assigned = std::move(moved);
    REQUIRE(same(as_vector(assigned), expected));
  }
  l = std::vector<TokenSegment>{{5, 6}};
  REQUIRE(l.size() == 1);
  REQUIRE(l[0].tokens() == 2);
  l.clear();
  REQUIRE(l.empty());
}

TEST_CASE("a request record keeps one segment without an allocation of its own", "[metrics]") {
  // The segment list is 24 bytes: one inline segment (16) plus size and capacity.
  STATIC_REQUIRE(sizeof(SegmentList) == 24);
  RequestRecord r;
  r.segments.push_back(TokenSegment{3, 7});
  REQUIRE(r.segments[0].tokens() == 5);
  const RequestRecord copy = r;
  REQUIRE(copy.segments.size() == 1);
}

}  // namespace
}  // namespace servesim::metrics
