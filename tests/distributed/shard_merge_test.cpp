// Job arrays: `--shard I/N` parts merged by `servesim merge` equal one process's output, byte for
// byte, for every study command; missing, duplicated and foreign parts are errors that name them.
// Also the executor contract (sim/base/executor.h) on threads and on a replay.
#include <catch2/catch.hpp>
#include "tests/test_paths.h"

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "sim/app/cli.h"
#include "sim/app/study.h"
#include "sim/base/error.h"
#include "sim/base/executor.h"
#include "sim/distributed/shard.h"

namespace servesim {
namespace {

namespace fs = std::filesystem;
using Catch::Matchers::Contains;

struct CliRun {
  int code;
  std::string out, err;
};

CliRun run(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = app::run_cli(args, out, err);
  return {code, out.str(), err.str()};
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A scratch folder per test case, removed at the end.
struct Scratch {
  fs::path dir;
  explicit Scratch(const std::string& name)
      : dir(fs::temp_directory_path() /
            ("servesim_shard_" + name + "_" + std::to_string(getpid()))) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Scratch() { fs::remove_all(dir); }
  std::string operator/(const std::string& f) const { return (dir / f).string(); }
};

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// Runs `study` once (one process, output OUT) and as `shards` parts merged (output OUT too, in a
// second folder), then requires every listed output file to be byte-identical, and the table on
// stdout too (apart from the lines that name the output folder).
void check_shards_equal_one_process(const std::string& name, const std::vector<std::string>& study,
                                    const std::string& output_flag,
                                    const std::vector<std::string>& outputs, int shards) {
  Scratch one(name + "_one"), parts(name + "_parts");
  const CliRun single = run(with(study, {output_flag, one / outputs.front()}));
  INFO(single.err);
  REQUIRE(single.code == 0);

  std::vector<std::string> part_files;
  for (int i = 0; i < shards; ++i) {
    const std::string part = parts / ("p" + std::to_string(i));
    const CliRun r = run(with(study, {output_flag, parts / outputs.front(), "--shard",
                                      std::to_string(i) + "/" + std::to_string(shards),
                                      "--part-file", part, "--jobs", std::to_string(1 + i % 2)}));
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.out, Contains("Part " + std::to_string(i) + "/" + std::to_string(shards)));
    // A shard writes its part and nothing else.
    CHECK_FALSE(fs::exists(parts / outputs.front()));
    part_files.push_back(part);
  }
  // Any order of the parts.
  std::reverse(part_files.begin(), part_files.end());
  const CliRun merged = run(with({"merge"}, part_files));
  INFO(merged.err);
  REQUIRE(merged.code == 0);
  for (const std::string& f : outputs) {
    INFO(f);
    REQUIRE(fs::exists(parts / f));
    CHECK(slurp(one / f) == slurp(parts / f));
  }
  auto table = [&](std::string s, const Scratch& d) {
    for (size_t p; (p = s.find(d.dir.string())) != std::string::npos;) {
      s.replace(p, d.dir.string().size(), "DIR");
    }
    return s;
  };
  CHECK(table(single.out, one) == table(merged.out, parts));
}

const std::string kMeasured = std::string(SERVESIM_TEST_DATA_DIR) + "/measured/";

TEST_CASE("sweep: shards 0..N-1 merged equal one process, early stop included", "[distributed]") {
  // Two curves; max-num-seqs=8 saturates early, so the merge must apply the same cut.
  check_shards_equal_one_process(
      "sweep",
      {"sweep", "--model", "llama-3.1-8b", "--request-rate", "5,10,20,40,80", "--num-prompts",
       "150", "--random-input-len", "256", "--random-output-len", "32", "--vary",
       "max-num-seqs=8,256"},
      "--output", {"sweep.json", "sweep.csv"}, 3);
}

TEST_CASE("plan: shards merged equal one process", "[distributed]") {
  check_shards_equal_one_process("plan",
                                 {"plan",
                                  "--model",
                                  "llama-3.1-8b",
                                  "--target-qps",
                                  "30",
                                  "--slo",
                                  "p99_ttft_ms<=400",
                                  "--slo",
                                  "p99_tpot_ms<=40",
                                  "--gpu",
                                  "h100-sxm,l40s",
                                  "--tensor-parallel-size",
                                  "1,2",
                                  "--num-prompts",
                                  "200",
                                  "--random-input-len",
                                  "256",
                                  "--random-output-len",
                                  "32",
                                  "--seeds",
                                  "2"},
                                 "--output", {"plan.json", "plan.csv"}, 2);
}

TEST_CASE("compare: shards merged equal one process", "[distributed]") {
  check_shards_equal_one_process(
      "compare",
      {"compare", "--vary", "max-num-seqs=32,256", "--request-rate", "20", "--num-prompts", "150",
       "--random-input-len", "256", "--random-output-len", "32", "--seeds", "3"},
      "--output", {"compare.json"}, 4);
}

TEST_CASE("validate: shards merged equal one process", "[distributed]") {
  check_shards_equal_one_process(
      "validate",
      {"validate", "--calibration", "none", "--measured", kMeasured + "sglang_bench_serving.jsonl",
       kMeasured + "profile_export_genai_perf.json", "--model", "llama-3.1-8b", "--gpu", "h100-sxm",
       "-tp", "1"},
      "--output", {"validate.json"}, 2);
}

// The parts of a 3-way sweep, in a scratch folder.
std::vector<std::string> sweep_parts(const Scratch& s) {
  std::vector<std::string> parts;
  for (int i = 0; i < 3; ++i) {
    const std::string p = s / ("part" + std::to_string(i));
    const CliRun r = run({"sweep", "--request-rate", "5,10", "--num-prompts", "50", "--output",
                          s / "out.json", "--shard", std::to_string(i) + "/3", "--part-file", p});
    INFO(r.err);
    REQUIRE(r.code == 0);
    parts.push_back(p);
  }
  return parts;
}

TEST_CASE("merge names a missing, a duplicated or a foreign part and writes nothing",
          "[distributed]") {
  Scratch s("errors");
  const std::vector<std::string> parts = sweep_parts(s);

  SECTION("missing: N-1 of N parts") {
    const CliRun r = run({"merge", parts[0], parts[2]});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("part 1/3 missing"));
    CHECK_THAT(r.err, Contains("got 2 of 3 parts"));
  }
  SECTION("duplicated") {
    const CliRun r = run({"merge", parts[0], parts[1], parts[1], parts[2]});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("part 1/3 is given twice"));
  }
  SECTION("a part of another study") {
    const std::string other = s / "other";
    REQUIRE(run({"sweep", "--request-rate", "5,10", "--num-prompts", "60", "--shard", "1/3",
                 "--part-file", other})
                .code == 0);
    const CliRun r = run({"merge", parts[0], other, parts[2]});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains(other + ": a part of a different study"));
  }
  SECTION("a damaged part: one flipped bit anywhere") {
    std::string bytes = slurp(parts[1]);
    bytes[bytes.size() / 2] ^= 0x10;
    std::ofstream(s / "flipped", std::ios::binary) << bytes;
    const CliRun r = run({"merge", parts[0], s / "flipped", parts[2]});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains(s / "flipped" + ": ") && Contains("part file"));
  }
  SECTION("a part of an older servesim") {
    const std::vector<std::uint8_t> v = nlohmann::json::to_cbor(
        {{"format", "servesim_part/1"}, {"version", "v"}, {"command", {"sweep"}}});
    std::ofstream(s / "old", std::ios::binary) << std::string(v.begin(), v.end());
    const CliRun r = run({"merge", parts[0], s / "old", parts[2]});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains(s / "old" + ": a part file of an older servesim"));
  }
  SECTION("not a part file") {
    std::ofstream(s / "junk") << "{}";
    const CliRun r = run({"merge", parts[0], s / "junk"});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains(s / "junk" + ": not a servesim part file"));
  }
  SECTION("all N parts: the output appears") {
    REQUIRE(run({"merge", parts[0], parts[1], parts[2]}).code == 0);
    CHECK(fs::exists(s / "out.json"));
    return;
  }
  CHECK_FALSE(fs::exists(s / "out.json"));
}

