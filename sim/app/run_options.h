// Command-line options shared by every command that describes a run (simulate, sweep, plan, ...):
// --config FILE plus one option per SimulationConfig field (run_config.h), with vLLM's names.
#ifndef SERVESIM_SIM_APP_RUN_OPTIONS_H_
#define SERVESIM_SIM_APP_RUN_OPTIONS_H_

#include <cstdint>
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

// The --config file `path`, checked as an input named by --config (register_inputs) and parsed.
nlohmann::json read_config_file(const std::string& path);

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

// A file a command reads, with the flag that names it and the size it may have (0 = no limit:
// read line by line).
struct InputFile {
  std::string flag;
  std::string path;
  uint64_t max_bytes = 0;
};

// The files the config keys in `keys` (a JSON object of config keys: config_to_json, or a
// deployment's overrides) make a run read: the model, GPU and inter-node link when they are paths
// rather than catalog names, the calibration and kernel table unless none, the --workload file and
// the length files it names (settings files), --dataset-path and --trace (data files).
std::vector<InputFile> config_inputs(const nlohmann::json& keys);

// The files a run reads: the --config file, then config_inputs of the run's settings.
std::vector<InputFile> run_inputs(const RunOptions& o, const sim::SimulationConfig& c);

// The measured-run files of validate and calibrate (--measured; a folder's regular files for an
// LLMServingSim run folder) and the regular files of every --sidecars folder.
std::vector<InputFile> measured_inputs(const std::vector<std::string>& measured,
                                       const std::vector<std::string>& sidecar_dirs);

// Refuses (ConfigError naming `flag`) an output folder `dir` that exists and is not a folder;
// nothing when `dir` is empty. The files written into it are checked when written.
void check_output_folder(const std::string& flag, const std::string& dir);

// check_input_file (sim/base/input_files.h) for each: refuses, naming the flag, the file and the
// limit, a directory, FIFO, device or a file above its size limit; registers each as an input of
// the command, so that no output can replace it. Call it before any work and before the outputs
// are checked.
void register_inputs(const std::vector<InputFile>& inputs);

// check_output_path (sim/base/output_file.h) for a command's output `path` given by `flag`, and,
// when `with_csv`, for the CSV beside it; nothing when `path` is empty. Call it before any work,
// after register_inputs: an output may be none of the registered inputs.
void check_outputs(const std::string& flag, const std::string& path, bool with_csv);

// Bounds of the study flags (docs/cli.md): --jobs 0 (all cores) .. kMaxJobs threads; --seeds
// `min` .. kMaxSeeds. ConfigError naming the flag, the value and the bounds.
inline constexpr int kMaxJobs = 1024;
inline constexpr int kMaxSeeds = 1000;
void check_jobs(int jobs);
void check_seeds(int seeds, int min);

// The CSV written beside a JSON output: "x.json" -> "x.csv", anything else + ".csv".
std::string csv_path_for(const std::string& json_path);

// "--max-num-seqs" for "max_num_seqs".
std::string flag_of(const std::string& key);

// The "date" written into result files: fixed for reproducibility ($SOURCE_DATE_EPOCH, else the
// epoch), formatted YYYYmmdd-HHMMSS as vLLM does.
std::string result_date();

// The date in default result file names: $SOURCE_DATE_EPOCH (UTC) when set, else the wall clock
// in local time, as vLLM's datetime.now().strftime("%Y%m%d-%H%M%S") (vllm/benchmarks/serve.py),
// so that runs on different days or minutes do not share a name.
std::string result_file_date();

}  // namespace servesim::app

#endif  // SERVESIM_SIM_APP_RUN_OPTIONS_H_
