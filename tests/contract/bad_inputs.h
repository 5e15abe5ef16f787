// The bad-input table: every bad input class servesim has met, as rows run by
// tests/contract/bad_inputs_test.cpp through the exact code path a user takes (run_cli). The rows
// live in tests/contract/bad_inputs_*_test.cpp, one part per file, and are joined by all_rows() in
// docs/reliability.md's order. NEW ROWS GO AT THE END of bad_inputs_latest_test.cpp.
#pragma once

#include <map>
#include <sstream>
#include <string>
#include <vector>

// Rows leave the trailing `special` out when they need none (here for every file of rows).
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace servesim::app::bad_inputs {

// One row: the input, what the run must get, and its line in docs/reliability.md.
struct BadInput {
  std::string input_class;                   // what kind of input; also the regression test's name
  std::vector<std::string> args;             // "{dir}" is replaced by the case's folder
  std::map<std::string, std::string> files;  // name -> content, created in {dir}
  int code;                                  // expected exit code
  std::string needle;                        // must appear in the error line
  std::string special;  // "symlink", "fifo", "dir", "csvdir": what {dir}/out.json is made as;
                        // "big": {dir}/big.json, 65 MiB; "loop": {dir}/loop, a symbolic link
                        // to itself
};

// A model config.json: Llama-3.1-8B's shape with one field replaced.
inline std::string model_json(const std::string& field, const std::string& value) {
  std::map<std::string, std::string> f = {{"hidden_size", "4096"},
                                          {"intermediate_size", "14336"},
                                          {"num_attention_heads", "32"},
                                          {"num_key_value_heads", "8"},
                                          {"num_hidden_layers", "32"},
                                          {"vocab_size", "128256"},
                                          {"max_position_embeddings", "131072"},
                                          {"torch_dtype", "\"bfloat16\""}};
  f[field] = value;
  std::string s = "{";
  for (const auto& [k, v] : f) s += (s.size() > 1 ? ", \"" : "\"") + k + "\": " + v;
  return s + "}";
}

// A GPU JSON: an H100-like spec with one field replaced.
inline std::string gpu_json(const std::string& field, const std::string& value) {
  std::map<std::string, std::string> f = {
      {"memory_bytes", "85029027840"},
      {"hbm_bandwidth_bytes_per_s", "3.35e12"},
      {"bf16_flops", "9.89e14"},
      {"step_overhead_s", "0.00018"},
      {"scale_up", R"({"kind": "nvlink", "bandwidth_bytes_per_s": 4.5e11, "latency_s": 5e-6})"}};
  f[field] = value;
  std::string s = "{";
  for (const auto& [k, v] : f) s += (s.size() > 1 ? ", \"" : "\"") + k + "\": " + v;
  return s + "}";
}

// A vllm bench serve result with per-request arrays (two requests).
inline const char* const kMeasured =
    R"({"backend": "vllm", "model_id": "meta-llama/Llama-3.1-8B-Instruct", "request_rate": 1.0,
        "completed": 2, "input_lens": [100, 120], "output_lens": [20, 30],
        "ttfts": [0.05, 0.06], "itls": [[0.01], [0.01]], "mean_ttft_ms": 55})";

// A workload file of one class.
inline const char* const kWorkload =
    R"({"classes": [{"name": "a", "share": 1, "prompt": {"dist": "fixed", "tokens": 8}, "output": {"dist": "fixed", "tokens": 8}}]})";

// 101 percentiles: one more than --metric-percentiles takes.
inline const std::string kManyPercentiles = [] {
  std::ostringstream s;
  for (int i = 0; i <= 100; ++i) s << (i > 0 ? "," : "") << i;
  return s.str();
}();

// `simulate --num-prompts 20` followed by `extra`: the command most rows run.
inline std::vector<std::string> S(const std::vector<std::string>& extra) {
  std::vector<std::string> a = {"simulate", "--num-prompts", "20"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

// The parts, in table order (each defined in its bad_inputs_<part>_test.cpp).
std::vector<BadInput> flag_rows();
std::vector<BadInput> settings_file_rows();
std::vector<BadInput> output_and_measured_rows();
std::vector<BadInput> command_flag_rows();
std::vector<BadInput> output_rule_rows();
std::vector<BadInput> limit_and_mode_rows();
std::vector<BadInput> format_rows();
std::vector<BadInput> latest_rows();  // rows are appended here

// Every row, in docs/reliability.md's order.
inline std::vector<BadInput> all_rows() {
  std::vector<BadInput> all;
  for (auto part : {flag_rows, settings_file_rows, output_and_measured_rows, command_flag_rows,
                    output_rule_rows, limit_and_mode_rows, format_rows, latest_rows}) {
    std::vector<BadInput> rows = part();
    all.insert(all.end(), rows.begin(), rows.end());
  }
  return all;
}

}  // namespace servesim::app::bad_inputs