TEST_CASE("The shard flag takes I/N with 0 <= I < N, and calibrate refuses it", "[distributed]") {
  for (const std::string bad : {"3/3", "-1/2", "1/0", "1", "a/b", "1/2/3", "/2"}) {
    INFO(bad);
    const CliRun r = run({"sweep", "--request-rate", "5", "--shard", bad});
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("--shard: '" + bad + "' is invalid"));
  }
  // The boundary: N-1 of N is a valid shard.
  Scratch s("boundary");
  CHECK(run({"sweep", "--request-rate", "5", "--num-prompts", "20", "--shard", "1/2", "--part-file",
             s / "p"})
            .code == 0);
  const CliRun c =
      run({"calibrate", "--gpu", "h100-sxm", "--measured", kMeasured + "sglang_bench_serving.jsonl",
           "--out", s / "c.json", "--shard", "0/2"});
  CHECK(c.code == 2);
  CHECK_THAT(c.err, Contains("--shard: calibrate is an iterative fit"));
  CHECK(run({"sweep", "--request-rate", "5", "--part-file", s / "q"}).code == 2);
}

TEST_CASE("docs/cli.md documents --shard, --part-file and merge", "[distributed][docs]") {
  const std::string doc =
      slurp(fs::path(SERVESIM_TEST_DATA_DIR).parent_path().parent_path() / "docs" / "cli.md");
  for (const char* s : {"`--shard`", "`--part-file`", "servesim merge"}) {
    INFO(s);
    CHECK(doc.find(s) != std::string::npos);
  }
}

