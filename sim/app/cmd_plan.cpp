// `servesim plan`: the cheapest deployment that meets every SLO at a target load. The study is
// sim/planning/plan.h; this file turns flags into the candidate lists (GPU × TP × --vary values,
// and with --pd-ratios the aggregated and P/D units of each: sim/planning/plan_candidates.h) and
// writes the ranked table, the answer's vLLM commands, the JSON and the CSV.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <set>
#include <sstream>

#include "hardware/gpu_spec.h"
#include "models/model_spec.h"
#include "sim/app/command.h"
#include "sim/app/run_config.h"
#include "sim/app/run_options.h"
#include "sim/app/study.h"
#include "sim/app/vary_settings.h"
#include "sim/app/vllm_commands.h"
#include "sim/base/error.h"
#include "sim/base/exit_signals.h"
#include "sim/base/json_file.h"
#include "sim/base/number_format.h"
#include "sim/base/number_text.h"
#include "sim/base/output_file.h"
#include "sim/cluster/pd_simulation.h"
#include "sim/metrics/result_writer.h"
#include "sim/planning/pd_search.h"
#include "sim/planning/plan.h"
#include "sim/planning/plan_candidates.h"
#include "sim/planning/plan_report.h"
#include "sim/planning/progress.h"
#include "sim/planning/vary.h"
#include "workloads/workload_classes.h"

namespace servesim::app {
namespace {

using nlohmann::json;

// Requests per capacity probe unless --num-prompts or the --config file sets it: the P99 of 2000
// requests is their 20th-largest value, stable to a few percent over 3 seeds (see
// docs/capacity-planning.md); the same default as sweep.
constexpr int64_t kPlanNumPrompts = 2000;

// --headroom unless given: clusters are verified at 1.25 × the target, so at the target each
// replica runs at most 80% of the rate at which it still meets the SLOs, and at most 80% of its
// saturation throughput (the count is >= 1.25 × target / saturation): 20% below the stability
// bound, where a real cluster's small differences from the model (docs/validation.md) do not
// tip it into unbounded queueing. docs/capacity-planning.md, "Headroom".
constexpr double kDefaultHeadroom = 0.25;

std::vector<std::string> split_items(const std::vector<std::string>& raw) {
  std::vector<std::string> out;
  for (const std::string& r : raw) {
    std::string item;
    for (char c : r + ",") {
      if (c == ',' || c == ' ') {
        if (!item.empty()) out.push_back(item);
        item.clear();
      } else {
        item += c;
      }
    }
  }
  return out;
}

// plan_to_json with the answer's vLLM commands after "answer" (null when there is no answer).
nlohmann::ordered_json plan_json(const planning::PlanResult& result,
                                 const planning::PlanOptions& options, const json& echo,
                                 const json& vllm) {
  nlohmann::ordered_json j = planning::plan_to_json(result, options, echo);
  j["vllm_commands"] = vllm;
  return j;
}

double parse_double(const std::string& flag, const std::string& text, const std::string& what) {
  const std::optional<double> v = parse_finite_double(text);
  if (!v) throw ConfigError(flag + ": '" + text + "' is invalid; expected " + what);
  return *v;
}

// The TP sizes tried without --tensor-parallel-size: those of 1, 2, 4, 8 that divide the model's
// attention heads (vLLM refuses the others at start-up); a candidate that then does not fit in
// memory is skipped with the reason. A model that does not load keeps TP 1, whose candidate
// reports the load error.
std::vector<int> tp_sizes_that_divide_heads(const std::string& model, int64_t* heads) {
  try {
    *heads = models::load_model(model).num_heads;
  } catch (const ConfigError&) {
    return {1};
  }
  std::vector<int> tps;
  for (int tp : {1, 2, 4, 8}) {
    if (*heads > 0 && *heads % tp == 0) tps.push_back(tp);
  }
  if (tps.empty()) tps.push_back(1);
  return tps;
}

class PlanCommand : public Command {
 public:
  CLI::App* add_to(CLI::App& app) override {
    cmd_ = app.add_subcommand(
        "plan",
        "the cheapest deployment (GPU type x TP x replicas) that meets every SLO at a "
        "target request rate, verified on the whole cluster behind the router");
    opts_.skip = {"gpu", "tensor_parallel_size", "request_rate", "num_replicas"};
    add_run_options(*cmd_, opts_);
    cmd_->add_option("--target-qps", target_qps_, "target load in requests/s (required)")
        ->required();
    cmd_->add_option("--slo", slos_,
                     "SLO on a result-file metric, vLLM sweep notation: 'p99_ttft_ms<=500' "
                     "(also <, >=, >), or on a workload class's: 'rag/p99_ttft_ms<=2000'; "
                     "repeat for several (required unless the --workload file's classes have "
                     "SLOs)")
        ->take_all();
    cmd_->add_option("--gpu", gpus_,
                     "candidate GPUs, comma-separated catalog names or files [h100-sxm]")
        ->take_all();
    cmd_->add_option("--tensor-parallel-size", tps_,
                     "candidate tensor-parallel sizes, e.g. 2,4 [those of 1,2,4,8 that divide the "
                     "model's attention heads]")
        ->take_all();
    cmd_->add_option("--vary", vary_,
                     "KNOB=v1,v2,...: more candidates per knob value (repeat for the product), "
                     "e.g. max-num-seqs=64,256")
        ->take_all();
    cmd_->add_option("--pd-ratios", pd_ratios_,
                     "also search disaggregated prefill/decode units P:D, e.g. 1:1,1:2,2:3, next "
                     "to the aggregated candidates (each on the candidate's GPU and TP unless the "
                     "--prefill-/--decode- flags say otherwise)")
        ->take_all();
    cmd_->add_option("--headroom", headroom_,
                     "spare capacity: clusters are verified at target x (1 + headroom), so each "
                     "replica runs at most 1/(1 + headroom) of its capacity [0.25: 80%]");
    cmd_->add_option("--seeds", seeds_,
                     "independent workload seeds per probe (seed, seed+1, ...); SLOs are judged "
                     "on the mean over seeds [3]");
    cmd_->add_option("--gpu-price", prices_,
                     "override a GPU's price in USD per GPU-hour: NAME=PRICE, e.g. h100-sxm=2.5")
        ->take_all();
    cmd_->add_option("--tolerance", tolerance_,
                     "capacity bisection stops when the bracket is within this fraction of the "
                     "rate [0.01]");
    cmd_->add_option("--max-cluster-prompts", max_cluster_prompts_,
                     "requests per cluster verification run at most [10000]");
    cmd_->add_flag("--no-prune", no_prune_,
                   "verify every candidate, also those whose stability bound already costs "
                   "too much to be the answer or tie with it (pruned by default)");
    cmd_->add_option("--jobs", jobs_, "candidates simulated in parallel, 0 = all cores [0]");
    cmd_->add_option("--output", output_,
                     "write the plan JSON here, and the CSV (one row per candidate) beside it");
    study_.add_to(*cmd_);
    return cmd_;
  }

