// Command-line options shared by every command that describes a run (simulate, sweep, plan, ...):
// --config FILE plus one option per SimulationConfig field (run_config.h), with vLLM's names.
#ifndef SERVESIM_SIM_APP_RUN_OPTIONS_H_
#define SERVESIM_SIM_APP_RUN_OPTIONS_H_

#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "sim/cluster/simulation.h"

namespace servesim::app {

struct RunOptions {
  std::string config_file;
  std::map<std::string, std::string> scalar;              // key -> text
  std::map<std::string, std::vector<std::string>> lists;  // key -> items
  std::map<std::string, bool> flags;                      // bool fields given as bare flags
  bool no_prefix_caching = false;
  bool no_async_scheduling = false;
  bool no_chunked_prefill = false;
  // Keys a command handles itself (e.g. sweep's list-valued --request-rate): not registered.
  std::vector<std::string> skip;
};

// Registers --config and one option per config field on `cmd`. `o` must outlive parsing.
void add_run_options(CLI::App& cmd, RunOptions& o);

// The config after parsing: defaults, then the --config file, then the flags given.
// Throws ConfigError naming the file or flag on bad input.
sim::SimulationConfig build_config(const CLI::App& cmd, const RunOptions& o);

// Run fields that describe the load or the report, not the deployment (request_rate, seed, ...):
// measured files give the load, so validate and calibrate do not take them.
bool is_load_key(const std::string& key);

// validate and calibrate: registers --config and the deployment and engine flags (not the load
// flags, nor the keys in `skip`, which the command handles itself).
void add_deployment_options(CLI::App& cmd, RunOptions& o, const std::vector<std::string>& skip);

// The deployment settings given on the command line (and in --config), as config keys.
nlohmann::json deployment_overrides(const CLI::App& cmd, const RunOptions& o);

// The files a run reads: the --config file, --dataset-path, --trace, and the model, GPU,
// calibration and inter-node link when they are paths rather than catalog names. An output path
// must be none of them.
std::vector<std::string> run_input_paths(const RunOptions& o, const sim::SimulationConfig& c);

// check_output_path (sim/base/output_file.h) for a command's output `path` given by `flag`, and,
// when `with_csv`, for the CSV beside it; nothing when `path` is empty. Call before any work.
void check_outputs(const std::string& flag, const std::string& path, bool with_csv,
                   const std::vector<std::string>& inputs);

// The CSV written beside a JSON output: "x.json" -> "x.csv", anything else + ".csv".
std::string csv_path_for(const std::string& json_path);

// "--max-num-seqs" for "max_num_seqs".
std::string flag_of(const std::string& key);

// The "date" written into result files: fixed for reproducibility ($SOURCE_DATE_EPOCH, else the
// epoch), formatted YYYYmmdd-HHMMSS as vLLM does.
std::string result_date();

}  // namespace servesim::app

#endif  // SERVESIM_SIM_APP_RUN_OPTIONS_H_