TEST_CASE("study_identity drops only the flags that do not change the output", "[distributed]") {
  CHECK(app::study_identity({"sweep", "--jobs", "4", "--request-rate", "5", "--shard=1/2",
                             "--part-file", "x", "--output", "o.json"}) ==
        std::vector<std::string>{"sweep", "--request-rate", "5", "--output", "o.json"});
}

// Executor contract on a loop whose results are the squares, with a skip rule like sweep's early
// stop (skip every index above the first accepted one that is a multiple of 7).
struct SquaresStudy {
  std::vector<int64_t> slots;
  int64_t first_seven = INT64_MAX;
  JobLoop loop() {
    JobLoop l;
    l.n = static_cast<int64_t>(slots.size());
    l.compute = [](int64_t i) { return std::to_string(i * i); };
    l.accept = [this](int64_t i, std::string&& b) {
      slots[size_t(i)] = std::stoll(b);
      if (i > 0 && i % 7 == 0) first_seven = std::min(first_seven, i);
    };
    l.skip = [this](int64_t i) { return i > first_seven; };
    return l;
  }
};

TEST_CASE("ThreadExecutor: every job below the cut runs once, results in their slots",
          "[distributed]") {
  for (int jobs : {1, 2, 3}) {
    SquaresStudy s;
    s.slots.assign(20, -1);
    ThreadExecutor ex(jobs);
    ex.run(s.loop(), nullptr);
    for (int64_t i = 0; i <= 7; ++i) CHECK(s.slots[size_t(i)] == i * i);
    CHECK(s.first_seven == 7);
    if (jobs == 1) CHECK(s.slots[8] == -1);  // in order, nothing above the cut starts
  }
}

TEST_CASE("ShardExecutor + ReplayExecutor reproduce the one-process loop", "[distributed]") {
  std::vector<distributed::PartFile> parts;
  for (int i = 0; i < 3; ++i) {
    SquaresStudy s;
    s.slots.assign(20, -1);
    distributed::ShardExecutor ex({i, 3}, 1, {"squares"}, "test");
    try {
      ex.run(s.loop(), nullptr);
      FAIL("a shard stops with ShardComplete");
    } catch (const distributed::ShardComplete& done) {
      distributed::PartFile p =
          distributed::decode_part(distributed::encode_part(done.part()), "p" + std::to_string(i));
      for (const auto& [k, v] : p.results) CHECK(k % 3 == i);
      parts.push_back(p);
    }
  }
  SquaresStudy merged;
  merged.slots.assign(20, -1);
  distributed::ReplayExecutor replay(parts);
  CHECK(replay.run(merged.loop(), nullptr) == 8);  // 0..7, the cut at the first multiple of 7
  SquaresStudy single;
  single.slots.assign(20, -1);
  ThreadExecutor(1).run(single.loop(), nullptr);
  CHECK(merged.slots == single.slots);
  // A loop of another size is not the study the parts hold.
  SquaresStudy other;
  other.slots.assign(21, -1);
  distributed::ReplayExecutor again(parts);
  CHECK_THROWS_AS(again.run(other.loop(), nullptr), ConfigError);
}

// Damaged part files (the input classes fuzz_merge feeds; these were found reading decode_part
// while writing that target): each is a ConfigError naming the file, never undefined behaviour,
// a vector of 2^31 slots, or a JSON exception escaping as an internal error (exit 1).
TEST_CASE("merge refuses a study whose input changed between the shards and the merge",
          "[distributed]") {
  Scratch s("edited_input");
  const std::string cfg = s / "cfg.json";
  std::ofstream(cfg) << R"({"max_num_seqs": 64})";
  std::vector<std::string> parts;
  for (int i = 0; i < 2; ++i) {
    parts.push_back(s / ("part" + std::to_string(i)));
    const CliRun r =
        run({"sweep", "--config", cfg, "--request-rate", "5,10", "--num-prompts", "50", "--output",
             s / "out.json", "--shard", std::to_string(i) + "/2", "--part-file", parts.back()});
    INFO(r.err);
    REQUIRE(r.code == 0);
  }
  std::ofstream(cfg) << R"({"max_num_seqs": 128})";  // edited after the shards ran
  CliRun r = run({"merge", parts[0], parts[1]});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("merge: '" + cfg + "' changed since the shards read it"));
  CHECK_FALSE(fs::exists(s / "out.json"));
  std::ofstream(cfg) << R"({"max_num_seqs": 64})";  // restored: the merge goes through
  r = run({"merge", parts[0], parts[1]});
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(fs::exists(s / "out.json"));
}