  int run(std::ostream& out, std::ostream& err) override {
    sim::SimulationConfig base = build_config(*cmd_, opts_);
    const std::vector<planning::PdRatio> ratios = pd_ratios(base);
    register_inputs(run_inputs(opts_, base));
    json file = json::object();
    if (!opts_.config_file.empty()) file = read_config_file(opts_.config_file);
    if (cmd_->count("--num-prompts") == 0 && !file.contains("num_prompts")) {
      base.workload.num_prompts = kPlanNumPrompts;
    }
    planning::PlanOptions options = plan_options(base);
    const std::vector<std::string> gpus = candidate_gpus(base);
    int64_t heads = 0;  // set when every TP size that divides the model's heads is tried
    const std::vector<int> tps = candidate_tps(base, file, &heads);
    const std::vector<planning::PlanCandidate> candidates = planning::plan_candidates(
        base, gpus, tps, planning::vary_product(vary_axes(ratios)), ratios, apply_vary_settings);
    // Every file a candidate reads is an input (a --gpu or --vary value can name one), then the
    // outputs.
    for (const planning::PlanCandidate& c : candidates)
      register_inputs(run_inputs(opts_, c.config));
    check_outputs("--output", output_, true);
    options.executor = study_.executor(jobs_);
    options.gpu_price = gpu_prices(gpus);

    // Spans the outputs too: a SIGINT/SIGTERM while they are written lets them finish.
    const DeferredExit interrupt;
    const auto t0 = std::chrono::steady_clock::now();
    planning::PlanResult result;
    {
      planning::ProgressBar bar(static_cast<int64_t>(candidates.size()), "plan",
                                planning::ProgressBar::terminal_stream(err));
      result = planning::run_plan(candidates, options, &bar, interrupt.flag());
    }
    const double wall_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    print_probes(out, base, tps, heads);
    planning::print_plan_table(out, result, options);
    const json vllm = print_answer_commands(out, result, options);
    if (!output_.empty()) write_plan(out, base, gpus, tps, ratios, result, options, vllm);
    print_summary(err, candidates.size(), result, wall_s);
    if (interrupt.interrupted()) {
      err << "servesim: " << interrupt.signal_name()
          << ": stopped; the candidates that finished are written, the others marked "
             "interrupted\n";
      return interrupt.exit_code();
    }
    return result.found() ? 0 : 3;
  }

