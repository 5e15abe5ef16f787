// `servesim COMMAND --help` by topic (sim/app/help_groups.h): the command's own flags first, then
// the shared run settings by topic in a fixed order; every listed flag in exactly one group; the
// accepted vLLM flags still hidden; and parsing unchanged by the grouping.
#include <catch2/catch.hpp>

#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "sim/app/help_groups.h"
#include "tests/contract/cli_outcome.h"

namespace servesim::app {
namespace {

using testing::run;

// The group titles of a help text, in order ("Plan options", "Deployment", ...).
std::vector<std::string> groups(const std::string& help) {
  std::vector<std::string> out;
  std::istringstream in(help);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != ' ' && line.back() == ':' && line.find("Usage") != 0) {
      out.push_back(line.substr(0, line.size() - 1));
    }
  }
  return out;
}

// The group a flag is listed under in `help`, "" when it is not listed.
std::string group_of(const std::string& help, const std::string& flag) {
  std::istringstream in(help);
  std::string group;
  const std::regex listed("^  (-h,)?" + flag + "( |$)");
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != ' ' && line.back() == ':')
      group = line.substr(0, line.size() - 1);
    if (std::regex_search(line, listed)) return group;
  }
  return "";
}

TEST_CASE("plan --help lists plan's own flags first, then the settings by topic", "[cli][help]") {
  const testing::Outcome o = run({"plan", "--help"});
  REQUIRE(o.code == 0);
  const std::vector<std::string> expected = {
      "Plan options", "Settings file",      "Deployment", "Disaggregated prefill/decode",
      "Calibration",  "Engine (vLLM)",      "LoRA",       "Load (vllm bench serve)",
      "Report",       "Distributed studies"};
  CHECK(groups(o.out) == expected);
  CHECK(group_of(o.out, "--target-qps") == "Plan options");
  CHECK(group_of(o.out, "--slo") == "Plan options");
  // plan's own candidate lists, though named as run settings, are plan's.
  CHECK(group_of(o.out, "--gpu") == "Plan options");
  CHECK(group_of(o.out, "--tensor-parallel-size") == "Plan options");
  CHECK(group_of(o.out, "--model") == "Deployment");
  CHECK(group_of(o.out, "--max-num-seqs") == "Engine (vLLM)");
  CHECK(group_of(o.out, "--no-enable-prefix-caching") == "Engine (vLLM)");
  CHECK(group_of(o.out, "--num-prompts") == "Load (vllm bench serve)");
  CHECK(group_of(o.out, "--percentile-metrics") == "Report");
  CHECK(group_of(o.out, "--shard") == "Distributed studies");
  CHECK(group_of(o.out, "--help") == "Plan options");
  // vLLM's accepted flags stay hidden (the footer states the rule).
  CHECK(group_of(o.out, "--port") == "");
}

TEST_CASE("every run command's help lists each flag once, its own group first", "[cli][help]") {
  for (const std::string cmd : {"simulate", "sweep", "compare", "plan", "validate", "calibrate",
                                "matrix", "serve", "list", "merge", "kernel-check"}) {
    INFO(cmd);
    const testing::Outcome o = run({cmd, "--help"});
    REQUIRE(o.code == 0);
    const std::vector<std::string> g = groups(o.out);
    REQUIRE(!g.empty());
    const std::string own = g[0] == "Positionals" ? g.at(1) : g[0];
    CHECK(own ==
          std::string(1, static_cast<char>(std::toupper(cmd[0]))) + cmd.substr(1) + " options");
    // Each flag line appears once.
    std::istringstream in(o.out);
    std::vector<std::string> flags;
    const std::regex flag_line("^  (-h,)?(--[a-z0-9-]+)");
    for (std::string line; std::getline(in, line);) {
      std::smatch m;
      if (std::regex_search(line, m, flag_line)) flags.push_back(m[2]);
    }
    std::vector<std::string> sorted = flags;
    std::sort(sorted.begin(), sorted.end());
    CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());
  }
}

TEST_CASE("run_setting_topic names a setting's topic and no other flag's", "[help]") {
  CHECK(run_setting_topic("--max-num-seqs") == "Engine (vLLM)");
  CHECK(run_setting_topic("--no-async-scheduling") == "Engine (vLLM)");
  CHECK(run_setting_topic("--prefill-gpu") == "Disaggregated prefill/decode");
  CHECK(run_setting_topic("--request-rate") == "Load (vllm bench serve)");
  CHECK(run_setting_topic("--max-loras") == "LoRA");
  CHECK(run_setting_topic("--target-qps") == "");
  CHECK(run_setting_topic("") == "");
}

}  // namespace
}  // namespace servesim::app
