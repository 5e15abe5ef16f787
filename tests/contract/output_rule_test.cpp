// One output rule for every file servesim writes (sim/base/output_file.h): every option
// of every command that names a file to write is in app::output_flags(), and each one refuses a
// device, a symbolic link and an input of its own command before any work, leaving them as they
// were. A new output flag that skips the registry fails the first test; one that skips the rule
// fails the second.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "sim/app/cli.h"
#include "sim/base/input_files.h"
#include "sim/base/output_file.h"
#include "tests/contract/cli_outcome.h"

namespace servesim::app {
namespace {

namespace fs = std::filesystem;
using testing::file_text;
using testing::Outcome;
using testing::run;
using testing::TempDir;

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Options that look like an output's (below) but name no file servesim writes, with why.
const std::map<std::string, std::string> kNotOutputs = {
    {"--shard", "I/N, the share of a study; its part goes to --part-file"},
    {"--kernels", "calibrate's input tables (the help names the script that writes them)"},
};

// The rule that finds output flags, new ones included: an option that takes a value and whose
// name starts or ends with an output word (--output, --out, --part-file, --result-dir,
// --write-line-profiles, a future --report or --log-file; not --random-output-len), or whose help
// says it writes.
bool looks_like_output(const OptionInfo& o) {
  if (!o.takes_value) return false;  // --save-result, --force: flags, not paths
  std::vector<std::string> words;
  std::stringstream name(lower(o.name));
  for (std::string w; std::getline(name, w, '-');) {
    if (!w.empty()) words.push_back(w);
  }
  static const std::set<std::string> kWords = {"out",    "output", "outputs", "write", "save",
                                               "report", "result", "results", "file",  "filename",
                                               "dir",    "folder", "part",    "log",   "dump"};
  if (!words.empty() && (kWords.count(words.front()) > 0 || kWords.count(words.back()) > 0)) {
    return true;
  }
  return lower(o.description).find("write") != std::string::npos;
}

bool registered(const std::string& command, const std::string& flag) {
  for (const OutputFlag& f : output_flags()) {
    if (f.command == command && f.flag == flag) return true;
  }
  return false;
}

TEST_CASE("output rule: every option that names a file to write is a registered output flag",
          "[cli][reliability][outputs]") {
  const std::vector<OptionInfo> options = command_options();
  std::set<std::string> commands;
  for (const OptionInfo& o : options) commands.insert(o.command);
  // Every command with options was walked (`list`'s one is its catalog positional).
  CHECK(commands == std::set<std::string>{"simulate", "sweep", "compare", "plan", "matrix",
                                          "validate", "calibrate", "merge", "kernel-check", "serve",
                                          "report", "list"});
  int outputs = 0;
  for (const OptionInfo& o : options) {
    INFO(o.command << " " << o.name << ": " << o.description);
    if (!looks_like_output(o)) continue;
    if (kNotOutputs.count(o.name) > 0) continue;
    CHECK(registered(o.command, o.name));
    ++outputs;
  }
  // Every registered flag is a real option of its command.
  for (const OutputFlag& f : output_flags()) {
    INFO(f.command << " " << f.flag);
    const bool exists = std::any_of(options.begin(), options.end(), [&](const OptionInfo& o) {
      return o.command == f.command && o.name == f.flag;
    });
    CHECK(exists);
    CHECK((f.kind == "file" || f.kind == "file+csv" || f.kind == "folder"));
  }
  CHECK(outputs == static_cast<int>(output_flags().size()));
}

// A small valid command line per command, reading {dir}/c.json as its --config (or the measured
// table for kernel-check), so that the input case has an input to protect.
std::vector<std::string> base_args(const std::string& command, const TempDir& d) {
  const std::string c = d / "c.json";
  if (command == "simulate")
    return {"simulate", "--num-prompts", "4", "--config", c, "--save-result"};
  if (command == "sweep")
    return {"sweep", "--request-rate", "1", "--num-prompts", "4", "--config", c};
  if (command == "compare") {
    return {"compare",       "--vary", "max-num-seqs=8,16", "--seeds", "2",
            "--num-prompts", "4",      "--config",          c};
  }
  if (command == "plan") {
    return {"plan",
            "--target-qps",
            "1",
            "--slo",
            "p99_ttft_ms<=100000",
            "--seeds",
            "1",
            "--num-prompts",
            "4",
            "--config",
            c};
  }
  if (command == "matrix") return {"matrix", "--num-prompts", "4", "--config", c};
  if (command == "validate") {
    return {"validate", "--measured", d / "m.json", "--gpu", "h100-sxm", "-tp", "1", "--config", c};
  }
  if (command == "calibrate") {
    return {"calibrate", "--gpu", "h100-sxm", "--vidur-mlp", d / "mlp.csv", "--config", c};
  }
  if (command == "kernel-check") return {"kernel-check", "--measured", c, "--gpu", "h100-sxm"};
  if (command == "report") return {"report", c};
  FAIL("no command line for " << command);
  return {};
}

// The extra arguments that make `flag` take effect.
std::vector<std::string> with_flag(const OutputFlag& f, const std::string& value,
                                   const TempDir& d) {
  std::vector<std::string> a;
  if (f.command == "calibrate" && f.flag != "--out") a = {"--out", d / "new.json"};  // required
  if (f.flag == "--part-file") a.insert(a.end(), {"--shard", "0/1"});
  if (f.flag == "--write-line-profiles") a = {"--leave-one-group-out"};
  a.push_back(f.flag);
  a.push_back(value);
  return a;
}

TEST_CASE(
    "output rule: every output flag refuses a device, a symlink and an input, before any "
    "work, and changes none of them",
    "[cli][reliability][outputs]") {
  for (const OutputFlag& f : output_flags()) {
    INFO(f.command << " " << f.flag << " (" << f.kind << ")");
    TempDir d("output_rule");
    // A settings file every command accepts, a measured run and a GEMM table for validate and
    // calibrate.
    std::ofstream(d / "c.json") << R"({"block_size": 16})";
    std::ofstream(d / "m.json")
        << R"({"backend": "vllm", "model_id": "meta-llama/Llama-3.1-8B-Instruct", "request_rate": 1,
              "completed": 2, "input_lens": [100, 120], "output_lens": [20, 30],
              "ttfts": [0.05, 0.06], "itls": [[0.01], [0.01]], "mean_ttft_ms": 55})";
    std::ofstream(d / "mlp.csv") << "n_head,n_kv_head,n_embd,n_expanded_embd,num_tokens\n";
    std::ofstream(d / "target.json") << "keep";
    fs::create_symlink(d / "target.json", d / "link.json");
    const std::string config_text = file_text(d / "c.json");
    auto attempt = [&](const std::string& value) {
      std::vector<std::string> args = base_args(f.command, d);
      for (const std::string& a : with_flag(f, value, d)) args.push_back(a);
      return run(args);
    };
    // Whatever the case, the folder keeps exactly its files, unchanged (no temporary left).
    auto same_folder = [&]() {
      CHECK(d.names() ==
            std::vector<std::string>{"c.json", "link.json", "m.json", "mlp.csv", "target.json"});
      CHECK(file_text(d / "c.json") == config_text);
      CHECK(file_text(d / "target.json") == "keep");
      CHECK(fs::is_symlink(d / "link.json"));
    };