 private:
  // "servesim: planned 24 candidates (12 pruned) with 337 simulations in 2.1 s wall on 2 threads":
  // the simulations the results rest on (deterministic), and those run when more (work on
  // candidates stopped early, or, in a merge, done by shards that could not stop them).
  void print_summary(std::ostream& err, size_t n, const planning::PlanResult& result,
                     double wall_s) const {
    int64_t pruned = 0, sims = 0;
    for (const auto& c : result.candidates) {
      pruned += c.status == planning::CandidateStatus::kPruned;
      sims += c.simulations;
    }
    const std::string run = result.simulations_run > sims
                                ? " (" + std::to_string(result.simulations_run) + " run)"
                                : "";
    err << "servesim: planned " << n << (n == 1 ? " candidate" : " candidates")
        << (pruned > 0 ? " (" + std::to_string(pruned) + " pruned)" : "") << " with " << sims
        << " simulations" << run << " in " << std::fixed << std::setprecision(2) << wall_s
        << " s wall on " << study_.workers_text(jobs_) << "\n";
  }

  // --pd-ratios, refused with the pool flags and with a node-local KV link.
  std::vector<planning::PdRatio> pd_ratios(const sim::SimulationConfig& base) const {
    std::vector<planning::PdRatio> ratios;
    if (cmd_->count("--pd-ratios") > 0) {
      ratios = planning::parse_pd_ratios("--pd-ratios", pd_ratios_);
      if (sim::pd_enabled(base)) {
        throw ConfigError(
            "--pd-ratios: the P/D units come from the ratios; expected no --prefill-replicas or "
            "--decode-replicas with it");
      }
    }
    if ((sim::pd_enabled(base) || !ratios.empty()) && base.kv_transfer_link == "nvlink") {
      throw ConfigError(
          "--kv-transfer-link nvlink: plan scales the P/D pools past one node; "
          "expected a network link (infiniband-ndr, ...)");
    }
    return ratios;
  }

  // The study's options from the flags: SLOs (with a workload file's class SLOs), seeds, jobs,
  // bisection tolerance and the cluster run's size.
  planning::PlanOptions plan_options(const sim::SimulationConfig& base) const {
    planning::PlanOptions options;
    options.target_qps = target_qps_;
    options.headroom = headroom_;
    options.slos = planning::parse_slos(slos_);
    {
      // A workload file's classes bring their own SLOs (CLASS/KEY); the plan meets them all.
      std::vector<std::string> names;
      if (!base.workload.workload_file.empty()) {
        const workloads::WorkloadClasses classes =
            workloads::load_workload_classes(base.workload.workload_file);
        names = classes.names();
        for (planning::Slo& s : planning::class_slos(classes)) options.slos.push_back(s);
      }
      planning::check_slo_classes(options.slos, names);
    }
    options.seeds = seeds_;
    check_seeds(seeds_, 1);
    options.jobs = jobs_;
    check_jobs(jobs_);
    if (!(tolerance_ > 0 && tolerance_ < 1)) {
      throw ConfigError("--tolerance: must be a fraction in (0, 1), such as 0.01");
    }
    options.rel_tol = tolerance_;
    if (max_cluster_prompts_ < 1) {
      throw ConfigError("--max-cluster-prompts: must be an integer >= 1");
    }
    options.max_cluster_prompts = max_cluster_prompts_;
    options.prune = !no_prune_;
    return options;
  }

  // --gpu's list (the run's GPU without it); every candidate GPU must exist: a typo in a list
  // (h100-sxm,foo) is an error, not a skip.
  std::vector<std::string> candidate_gpus(const sim::SimulationConfig& base) const {
    std::vector<std::string> gpus = split_items(gpus_);
    if (gpus.empty()) gpus.push_back(base.gpu);
    for (const std::string& g : gpus) {
      try {
        hardware::load_gpu(g);
      } catch (const ConfigError& e) {
        throw ConfigError(std::string("--gpu: ") + e.what());
      }
    }
    return gpus;
  }

