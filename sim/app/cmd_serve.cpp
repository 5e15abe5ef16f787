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
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "sim/app/command.h"
#include "sim/app/run_config.h"
#include "sim/app/run_options.h"
#include "sim/base/error.h"
#include "sim/cluster/simulation.h"
#include "sim/serve/fault_flags.h"
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
                                "moe_routing_skew",
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
    cmd_->add_option(
        "--max-waiting-requests", options_.max_waiting_requests,
        "refuse requests (--max-waiting-status) while this many wait; 0 = no limit [0]");
    cmd_->add_option("--max-waiting-status", options_.max_waiting_status,
                     "the status of --max-waiting-requests' refusals: 503 (overloaded) or 429 "
                     "(a gateway's rate limit) [503]");
    cmd_->add_option("--chars-per-token", options_.chars_per_token,
                     "prompt tokens of text prompts: ceil(characters / this) [4]");
    cmd_->add_option("--threads", options_.threads,
                     "HTTP worker threads: the most connections open at once [1024]");
    cmd_->add_option("--shutdown-mode", options_.shutdown_mode,
                     "on SIGTERM/SIGINT: immediate (cut open streams) or drain (503 to new "
                     "requests, finish those in flight), as vLLM's flag [immediate]");
    cmd_->add_option("--shutdown-drain-timeout", options_.shutdown_drain_timeout,
                     "drain: wall seconds to wait for the requests in flight; 0 = no limit [0]");
    cmd_->add_option("--fail-rate", options_.fail_rate,
                     "fault injection: the fraction of requests answered with an empty HTTP 500, "
                     "as vLLM answers an engine error; chosen by --seed [0]");
    cmd_->add_option("--replica-outage", outages_,
                     "fault injection: replica R (0-based) crashes at T1 and comes back empty at "
                     "T2, simulated seconds: R@T1-T2; repeatable");
    cmd_->add_option("--latency-spike", spikes_,
                     "fault injection: steps that start in [T1, T2) simulated seconds last F times "
                     "longer: T1-T2:xF; repeatable");
    cmd_->add_option("--seed", options_.seed,
                     "seed of --fail-rate's choice of requests (with their arrival order) [0]");
    cmd_->add_flag("--port-per-replica", port_per_replica_,
                   "each of the --num-replicas replicas on its own port, --port onwards (for an "
                   "external gateway); default: one port, servesim's router");
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
    // --port-per-replica: N vLLM instances of one replica each, on ports P..P+N-1 (an
    // external gateway balances them); otherwise one port with servesim's router.
    const int servers_n = port_per_replica_ ? config.num_replicas : 1;
    sim::SimulationConfig one = config;
    if (port_per_replica_) {
      if (options_.port != 0 && options_.port + servers_n - 1 > 65535) {
        throw ConfigError("--port: " + std::to_string(options_.port) + " + --num-replicas " +
                          std::to_string(servers_n) +
                          " passes 65535 (--port-per-replica takes ports P..P+N-1)");
      }
      one.num_replicas = 1;
    }
    const sim::PreparedDeployment prepared = sim::prepare_deployment(one);
    for (const std::string& text : spikes_) {
      options_.latency_spikes.push_back(serve::parse_latency_spike(text));
    }
    std::vector<sim::ReplicaOutages::Outage> outages;
    for (const std::string& text : outages_) {
      outages.push_back(serve::parse_replica_outage(text));
      if (outages.back().replica >= config.num_replicas) {
        throw ConfigError("--replica-outage: \"" + text + "\" names replica " +
                          std::to_string(outages.back().replica) + "; expected 0.." +
                          std::to_string(config.num_replicas - 1) + " (--num-replicas " +
                          std::to_string(config.num_replicas) + ")");
      }
    }

    // SIGINT and SIGTERM stop the servers; blocked here so that every thread started after
    // inherits the mask and only the watcher receives them.
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals, nullptr);
    std::vector<std::unique_ptr<serve::Server>> servers;
    for (int i = 0; i < servers_n; ++i) {
      serve::ServeOptions o = options_;
      if (o.port != 0) o.port += i;
      // One port per replica: replica i is replica 0 of port i's engine.
      for (sim::ReplicaOutages::Outage outage : outages) {
        if (port_per_replica_ && outage.replica != i) continue;
        if (port_per_replica_) outage.replica = 0;
        o.replica_outages.push_back(outage);
      }
      servers.push_back(std::make_unique<serve::Server>(one, prepared, o));
      servers.back()->bind();
    }
    std::thread watcher([&servers, signals] {
      for (int i = 0; i < 2; ++i) {  // a drain, then a second signal cuts it short
        int sig = 0;
        sigwait(&signals, &sig);
        for (auto& s : servers) s->on_signal();
      }
    });
    watcher.detach();
    out << "servesim serve: "
        << (options_.served_model.empty() ? config.model : options_.served_model) << " on "
        << prepared.deployment.gpu.name << " x" << config.num_replicas << " replica(s)"
        << (port_per_replica_ ? ", one per port" : "") << ", KV cache "
        << prepared.memory.num_blocks << " blocks, max_model_len " << prepared.engine.max_model_len
        << ", time scale " << options_.time_scale << ", listening on ";
    for (int i = 0; i < servers_n; ++i) {
      out << (i > 0 ? ", " : "") << "http://" << options_.host << ":" << servers[i]->port();
    }
    out << std::endl;
    std::vector<std::thread> others;
    for (int i = 1; i < servers_n; ++i) {
      others.emplace_back([&servers, i] { servers[static_cast<size_t>(i)]->run(); });
    }
    servers[0]->run();
    for (std::thread& t : others) t.join();
    out << "servesim serve: stopped" << std::endl;
    return 0;
  }

 private:
  CLI::App* cmd_ = nullptr;
  RunOptions opts_;
  serve::ServeOptions options_;
  bool port_per_replica_ = false;
  std::vector<std::string> outages_;
  std::vector<std::string> spikes_;
};

}  // namespace

std::unique_ptr<Command> make_serve_command() { return std::make_unique<ServeCommand>(); }

}  // namespace servesim::app