TEST_CASE("merge: part files with out-of-range or non-integer fields, damaged results",
          "[distributed][fuzz]") {
  using nlohmann::json;
  // The bytes of a part whose checksum (FNV-1a 64 of the CBOR of every other field) is right, so
  // that the field checks below are reached.
  auto part = [](json j) {
    j.erase("checksum");
    const std::vector<std::uint8_t> body = json::to_cbor(j);
    uint64_t h = 1469598103934665603ull;
    for (std::uint8_t b : body) h = (h ^ b) * 1099511628211ull;
    j["checksum"] = h;
    const std::vector<std::uint8_t> v = json::to_cbor(j);
    return std::string(v.begin(), v.end());
  };
  const json good = {{"format", "servesim_part/2"},
                     {"version", "v"},
                     {"command", {"sweep"}},
                     {"shard", 0},
                     {"shards", 1},
                     {"jobs_total", 1},
                     {"inputs", json::array()},
                     {"results", json::array({json::array({0, json::binary({1, 2})})})}};
  std::string format;
  try {
    format = distributed::decode_part(part(good), "p").version;
  } catch (const ConfigError& e) {
    FAIL("the good part must decode: " << e.what());
  }
  CHECK(format == "v");
  struct Case {
    const char* field;
    json value;
    const char* says;
  };
  const std::vector<Case> cases = {
      {"shard", -1, "shard is -1; expected an integer in [0, 0]"},
      {"shard", 1, "shard is 1; expected an integer in [0, 0]"},
      {"shards", 0, "shards is 0"},
      {"shards", 1e300, "shards is 1e+300"},
      {"shard", -0.5, "shard is -0.5"},
      {"jobs_total", -3, "jobs_total is -3"},
      {"jobs_total", 18446744073709551615ull, "jobs_total is 18446744073709551615"},
      {"results", json::array({json::array({5, json::binary({1})})}), "a job index is 5"},
  };
  // "format" of another type than a string (found by fuzz_merge in CI: a binary string made
  // json::value() throw type_error 302, which escaped as an abort).
  for (const json& format_value :
       {json::binary({'s', 'e'}), json(7), json(nullptr), json::array()}) {
    json j = good;
    j["format"] = format_value;
    CAPTURE(format_value.dump());
    CHECK_THROWS_WITH(distributed::decode_part(part(j), "bad.part"),
                      Contains("bad.part: not a servesim part file"));
  }
  for (const Case& c : cases) {
    json j = good;
    j[c.field] = c.value;
    CAPTURE(c.field, c.value.dump());
    CHECK_THROWS_WITH(distributed::decode_part(part(j), "bad.part"),
                      Contains("bad.part: damaged part file") && Contains(c.says));
  }
  // N = 2^31 − 1 parts, one given: "missing", listing the first ten, without N slots.
  Scratch dir("huge_n");
  json j = good;
  j["shards"] = 2147483647;
  j["shard"] = 5;
  std::ofstream(dir / "p", std::ios::binary) << part(j);
  CHECK_THROWS_WITH(distributed::read_parts({dir / "p"}),
                    Contains("parts 0/2147483647, 1/2147483647") &&
                        Contains("and 2147483636 more missing (got 1 of 2147483647 parts)"));
  // A result whose bytes are not CBOR: the study's decoder throws a JSON error; the replay names
  // the part and the job.
  distributed::ReplayExecutor replay({distributed::decode_part(part(good), "good.part")});
  JobLoop loop;
  loop.n = 1;
  loop.compute = [](int64_t) { return std::string(); };
  loop.accept = [](int64_t, std::string&& bytes) { from_job_bytes(bytes); };
  CHECK_THROWS_WITH(replay.run(loop, nullptr),
                    Contains("good.part: damaged part file (job 0's result:"));
}

// Found by fuzz_study_results: a sweep part whose job result is another job's point (here job 1's
// stored as job 0) reached find_knee with rates out of order: an internal error (exit 1).
TEST_CASE("merge: a sweep part holding another job's point is refused, exit 2",
          "[distributed][fuzz]") {
  Scratch dir("swapped_point");
  REQUIRE(run({"sweep", "--request-rate", "5,10", "--num-prompts", "20", "--random-input-len", "64",
               "--random-output-len", "8", "--shard", "0/1", "--part-file", dir / "p"})
              .code == 0);
  distributed::PartFile part = distributed::read_parts({dir / "p"}).front();
  REQUIRE(part.results.size() == 2);
  std::swap(part.results.at(0), part.results.at(1));
  std::ofstream(dir / "q", std::ios::binary) << distributed::encode_part(part);
  const CliRun r = run({"merge", dir / "q"});
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("sweep: job 0's stored result is not the point its index names"));
}

}  // namespace
}  // namespace servesim