  // --tensor-parallel-size's list; without it the --config file's TP, or else every TP size that
  // divides the model's attention heads (their count in *heads).
  std::vector<int> candidate_tps(const sim::SimulationConfig& base, const json& file,
                                 int64_t* heads) const {
    std::vector<int> tps;
    for (const std::string& t : split_items(tps_)) {
      const double v = parse_double("--tensor-parallel-size", t, "integers >= 1 such as 1,2,4,8");
      if (v < 1 || v != std::floor(v) || v > 1024) {
        throw ConfigError("--tensor-parallel-size: '" + t +
                          "' is invalid; expected integers >= 1 such as 1,2,4,8");
      }
      tps.push_back(static_cast<int>(v));
    }
    if (tps.empty() && !file.contains("tensor_parallel_size")) {
      return tp_sizes_that_divide_heads(base.model, heads);
    }
    if (tps.empty()) tps.push_back(base.tensor_parallel_size);  // the --config file's
    return tps;
  }

  // --vary's axes; the GPU and TP lists and (with --pd-ratios) the pool counts have flags of
  // their own, and the P/D pools of a plan span nodes.
  std::vector<planning::VaryAxis> vary_axes(const std::vector<planning::PdRatio>& ratios) const {
    std::vector<planning::VaryAxis> axes;
    for (const std::string& v : vary_) {
      axes.push_back(planning::parse_vary(v));
      const std::string& key = axes.back().knob.key;
      if (key == "gpu" || key == "tensor_parallel_size") {
        throw ConfigError(
            "--vary " + axes.back().knob.flag + ": plan takes candidate " +
            (key == "gpu" ? "GPUs from --gpu" : "TP sizes from --tensor-parallel-size") +
            " (a comma-separated list)");
      }
      if (!ratios.empty() && (key == "prefill_replicas" || key == "decode_replicas")) {
        throw ConfigError("--vary " + axes.back().knob.flag +
                          ": --pd-ratios sets the P/D units; list the ratios there");
      }
      if (key == "kv_transfer_link") {
        for (const std::string& t : axes.back().texts) {
          if (t == "nvlink") {
            throw ConfigError(
                "--vary kv-transfer-link=nvlink: plan scales the P/D pools past "
                "one node; expected network links (infiniband-ndr, ...)");
          }
        }
      }
    }
    return axes;
  }

  // --gpu-price NAME=PRICE, for candidate GPUs only.
  std::map<std::string, double> gpu_prices(const std::vector<std::string>& gpus) const {
    std::map<std::string, double> prices;
    std::set<std::string> names;
    for (const std::string& g : gpus) names.insert(std::filesystem::path(g).stem().string());
    for (const std::string& p : split_items(prices_)) {
      const auto eq = p.find('=');
      if (eq == std::string::npos || eq == 0) {
        throw ConfigError("--gpu-price: '" + p +
                          "' is invalid; expected NAME=PRICE such as "
                          "h100-sxm=2.5");
      }
      const std::string name = p.substr(0, eq);
      const double price =
          parse_double("--gpu-price", p.substr(eq + 1), "a price >= 0 in USD per GPU-hour");
      if (price < 0) throw ConfigError("--gpu-price: '" + p + "' is invalid; the price is < 0");
      if (names.count(name) == 0) {
        std::string list;
        for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
        throw ConfigError("--gpu-price: '" + name + "' is not a candidate GPU (" + list + ")");
      }
      prices[name] = price;
    }
    return prices;
  }

  // The probes' model and workload, and the TP sizes tried when plan chose them (heads > 0).
  static void print_probes(std::ostream& out, const sim::SimulationConfig& base,
                           const std::vector<int>& tps, int64_t heads) {
    out << "Model " << base.model << ", workload "
        << (base.workload.workload_file.empty() ? base.workload.dataset_name
                                                : "classes of " + base.workload.workload_file)
        << (base.workload.multi_turn
                ? ", " + std::to_string(base.workload.num_turns) + "-turn conversations"
                : std::string())
        << " (";
    if (base.workload.dataset_name == "trace") {
      out << "the whole trace window per probe, rescaled to the probe's rate";
    } else {
      out << base.workload.num_prompts
          << (base.workload.multi_turn ? " conversations" : " requests") << " per probe";
    }
    out << ")\n";
    if (heads > 0) {
      out << "TP sizes tried: ";
      for (size_t i = 0; i < tps.size(); ++i) out << (i ? ", " : "") << tps[i];
      out << " (those of 1, 2, 4, 8 that divide the model's " << heads
          << " attention heads; --tensor-parallel-size to choose)\n";
    }
  }

