// `servesim serve`: vLLM's OpenAI-compatible server whose every token is timed by the simulated
// deployment (sim/serve/server.h). Takes the deployment and engine flags of `simulate`, with
// --num-replicas and --router; the load comes from its HTTP clients.
//
//   servesim serve --model llama-3.1-8b --gpu h100-sxm --port 8000
//   servesim serve --model llama-3.1-70b --gpu h100-sxm -tp 4 --time-scale 10 --port 0
#include <pthread.h>
#include <csignal>

#include <algorithm>
#include <iostream>
#include <thread>

#include "sim/app/command.h"
#include "sim/app/run_config.h"
#include "sim/app/run_options.h"
#include "sim/base/error.h"
#include "sim/cluster/simulation.h"
#include "sim/serve/server.h"

namespace servesim::app {
namespace {

// The config keys serve takes: the deployment, the engine, and the cluster in front of it.
bool is_serve_key(const std::string& key) {
  static const char* kKeys[] = {"model",
                                "gpu",
                                "tensor_parallel_size",
                                "pipeline_parallel_size",
                                "data_parallel_size",
                                "enable_expert_parallel",
                                "gpus_per_node",
                                "inter_node_link",
                                "quantization",
                                "kv_cache_dtype",
                                "dtype",
                                "enforce_eager",
                                "ideal",
                                "num_replicas",
                                "router",
                                "calibration",
                                "kernel_table",
                                "vllm_version",
                                "max_num_seqs",
                                "max_num_batched_tokens",
                                "block_size",
                                "gpu_memory_utilization",
                                "enable_prefix_caching",
                                "long_prefill_token_threshold",
                                "max_model_len",
                                "scheduling_policy",
                                "num_gpu_blocks_override",
                                "disable_hybrid_kv_cache_manager",
                                "num_scheduler_steps",
                                "async_scheduling",
                                "enable_chunked_prefill"};
  return std::find_if(std::begin(kKeys), std::end(kKeys),
                      [&](const char* k) { return key == k; }) != std::end(kKeys);
}

class ServeCommand : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    cmd_ = app.add_subcommand(
        "serve",
        "an OpenAI-compatible vLLM stand-in on HTTP whose tokens are timed by the simulated "
        "deployment (docs/serve.md)");
    for (const ConfigField& f : config_fields()) {
      if (!is_serve_key(f.key)) opts_.skip.push_back(f.key);
    }
    cmd_->add_option("--host", options_.host, "address to listen on [127.0.0.1]");
    cmd_->add_option("--port", options_.port, "port to listen on; 0 = any free port [8000]");
    cmd_->add_option("--time-scale", options_.time_scale,
                     "simulated seconds per wall second (10 = ten times faster) [1]");
    cmd_->add_option("--served-model-name", options_.served_model,
                     "the model name clients send [--model as given]");
    cmd_->add_option("--max-waiting-requests", options_.max_waiting_requests,
                     "refuse requests with 503 while this many wait; 0 = no limit [0]");
    cmd_->add_option("--chars-per-token", options_.chars_per_token,
                     "prompt tokens of text prompts: ceil(characters / this) [4]");
    cmd_->add_option("--threads", options_.threads,
                     "HTTP worker threads: the most connections open at once [1024]");
    add_run_options(*cmd_, opts_);
    cmd_->footer(
        "vLLM's flags that change nothing simulated (--tokenizer, --trust-remote-code, --dtype\n"
        "auto|bfloat16|float16, ...) are accepted and ignored; those that change serving in ways\n"
        "not modelled (--speculative-model, --enable-lora, ...) are refused by name. docs/serve.md\n"
        "says what is real (timing, queueing, KV pressure, metrics) and what is not (the text).");
    return cmd_;
  }

  int run(std::ostream& out, std::ostream& /*err*/) override {
    if (!opts_.config_file.empty()) {
      const nlohmann::json file = read_config_file(opts_.config_file);
      for (const auto& [key, value] : file.items()) {
        if (!is_serve_key(key)) {
          throw ConfigError(opts_.config_file + ": \"" + key +
                            "\" describes the load or the report; serve takes its load from "
                            "its HTTP clients (deployment and engine keys only)");
        }
      }
    }
    sim::SimulationConfig config = build_config(*cmd_, opts_);
    config.track_ideal_busy = false;  // nothing reports it: half the cost-model calls
    register_inputs(run_inputs(opts_, config));
    const sim::PreparedDeployment prepared = sim::prepare_deployment(config);

    // SIGINT and SIGTERM stop the server; blocked here so that every thread started after
    // inherits the mask and only the watcher receives them.
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    serve::Server server(config, prepared, options_);
    server.bind();
    std::thread watcher([&server, signals] {
      int sig = 0;
      sigwait(&signals, &sig);
      server.stop();
    });
    watcher.detach();
    out << "servesim serve: "
        << (options_.served_model.empty() ? config.model : options_.served_model) << " on "
        << prepared.deployment.gpu.name << " x" << config.num_replicas << " replica(s), KV cache "
        << prepared.memory.num_blocks << " blocks, max_model_len " << prepared.engine.max_model_len
        << ", time scale " << options_.time_scale << ", listening on http://" << options_.host
        << ":" << server.port() << std::endl;
    server.run();
    out << "servesim serve: stopped" << std::endl;
    return 0;
  }

 private:
  CLI::App* cmd_ = nullptr;
  RunOptions opts_;
  serve::ServeOptions options_;
};

}  // namespace

std::unique_ptr<Command> make_serve_command() { return std::make_unique<ServeCommand>(); }

}  // namespace servesim::app
