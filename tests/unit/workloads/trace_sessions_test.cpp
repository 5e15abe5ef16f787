// Sessions replayed from a trace (workloads/trace_sessions.h): session ids from a CSV column,
// sessions inferred from Mooncake hash ids (on the real conversation trace), the think-time rule
// send = max(done, sent + s·gap) to the nanosecond, and the history's prefix chain.
#include <catch2/catch.hpp>
#include "tests/test_paths.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "sim/base/error.h"
#include "workloads/trace_sessions.h"
#include "workloads/workload.h"

namespace servesim::workloads {
namespace {

const std::string kMooncakeConv =
    std::string(SERVESIM_REALDATA_DIR) + "/mooncake_traces/conversation_trace.jsonl";

struct TempFile {
  explicit TempFile(const std::string& name, const std::string& text)
      : path((std::filesystem::temp_directory_path() / name).string()) {
    std::ofstream(path, std::ios::binary) << text;
  }
  ~TempFile() { std::remove(path.c_str()); }
  std::string path;
};

TraceReplayOptions csv_options(const std::string& path) {
  TraceReplayOptions o;
  o.path = path;
  o.format = "csv";
  return o;
}

// Two sessions and a one-turn row (empty id). Session a: 200 → 460 (history 250 + 210 new) →
// 480 (trimmed: shorter than its history, 460 + 50). Session b: 100 → 130.
const char* kTrace =
    "arrival_s,prompt_tokens,output_tokens,session_id\n"
    "0.000000000,200,50,a\n"
    "0.500000000,100,20,b\n"
    "1.000000000,300,10,\n"
    "3.000000001,460,50,a\n"
    "3.250000000,130,20,b\n"
    "10.000000000,480,40,a\n";

TEST_CASE("trace sessions: session_id column, first turns at their recorded times",
          "[trace][sessions]") {
  const TempFile f("servesim_trace_sessions.csv", kTrace);
  TraceSessionWorkload w(csv_options(f.path));
  CHECK(w.size() == 6);
  CHECK(w.num_sessions() == 3);
  CHECK(w.session_of_rows() == std::vector<int32_t>{0, 1, 2, 0, 1, 0});
  // next() hands out first turns only, in recorded order, at the recorded times (scale 1).
  auto a0 = w.next(), b0 = w.next(), c0 = w.next();
  REQUIRE((a0 && b0 && c0));
  CHECK_FALSE(w.next());
  CHECK(a0->arrival == SimTime::zero());
  CHECK(b0->arrival == SimTime::from_ns(500'000'000));
  CHECK(c0->arrival == SimTime::from_ns(1'000'000'000));
  CHECK((a0->id == 0 && b0->id == 1 && c0->id == 2));
  CHECK((a0->prompt_tokens == 200 && a0->output_tokens == 50));

  // send = max(now, sent + gap). Turn a1: recorded gap 3.000000001 s. The answer came back at
  // 1 s (before sent + gap = 3.000000001 s): the recorded send time is kept, to the ns.
  auto a1 = w.on_done(0, SimTime::zero(), SimTime::from_ns(1'000'000'000));
  REQUIRE(a1);
  CHECK(a1->arrival == SimTime::from_ns(3'000'000'001));
  CHECK(a1->id == 3);
  CHECK(a1->prompt_tokens == 460);
  // Turn b1: gap 2.75 s; b0 was sent late (0.7 s, a --max-concurrency wait) and answered at
  // 4 s, after 0.7 + 2.75 = 3.45 s: think time 0, sent at the answer.
  auto b1 = w.on_done(1, SimTime::from_ns(700'000'000), SimTime::from_ns(4'000'000'000));
  REQUIRE(b1);
  CHECK(b1->arrival == SimTime::from_ns(4'000'000'000));
  // The one-turn session ends; so does b after b1.
  CHECK_FALSE(w.on_done(2, SimTime::from_ns(1'000'000'000), SimTime::from_ns(2'000'000'000)));
  CHECK_FALSE(w.on_done(b1->id, b1->arrival, SimTime::from_ns(5'000'000'000)));
  // a2: gap 6.999999999 s after a1's send at 3.000000001 s -> 10 s if answered by then.
  auto a2 = w.on_done(a1->id, SimTime::from_ns(3'000'000'001), SimTime::from_ns(3'500'000'000));
  REQUIRE(a2);
  CHECK(a2->arrival == SimTime::from_ns(10'000'000'000));
  CHECK_FALSE(w.on_done(a2->id, a2->arrival, SimTime::from_ns(11'000'000'000)));

  // Prefix chains (16-token blocks over prompt + answer): a1 keeps a0's whole chain (history
  // min(460, 200 + 50) = 250 tokens: the 15 full blocks a0 has), then new keys; a2's history is
  // trimmed to its prompt, min(480, 460 + 50) = 480 tokens: a1's first 30 of 31 blocks.
  REQUIRE((a0->prefix_chain && a1->prefix_chain && a2->prefix_chain));
  CHECK(a0->chain_covers_output);
  CHECK(a0->chain_block_tokens == 16);
  const auto& k0 = *a0->prefix_chain;
  const auto& k1 = *a1->prefix_chain;
  const auto& k2 = *a2->prefix_chain;
  CHECK(k0.size() == 250 / 16);
  CHECK(k1.size() == 510 / 16);
  CHECK(k2.size() == 520 / 16);
  CHECK(std::equal(k0.begin(), k0.end(), k1.begin()));
  CHECK(k1[15] != k0.back());
  CHECK(std::equal(k1.begin(), k1.begin() + 30, k2.begin()));
  CHECK(k2[30] != k1[30]);  // a2's tokens 480..495 are its own, not a1's
  // Sessions do not share keys: b0's first key differs from a0's.
  CHECK(b0->prefix_chain->front() != k0.front());
}

TEST_CASE("trace sessions: the replay scale multiplies the recorded gaps", "[trace][sessions]") {
  const TempFile f("servesim_trace_sessions_scale.csv", kTrace);
  TraceReplayOptions o = csv_options(f.path);
  o.time_scale = 2.0;
  TraceSessionWorkload w(o);
  auto a0 = w.next();
  auto b0 = w.next();
  REQUIRE((a0 && b0));
  CHECK(b0->arrival == SimTime::from_ns(1'000'000'000));
  // a1: 2 × 3.000000001 s after a0's send.
  auto a1 = w.on_done(a0->id, SimTime::zero(), SimTime::from_ns(1));
  REQUIRE(a1);
  CHECK(a1->arrival == SimTime::from_ns(6'000'000'002));
}

TEST_CASE("trace sessions: formats without session ids and bad flags are refused",
          "[trace][sessions][errors]") {
  const TempFile f("servesim_trace_no_sessions.csv",
                   "arrival_s,prompt_tokens,output_tokens\n0,10,10\n");
  CHECK_THROWS_WITH(
      TraceSessionWorkload(csv_options(f.path)),
      Catch::Contains("has no session_id column") && Catch::Contains("--trace-format mooncake"));
  WorkloadConfig c;
  c.dataset_name = "trace";
  c.trace = f.path;
  c.trace_format = "csv";
  c.multi_turn = true;
  CHECK_THROWS_WITH(make_workload(c), Catch::Contains("--multi-turn: --trace"));
  c.think_time = 1.0;
  CHECK_THROWS_WITH(validate(c), Catch::Contains("--think-time: set with --dataset-name trace"));
  c.think_time = 0.0;
  c.think_time_dist = "exponential";
  CHECK_THROWS_WITH(validate(c), Catch::Contains("--think-time-dist"));
}

TEST_CASE("trace sessions: Mooncake conversation trace, sessions inferred from hash-id chains",
          "[trace][sessions]") {
  // Expectations (the rule of trace_sessions.h, counted independently with a 20-line Python
  // script over the same file, docs/workloads.md): of the 12,031 requests, 3,932 continue an
  // earlier one; 8,099 sessions, 2,027 of them with two turns or more; the longest has 43 turns.
  TraceReplayOptions o;
  o.path = kMooncakeConv;
  o.format = "mooncake";
  TraceSessionWorkload w(o);
  CHECK(w.size() == 12031);
  CHECK(w.num_sessions() == 8099);
  std::map<int32_t, int> turns;
  for (int32_t s : w.session_of_rows()) ++turns[s];
  int multi = 0, longest = 0;
  for (const auto& [s, n] : turns) {
    multi += n > 1;
    longest = std::max(longest, n);
  }
  CHECK(w.size() - w.num_sessions() == 3932);
  CHECK(multi == 2027);
  CHECK(longest == 43);
  // First turns that share hash-id blocks share chain keys: rows 0 and 1 share id 0 (512 tokens
  // = 32 chain blocks) and nothing else.
  auto r0 = w.next();
  auto r1 = w.next();
  REQUIRE((r0 && r1));
  CHECK(std::equal(r0->prefix_chain->begin(), r0->prefix_chain->begin() + 32,
                   r1->prefix_chain->begin()));
  CHECK((*r0->prefix_chain)[32] != (*r1->prefix_chain)[32]);
}

}  // namespace
}  // namespace servesim::workloads