  // The answer as vLLM command lines: one replica's `vllm serve` and the `vllm bench serve`
  // that checks the deployment at the target rate. Returns them for the JSON (null when there
  // is no answer).
  static json print_answer_commands(std::ostream& out, const planning::PlanResult& result,
                                    const planning::PlanOptions& options) {
    if (!result.found()) return nullptr;
    const planning::CandidateResult& best = result.candidates.front();
    std::string serve = vllm_serve_command(best.candidate.config);
    if (sim::pd_enabled(best.candidate.config)) {
      // Two pools: each instance's vllm serve with the NIXL connector, behind a P/D proxy.
      const sim::SimulationConfig& k = best.candidate.config;
      auto pool = [&](const std::string& g, int t) {
        sim::SimulationConfig c = k;
        if (!g.empty()) c.gpu = g;
        c.tensor_parallel_size = t;
        return vllm_serve_command(c) +
               " --kv-transfer-config '{\"kv_connector\":\"NixlConnector\",\"kv_role\":"
               "\"kv_both\"}'";
      };
      serve = "prefill (" + std::to_string(k.prefill_replicas * best.replicas) +
              " instances): " + pool(k.prefill_gpu, k.prefill_tp()) + "\n  decode (" +
              std::to_string(k.decode_replicas * best.replicas) +
              " instances): " + pool(k.decode_gpu, k.decode_tp()) +
              "\n  (behind a P/D proxy that sends each request to a prefill instance with "
              "max_tokens=1, then to a decode instance; docs/deployment-modes.md)";
    }
    const BenchCommand bench = vllm_bench_command(best.candidate.config, options.target_qps,
                                                  best.cluster_prompts, options.slos);
    out << "vLLM commands for the answer. "
        << (sim::pd_enabled(best.candidate.config) ? std::string("The pools")
            : best.replicas > 1
                ? "One replica (of " + std::to_string(best.replicas) + ", behind a router)"
                : std::string("One replica"))
        << ":\n  " << serve << "\n";
    if (!bench.command.empty()) {
      out << "The benchmark that checks it at " << short_number(options.target_qps) << " req/s"
          << (best.replicas > 1 ? " (sent to the router)" : "") << ":\n  " << bench.command << "\n";
    } else {
      out << "No vllm bench serve command: " << bench.why_not << "\n";
    }
    return json{{"serve", serve},
                {"replicas", best.replicas},
                {"bench", bench.command.empty() ? json(nullptr) : json(bench.command)},
                {"bench_rate", options.target_qps},
                {"bench_why_not", bench.why_not.empty() ? json(nullptr) : json(bench.why_not)}};
  }

  // --output's JSON (the run's settings echoed, with the candidate lists) and the CSV beside it,
  // together or not at all.
  void write_plan(std::ostream& out, const sim::SimulationConfig& base,
                  const std::vector<std::string>& gpus, const std::vector<int>& tps,
                  const std::vector<planning::PdRatio>& ratios, const planning::PlanResult& result,
                  const planning::PlanOptions& options, const json& vllm) const {
    json echo = config_to_json(base);
    echo.erase("request_rate");
    echo.erase("num_replicas");
    echo["gpu"] = gpus;
    echo["tensor_parallel_size"] = tps;
    if (!ratios.empty()) {
      json pd = json::array();
      for (const planning::PdRatio& r : ratios) pd.push_back({r.prefill, r.decode});
      echo["pd_ratios"] = pd;
    }
    const std::string csv = csv_path_for(output_);
    write_files_atomically(
        {{output_, metrics::json_file_text(plan_json(result, options, echo, vllm))},
         {csv, planning::plan_to_csv(result)}});
    out << "Plan written to " << output_ << " and " << csv << "\n";
  }

  CLI::App* cmd_ = nullptr;
  RunOptions opts_;
  double target_qps_ = 0;
  std::vector<std::string> slos_;
  std::vector<std::string> gpus_;
  std::vector<std::string> tps_;
  std::vector<std::string> vary_;
  std::vector<std::string> pd_ratios_;
  std::vector<std::string> prices_;
  double headroom_ = kDefaultHeadroom;
  int seeds_ = 3;
  double tolerance_ = 0.01;
  int64_t max_cluster_prompts_ = 10000;
  int jobs_ = 0;
  bool no_prune_ = false;
  StudyFlags study_;
  std::string output_;
};

}  // namespace

std::unique_ptr<Command> make_plan_command() { return std::make_unique<PlanCommand>(); }

}  // namespace servesim::app