    {  // A device: /dev/null must stay a character device.
      const Outcome o = attempt("/dev/null");
      INFO(o.err);
      CHECK(o.code == 2);
      CHECK(o.err.find("/dev/null") != std::string::npos);
      CHECK(std::count(o.err.begin(), o.err.end(), '\n') == 1);
      struct stat st {};
      REQUIRE(::stat("/dev/null", &st) == 0);
      CHECK(S_ISCHR(st.st_mode));
      same_folder();
    }
    if (f.kind == "folder") continue;  // the files inside are checked when written
    {                                  // A symbolic link: rename would replace the link.
      const Outcome o = attempt(d / "link.json");
      INFO(o.err);
      CHECK(o.code == 2);
      CHECK(std::count(o.err.begin(), o.err.end(), '\n') == 1);
      CHECK(o.err.find(f.flag + ": '" + (d / "link.json") + "' is a symbolic link") !=
            std::string::npos);
      same_folder();
    }
    {  // An input of the same command: its --config (kernel-check: its --measured table).
      const std::string input = d / "c.json";
      const Outcome o = attempt(input);
      INFO(o.err);
      CHECK(o.code == 2);
      CHECK(std::count(o.err.begin(), o.err.end(), '\n') == 1);
      CHECK(o.err.find(f.flag + ": '" + input + "' is also an input") != std::string::npos);
      same_folder();
    }
  }
}

TEST_CASE("output rule: merge never writes over the part files it merges",
          "[cli][reliability][outputs][merge]") {
  // The study's --output names its own part file: the shard writes only the part; the merge
  // replays the study, whose output would replace the part being merged.
  TempDir d("output_rule_merge");
  const std::string part = d / "p0.json";
  const std::vector<std::string> study = {"sweep", "--request-rate", "1", "--num-prompts",
                                          "4",     "--output",       part};
  std::vector<std::string> shard = study;
  for (const char* a : {"--shard", "0/1", "--part-file"}) shard.push_back(a);
  shard.push_back(part);
  const Outcome made = run(shard);
  INFO(made.err);
  REQUIRE(made.code == 0);
  const std::string before = file_text(part);
  const Outcome merged = run({"merge", part});
  INFO(merged.err);
  CHECK(merged.code == 2);
  CHECK(merged.err.find("--output: '" + part + "' is also an input") != std::string::npos);
  CHECK(file_text(part) == before);
  CHECK(d.names() == std::vector<std::string>{"p0.json"});
}

TEST_CASE("output rule: a file read during the run is refused at write time too",
          "[cli][reliability][outputs]") {
  // A writer called directly (no command's checks before it): inside an input scope, a file
  // checked as an input cannot be written, a path that became a FIFO cannot either, and nothing
  // is left behind.
  TempDir d("output_rule_write");
  std::ofstream(d / "in.json") << "{}";
  {
    InputScope scope;
    check_input_file(d / "in.json", "--workload", kMaxSettingsFileBytes);
    CHECK_THROWS_WITH(write_files_atomically({{d / "in.json", "x"}}),
                      Catch::Contains("not written: it is also an input"));
    REQUIRE(::mkfifo((d / "f.json").c_str(), 0600) == 0);
    CHECK_THROWS_WITH(write_files_atomically({{d / "ok.json", "x"}, {d / "f.json", "x"}}),
                      Catch::Contains("is a FIFO"));
  }
  CHECK(file_text(d / "in.json") == "{}");
  CHECK(d.names() == std::vector<std::string>{"f.json", "in.json"});
  // Outside any scope nothing is registered: the same file can be written.
  write_files_atomically({{d / "in.json", "x"}});
  CHECK(file_text(d / "in.json") == "x");
}

}  // namespace
}  // namespace servesim::app
