// Trace readers on the real traces in data/realdata, bad rows, and replay timing (scale 1 exact,
// rescaled keeps the coefficient of variation of the gaps).
#include <catch2/catch.hpp>
#include "tests/test_paths.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "sim/base/error.h"
#include "workloads/trace_reader.h"
#include "workloads/trace_replay.h"
#include "workloads/workload.h"

namespace servesim::workloads {
namespace {

const std::string kReal = SERVESIM_REALDATA_DIR;
const std::string kAzureConv = kReal + "/azure_llm_trace_2023/AzureLLMInferenceTrace_conv.csv";
const std::string kAzureCode = kReal + "/azure_llm_trace_2023/AzureLLMInferenceTrace_code.csv";
const std::string kMooncakeConv = kReal + "/mooncake_traces/conversation_trace.jsonl";
const std::string kMooncakeSynth = kReal + "/mooncake_traces/synthetic_trace.jsonl";
const std::string kVidurConv = kReal + "/vidur_profiling/processed_traces/splitwise_conv.csv";
const std::string kVidurCode = kReal + "/vidur_profiling/processed_traces/splitwise_code.csv";

std::vector<TraceRow> read_all(const std::string& path, const std::string& format) {
  auto reader = open_trace(path, format);
  std::vector<TraceRow> rows;
  TraceRow row;
  while (reader->next(row)) rows.push_back(row);
  return rows;
}

std::vector<RequestSpec> replay(const TraceReplayOptions& o) {
  TraceReplayWorkload w(o);
  std::vector<RequestSpec> out;
  while (auto r = w.next()) out.push_back(*r);
  CHECK(static_cast<int64_t>(out.size()) == w.size());
  return out;
}

// A temporary file with `text`, removed at scope exit.
struct TempFile {
  explicit TempFile(const std::string& name, const std::string& text)
      : path((std::filesystem::temp_directory_path() / name).string()) {
    std::ofstream(path, std::ios::binary) << text;
  }
  ~TempFile() { std::remove(path.c_str()); }
  std::string path;
};

std::string error_of(const std::string& path, const std::string& format) {
  try {
    read_all(path, format);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

double cv_of_gaps(const std::vector<RequestSpec>& r) {
  std::vector<double> g;
  for (size_t i = 1; i < r.size(); ++i)
    g.push_back(double(r[i].arrival.ns() - r[i - 1].arrival.ns()));
  const double mean = std::accumulate(g.begin(), g.end(), 0.0) / double(g.size());
  double var = 0;
  for (double x : g) var += (x - mean) * (x - mean);
  return std::sqrt(var / double(g.size())) / mean;
}

TEST_CASE("azure reader: the real CRLF files, row counts, first and last values", "[trace]") {
  const std::vector<TraceRow> conv = read_all(kAzureConv, "azure");
  REQUIRE(conv.size() == 19366);
  CHECK(conv.front().prompt_tokens == 374);
  CHECK(conv.front().output_tokens == 44);
  CHECK(conv[1].arrival_ns - conv[0].arrival_ns ==
        4'314'579'000);  // 18:15:50.9951690 - :46.6805900
  CHECK(conv.back().prompt_tokens == 197);
  CHECK(conv.back().output_tokens == 183);  // "183\r" in the file: the CR is stripped
  CHECK(conv.back().arrival_ns - conv.front().arrival_ns == 3'501'721'937'000);
  const std::vector<TraceRow> code = read_all(kAzureCode, "azure");
  REQUIRE(code.size() == 8819);
  CHECK(code.front().prompt_tokens == 4808);
  CHECK(code.front().output_tokens == 10);
  CHECK(code.back().prompt_tokens == 549);
  CHECK(code.back().output_tokens == 173);
  CHECK(code.back().arrival_ns - code.front().arrival_ns == 3'435'948'056'000);
}

TEST_CASE("vidur reader: splitwise_conv is the Azure conversation trace rebased to 0 s",
          "[trace]") {
  const std::vector<TraceRow> vidur = read_all(kVidurConv, "vidur");
  const std::vector<TraceRow> azure = read_all(kAzureConv, "azure");
  REQUIRE(vidur.size() == azure.size());
  int64_t worst = 0;
  for (size_t i = 0; i < vidur.size(); ++i) {
    CHECK(vidur[i].prompt_tokens == azure[i].prompt_tokens);
    CHECK(vidur[i].output_tokens == azure[i].output_tokens);
    // Vidur rounds to microseconds; Azure writes 100 ns.
    worst = std::max<int64_t>(
        worst, std::llabs(vidur[i].arrival_ns - (azure[i].arrival_ns - azure[0].arrival_ns)));
  }
  CHECK(worst <= 500);
  CHECK(vidur[1].arrival_ns == 4'314'579'000);
  CHECK(vidur.back().arrival_ns == 3'501'721'937'000);
}

TEST_CASE("vidur reader: splitwise_code is the Azure code trace rebased to 0 s", "[trace]") {
  const std::vector<TraceRow> vidur = read_all(kVidurCode, "vidur");
  const std::vector<TraceRow> azure = read_all(kAzureCode, "azure");
  REQUIRE(vidur.size() == 8819);
  REQUIRE(azure.size() == vidur.size());
  int64_t worst = 0;
  for (size_t i = 0; i < vidur.size(); ++i) {
    CHECK(vidur[i].prompt_tokens == azure[i].prompt_tokens);
    CHECK(vidur[i].output_tokens == azure[i].output_tokens);
    worst = std::max<int64_t>(
        worst, std::llabs(vidur[i].arrival_ns - (azure[i].arrival_ns - azure[0].arrival_ns)));
  }
  CHECK(worst <= 500);  // Vidur's microseconds against Azure's 100 ns
  // First and last rows as written: "0.0,4808,10", "0.052,3180,8", ..., "3435.948056,549,173".
  CHECK(vidur.front().arrival_ns == 0);
  CHECK(vidur.front().prompt_tokens == 4808);
  CHECK(vidur.front().output_tokens == 10);
  CHECK(vidur[1].arrival_ns == 52'000'000);
  CHECK(vidur.back().arrival_ns == 3'435'948'056'000);
  CHECK(vidur.back().prompt_tokens == 549);
  CHECK(vidur.back().output_tokens == 173);
}

TEST_CASE("mooncake reader: rows, hash ids, 512-token blocks", "[trace]") {
  const std::vector<TraceRow> conv = read_all(kMooncakeConv, "mooncake");
  REQUIRE(conv.size() == 12031);
  CHECK(conv.front().arrival_ns == 0);
  CHECK(conv.front().prompt_tokens == 6758);
  CHECK(conv.front().output_tokens == 500);
  CHECK(conv.front().hash_ids.size() == 14);
  CHECK(conv.front().hash_ids[0] == 0);
  CHECK(conv.back().arrival_ns == 3'536'999'000'000);
  CHECK(conv.back().prompt_tokens == 20774);
  CHECK(conv.back().output_tokens == 508);
  const std::vector<TraceRow> synth = read_all(kMooncakeSynth, "mooncake");
  REQUIRE(synth.size() == 3993);
  CHECK(synth.back().arrival_ns == 1'022'025'000'000);
  CHECK(synth.back().prompt_tokens == 18440);
  CHECK(synth.back().output_tokens == 83);
}

TEST_CASE("trace readers reject bad rows naming the file and line", "[trace]") {
  SECTION("azure: a non-number on line 3") {
    TempFile f("servesim_bad_azure.csv",
               "TIMESTAMP,ContextTokens,GeneratedTokens\r\n2023-11-16 18:15:46.6805900,374,44\r\n"
               "2023-11-16 18:15:47.0000000,abc,44\r\n");
    const std::string e = error_of(f.path, "azure");
    CHECK(e.find(f.path + ":3:") != std::string::npos);
    CHECK(e.find("ContextTokens") != std::string::npos);
  }
  SECTION("azure: a malformed timestamp") {
    TempFile f("servesim_bad_azure_ts.csv",
               "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16T18:15:46,374,44\n");
    CHECK(error_of(f.path, "azure").find(f.path + ":2:") != std::string::npos);
  }
  SECTION("azure: a timestamp outside int64 nanoseconds (found by fuzz_trace: year 1011)") {
    for (const char* ts :
         {"1011-11-16 18:15:46.6805900", "1969-12-31 23:59:59", "2262-01-01 00:00:00"}) {
      CAPTURE(ts);
      TempFile f("servesim_azure_year.csv",
                 std::string("TIMESTAMP,ContextTokens,GeneratedTokens\r\n") + ts + ",374,44\r\n");
      const std::string e = error_of(f.path, "azure");
      CHECK(e.find(f.path + ":2: column 'TIMESTAMP' has value '" + ts +
                   "'; expected a year in [1970, 2261]") != std::string::npos);
    }
  }
  SECTION("csv: going back in time on line 4") {
    TempFile f("servesim_bad_order.csv",
               "arrival_s,prompt_tokens,output_tokens\n0.5,10,5\n1.0,10,5\n0.9,10,5\n");
    const std::string e = error_of(f.path, "csv");
    CHECK(e.find(f.path + ":4:") != std::string::npos);
    CHECK(e.find("back in time") != std::string::npos);
  }
  SECTION("csv: zero prompt tokens, missing column") {
    TempFile f("servesim_zero.csv", "arrival_s,prompt_tokens,output_tokens\n0.5,0,5\n");
    CHECK(error_of(f.path, "csv").find(f.path + ":2:") != std::string::npos);
    TempFile g("servesim_nocol.csv", "arrival,prompt_tokens,output_tokens\n0.5,3,5\n");
    CHECK(error_of(g.path, "csv").find("arrival_s") != std::string::npos);
  }
  SECTION("mooncake: hash_ids that do not cover the prompt") {
    TempFile f(
        "servesim_bad_mc.jsonl",
        "{\"timestamp\": 0, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [0, 1]}\n"
        "{\"timestamp\": 1, \"input_length\": 600, \"output_length\": 5, \"hash_ids\": [0]}\n");
    const std::string e = error_of(f.path, "mooncake");
    CHECK(e.find(f.path + ":2:") != std::string::npos);
    CHECK(e.find("hash_ids") != std::string::npos);
  }
  SECTION("burstgpt: failed rows (Response tokens 0) are skipped, a bad one is not") {
    TempFile f("servesim_burst.csv",
               "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
               "5,ChatGPT,472,18,490,Conversation log\n6,GPT-4,1000,0,1000,Conversation log\n"
               "7.5,GPT-4,300,20,320,API log\n");
    const std::vector<TraceRow> rows = read_all(f.path, "burstgpt");
    REQUIRE(rows.size() == 2);
    CHECK(rows[1].arrival_ns == 7'500'000'000);
    TempFile g("servesim_burst_bad.csv",
               "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
               "5,ChatGPT,472,-3,490,Conversation log\n");
    CHECK(error_of(g.path, "burstgpt").find(g.path + ":2:") != std::string::npos);
  }
  SECTION("splitwise and vllm-result") {
    TempFile f("servesim_split.csv",
               "request_id,request_type,application_id,arrival_timestamp,batch_size,prompt_size,"
               "token_size\n0,2,0,1,1,4096,32\n1,2,0,3,1,2048,8\n");
    const std::vector<TraceRow> rows = read_all(f.path, "splitwise");
    REQUIRE(rows.size() == 2);
    CHECK(rows[1].arrival_ns == 3'000'000'000);
    CHECK(rows[1].prompt_tokens == 2048);
    TempFile v(
        "servesim_vllm.json",
        "{\"input_lens\": [10, 20], \"output_lens\": [3, 4], \"start_times\": [100.5, 100.25]}");
    const std::vector<TraceRow> vr = read_all(v.path, "vllm-result");
    REQUIRE(vr.size() == 2);
    CHECK(vr[0].prompt_tokens == 20);  // sorted by start time
    CHECK(vr[1].arrival_ns == 250'000'000);
    TempFile w("servesim_vllm_nostart.json", "{\"input_lens\": [10], \"output_lens\": [3]}");
    CHECK_THROWS_WITH(read_all(w.path, "vllm-result"), Catch::Contains("start_times"));
    // Start times 2e300 s apart: the offset has no int64 nanosecond value (llround of it is
    // unspecified); refused like a CSV trace's seconds beyond 9e9.
    TempFile far(
        "servesim_vllm_far.json",
        "{\"input_lens\": [10, 20], \"output_lens\": [3, 4], \"start_times\": [-1e300, 1e300]}");
    CHECK_THROWS_WITH(
        read_all(far.path, "vllm-result"),
        Catch::Contains("start_times[1] is 1e+300, more than 9e9 s after the earliest"));
  }
  CHECK_THROWS_WITH(open_trace(kAzureConv, "parquet"), Catch::Contains("--trace-format"));
  CHECK_THROWS_WITH(open_trace("/no/such/file.csv", "csv"), Catch::Contains("--trace"));
}

TEST_CASE("replay at time scale 1 reproduces the recorded arrival times exactly", "[trace]") {
  TraceReplayOptions o;
  o.path = kAzureConv;
  o.format = "azure";
  const std::vector<RequestSpec> r = replay(o);
  const std::vector<TraceRow> rows = read_all(kAzureConv, "azure");
  REQUIRE(r.size() == rows.size());
  for (size_t i = 0; i < r.size(); ++i) {
    REQUIRE(r[i].id == int64_t(i));
    REQUIRE(r[i].arrival.ns() == rows[i].arrival_ns - rows[0].arrival_ns);
    REQUIRE(r[i].prompt_tokens == rows[i].prompt_tokens);
    REQUIRE(r[i].output_tokens == rows[i].output_tokens);
  }
  CHECK(r.back().arrival.ns() == 3'501'721'937'000);
}

TEST_CASE("replay rescaled to a rate keeps the shape: the inter-arrival CV is unchanged",
          "[trace]") {
  TraceReplayOptions o;
  o.path = kAzureConv;
  o.format = "azure";
  const std::vector<RequestSpec> recorded = replay(o);
  // The conversation trace: 19,366 requests in 3,501.72 s (5.53 req/s), gaps with CV 1.0942.
  const double cv = cv_of_gaps(recorded);
  CHECK(cv == Approx(1.0941699818).epsilon(1e-9));
  o.request_rate = 100.0;
  TraceReplayWorkload w(o);
  CHECK(w.scale() == Approx(19365.0 / (100.0 * 3501.721937)).epsilon(1e-12));
  const std::vector<RequestSpec> fast = replay(o);
  REQUIRE(fast.size() == recorded.size());
  // Mean rate: (n - 1) gaps over the span; each arrival is rounded to 1 ns.
  const double span_s = double(fast.back().arrival.ns() - fast.front().arrival.ns()) * 1e-9;
  CHECK(double(fast.size() - 1) / span_s == Approx(100.0).epsilon(1e-9));
  // Scaling every gap by one factor leaves the CV unchanged up to the 1 ns rounding of each
  // arrival (gaps are ~10 ms, so the relative error is ~1e-7).
  CHECK(cv_of_gaps(fast) == Approx(cv).epsilon(1e-6));
  for (size_t i = 0; i < fast.size(); ++i) {
    REQUIRE(fast[i].prompt_tokens == recorded[i].prompt_tokens);
    REQUIRE(std::llabs(fast[i].arrival.ns() -
                       std::llround(double(recorded[i].arrival.ns()) * w.scale())) <= 0);
  }
}

TEST_CASE("replay window: --trace-start and --trace-duration, and the time scale", "[trace]") {
  TraceReplayOptions o;
  o.path = kVidurConv;
  o.format = "vidur";
  o.start_s = 600;
  o.duration_s = 300;
  const std::vector<RequestSpec> win = replay(o);
  const std::vector<TraceRow> rows = read_all(kVidurConv, "vidur");
  std::vector<const TraceRow*> expected;
  for (const TraceRow& r : rows) {
    if (r.arrival_ns >= 600'000'000'000 && r.arrival_ns < 900'000'000'000) expected.push_back(&r);
  }
  REQUIRE(win.size() == expected.size());
  REQUIRE(!win.empty());
  for (size_t i = 0; i < win.size(); ++i) {
    REQUIRE(win[i].arrival.ns() == expected[i]->arrival_ns - 600'000'000'000);
  }
  o.time_scale = 2.0;
  const std::vector<RequestSpec> slow = replay(o);
  CHECK(slow.back().arrival.ns() == 2 * win.back().arrival.ns());
  o.start_s = 1e6;  // past the end
  CHECK_THROWS_WITH(TraceReplayWorkload(o), Catch::Contains("no request in the window"));
  o.start_s = 0;
  o.request_rate = 10;  // both set the speed
  CHECK_THROWS_WITH(TraceReplayWorkload(o), Catch::Contains("--trace-time-scale"));
}

TEST_CASE("mooncake replay carries prefix chains: equal leading hash ids, equal chain keys",
          "[trace]") {
  TraceReplayOptions o;
  o.path = kMooncakeConv;
  o.format = "mooncake";
  o.duration_s = 1;  // timestamps 0..999 ms
  const std::vector<RequestSpec> r = replay(o);
  REQUIRE(r.size() >= 2);
  const std::vector<TraceRow> rows = read_all(kMooncakeConv, "mooncake");
  for (size_t i = 0; i < r.size(); ++i) {
    REQUIRE(r[i].prefix_chain != nullptr);
    CHECK(r[i].chain_block_tokens == 512);
    CHECK(*r[i].prefix_chain == prefix_chain_of(rows[i].hash_ids));
  }
  // Rows 0 and 1 share hash id 0 and then differ: chains agree at 0 only.
  CHECK((*r[0].prefix_chain)[0] == (*r[1].prefix_chain)[0]);
  CHECK((*r[0].prefix_chain)[1] != (*r[1].prefix_chain)[1]);
  // The chain is a key of the whole prefix: the same id after different prefixes differs.
  CHECK(prefix_chain_of({1, 7})[1] != prefix_chain_of({2, 7})[1]);
}

TEST_CASE("make_workload: --dataset-name trace and its flag errors", "[trace]") {
  WorkloadConfig c;
  c.dataset_name = "trace";
  CHECK_THROWS_WITH(make_workload(c), Catch::Contains("--trace"));
  c.trace = kAzureCode;
  CHECK_THROWS_WITH(make_workload(c), Catch::Contains("--trace-format"));
  c.trace_format = "azure";
  auto w = make_workload(c);
  CHECK(w->size() == 8819);  // --num-prompts does not cut a trace
  c.trace_time_scale = -1;
  CHECK_THROWS_WITH(make_workload(c), Catch::Contains("--trace-time-scale"));
  WorkloadConfig r;
  r.trace = kAzureCode;
  CHECK_THROWS_WITH(make_workload(r), Catch::Contains("--dataset-name trace"));
}

}  // namespace
}  // namespace servesim::workloads
