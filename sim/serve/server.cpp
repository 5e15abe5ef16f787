#include "sim/serve/server.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <sstream>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <httplib.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "sim/base/error.h"
#include "sim/cluster/live_engine.h"
#include "sim/serve/client_socket.h"
#include "sim/serve/openai_api.h"
#include "sim/serve/prometheus.h"
#include "sim/serve/worker_pool.h"

namespace servesim::serve {
namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

// A number as a user typed it (0.5, 1e+07), not std::to_string's 0.500000.
std::string text_of(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

// What a proxy in front of a crashed vLLM answers (Envoy's bodies, text/plain, status 503): a
// request that comes while no replica is up, and one whose replica died before its answer.
constexpr const char* kNoHealthyUpstream = "no healthy upstream";
constexpr const char* kUpstreamReset =
    "upstream connect error or disconnect/reset before headers. reset reason: connection "
    "termination";
// The listen backlog: uvicorn's default (uvicorn/config.py, Config(backlog=2048)), which vLLM's
// API server runs under, or --threads when larger, so a burst of connects up to the thread budget
// queues instead of being dropped (cpp-httplib 0.11 listens with 5: a burst of a few hundred
// connects overflowed it, TcpExtListenOverflows, and waited for SYN retransmissions, 1 s, 3 s,
// 7 s...). The kernel caps it at net.core.somaxconn.
constexpr int kListenBacklog = 2048;
// How long the kernel holds a connection whose request has not come (TCP_DEFER_ACCEPT) before
// handing it over anyway: cpp-httplib's own wait for a request is 5 s
// (CPPHTTPLIB_KEEPALIVE_TIMEOUT_SECOND), as uvicorn's timeout_keep_alive under vLLM.
constexpr int kDeferAcceptSeconds = 5;
// File descriptors beyond one per connection: the listening socket, stdio, /proc reads.
constexpr rlim_t kSpareDescriptors = 64;

// Connections the servers of this process may hold together (--port-per-replica: one server
// per port, each with its --threads).
std::mutex descriptor_mu;
rlim_t descriptor_connections = 0;

// Each open connection is a descriptor: raise the soft limit to the connections of every server
// plus a margin, or refuse a budget the hard limit cannot hold.
void reserve_descriptors(int threads) {
  std::lock_guard<std::mutex> lock(descriptor_mu);
  const rlim_t connections = descriptor_connections + static_cast<rlim_t>(threads);
  const rlim_t need = connections + kSpareDescriptors;
  const std::string what = "--threads: " + std::to_string(connections) + " connections" +
                           (connections == static_cast<rlim_t>(threads)
                                ? ""
                                : " (" + std::to_string(threads) + " on each port)") +
                           " need " + std::to_string(need) + " file descriptors";
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY && lim.rlim_cur < need) {
    if (lim.rlim_max != RLIM_INFINITY && lim.rlim_max < need) {
      throw ConfigError(what + "; this process may open at most " + std::to_string(lim.rlim_max) +
                        " (ulimit -Hn): lower --threads or raise the hard limit");
    }
    lim.rlim_cur = need;
    if (setrlimit(RLIMIT_NOFILE, &lim) != 0) {
      throw ConfigError(what + "; raising ulimit -n failed");
    }
  }
  descriptor_connections = connections;
}

void release_descriptors(int threads) {
  std::lock_guard<std::mutex> lock(descriptor_mu);
  descriptor_connections -= static_cast<rlim_t>(threads);
}

// How often a non-streaming handler looks whether its client is still connected (wall time).
constexpr auto kClientCheck = std::chrono::milliseconds(50);

void send_proxy_503(httplib::Response& res, const char* body) {
  res.status = 503;
  res.set_content(body, "text/plain");
}

void send_error(httplib::Response& res, int status, const std::string& type,
                const std::string& message) {
  res.status = status;
  res.set_content(error_body(status, type, message).dump(), "application/json");
}

// A uniform draw in [0, 1) for request number n under `seed` (splitmix64's finaliser: every
// (seed, n) pair an independent-looking 64-bit value; the top 53 bits make the double).
double unit_draw(uint64_t seed, uint64_t n) {
  uint64_t z = seed + (n + 1) * 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

}  // namespace

struct Server::Impl {
  Impl(const sim::SimulationConfig& config, const sim::PreparedDeployment& prepared,
       const ServeOptions& o)
      : options(o),
        engine(config, prepared),
        ttft(ttft_buckets()),
        itl(itl_buckets()),
        e2e(request_latency_buckets()),
        lateness({0.00001, 0.00002, 0.00005, 0.0001, 0.00015, 0.0002, 0.0003, 0.0004,
                  0.0005,  0.00075, 0.001,   0.0015, 0.002,   0.003,  0.005,  0.01,
                  0.025,   0.05,    0.1,     0.25,   0.5,     1.0}) {
    limits.served_model = o.served_model.empty() ? config.model : o.served_model;
    limits.max_model_len = prepared.engine.max_model_len;
    limits.chars_per_token = o.chars_per_token;
    vllm_version = prepared.engine.vllm_version;
    labels = "engine=\"0\",model_name=\"" + limits.served_model + "\"";
    offset = engine.client_offset();
    if (!o.latency_spikes.empty()) engine.set_latency_spikes(sim::LatencySpikes(o.latency_spikes));
    for (const sim::ReplicaOutages::Outage& outage : o.replica_outages) {
      engine.schedule_outage(outage);
    }
  }

  // --- the clock ---
  SimTime sim_now() const {
    const double wall_s = std::chrono::duration<double>(Clock::now() - start).count();
    return SimTime::from_ns(static_cast<int64_t>(wall_s * options.time_scale * 1e9));
  }
  Clock::time_point wall_of(SimTime t) const {
    if (t == SimTime::max()) return Clock::time_point::max();
    return start + std::chrono::duration_cast<Clock::duration>(
                       std::chrono::duration<double>(t.seconds() / options.time_scale));
  }

  // The engine thread: advance to the present, account finished requests, wake the streams,
  // sleep until the next event or a new request.
  void engine_loop() {
    std::unique_lock<std::mutex> lock(mu);
    while (!stopping) {
      const SimTime target = std::max(sim_now(), engine.now());
      engine.advance_to(target);
      account_finished();
      tokens_cv.notify_all();
      wake_streams();
      const Clock::time_point wake = wall_of(engine.next_event_time());
      submitted = false;
      engine_cv.wait_until(lock, std::min(wake, Clock::now() + std::chrono::seconds(1)),
                           [&] { return stopping || submitted; });
    }
    tokens_cv.notify_all();
    wake_streams();
  }

  // Wakes the streams waiting for a token that now have one, finished, or must stop (called
  // with mu held). Only those: a stream whose request waits in the engine's queue sleeps
  // through the steps (a notify_all per step woke every held stream, thousands of threads
  // made runnable per step for the ~max_num_seqs that had a token).
  void wake_streams() {
    for (const auto& [id, wait] : stream_waits) {
      wake_scratch.clear();
      if (!stopping && !engine.finished(id)) engine.token_times(id, wait->sent, &wake_scratch);
      if (stopping || engine.finished(id) || !wake_scratch.empty()) wait->cv.notify_one();
    }
  }

  // Histograms and totals of the requests that finished (called with mu held).
  void account_finished() {
    size_t live = 0;
    std::vector<SimTime> times;
    for (int64_t id : active) {
      if (!engine.finished(id)) {
        active[live++] = id;
        continue;
      }
      const metrics::RequestRecord& rec = engine.record(id);
      if (!rec.completed) {
        // Aborted: the tokens it got were counted as produced (vLLM counts them per step); it
        // is not a success, and vLLM records no latency of a request its client aborted. Cut by
        // a crash: only its tokens up to the crash were produced for a client.
        times.clear();
        engine.token_times(id, 0, &times);
        const SimTime cut = engine.cut_time(id);
        while (!times.empty() && times.back() > cut) times.pop_back();
        if (!times.empty()) aborted_prompt_tokens += rec.prompt_tokens;
        aborted_output_tokens += static_cast<int64_t>(times.size());
        side_done(id);
        continue;
      }
      ++completed;
      completed_prompt_tokens += rec.prompt_tokens;
      completed_output_tokens += rec.output_tokens;
      ttft.observe((rec.first_token + offset - rec.arrival).seconds());
      e2e.observe((rec.last_token + offset - rec.arrival).seconds());
      times.clear();
      engine.token_times(id, 0, &times);
      for (size_t k = 1; k < times.size(); ++k) itl.observe((times[k] - times[k - 1]).seconds());
      side_done(id);
    }
    active.resize(live);
  }

  std::string metrics_text() {
    std::string out;
    std::lock_guard<std::mutex> lock(mu);
    // Tokens of unfinished requests count as they are produced, as vLLM counts them per step.
    int64_t prompt = completed_prompt_tokens + aborted_prompt_tokens;
    int64_t generated = completed_output_tokens + aborted_output_tokens;
    std::vector<SimTime> times;
    for (int64_t id : active) {
      times.clear();
      engine.token_times(id, 0, &times);
      if (!times.empty()) prompt += engine.record(id).prompt_tokens;
      generated += static_cast<int64_t>(times.size());
    }
    const double total_blocks = static_cast<double>(std::max<int64_t>(1, engine.total_kv_blocks()));
    render_gauge(out, "vllm:num_requests_running", "Number of requests in model execution batches.",
                 labels, static_cast<double>(engine.num_running()));
    render_gauge(out, "vllm:num_requests_waiting", "Number of requests waiting to be processed.",
                 labels, static_cast<double>(engine.num_waiting()));
    render_gauge(out, "vllm:kv_cache_usage_perc", "KV-cache usage. 1 means 100 percent usage.",
                 labels, static_cast<double>(engine.used_kv_blocks()) / total_blocks);
    render_counter(out, "vllm:prefix_cache_queries",
                   "Prefix cache queries, in terms of number of queried tokens.", labels,
                   static_cast<double>(engine.prefix_queried_tokens()));
    render_counter(out, "vllm:prefix_cache_hits",
                   "Prefix cache hits, in terms of number of cached tokens.", labels,
                   static_cast<double>(engine.prefix_hit_tokens()));
    render_counter(out, "vllm:num_preemptions", "Cumulative number of preemption from the engine.",
                   labels, static_cast<double>(engine.preemptions()));
    render_counter(out, "vllm:prompt_tokens", "Number of prefill tokens processed.", labels,
                   static_cast<double>(prompt));
    render_counter(out, "vllm:generation_tokens", "Number of generation tokens processed.", labels,
                   static_cast<double>(generated));
    // One series per vLLM FinishReason. A request whose client went away is aborted in the
    // engine, but vLLM's OutputProcessor.abort_requests drops its state without counting it, so
    // "abort" stays 0 here as there (servesim:client_disconnects counts them).
    render_counter(out, "vllm:request_success", "Count of successfully processed requests.",
                   labels + ",finished_reason=\"stop\"", 0.0);
    out += "vllm:request_success_total{" + labels + ",finished_reason=\"length\"} " +
           prometheus_number(static_cast<double>(completed)) + "\n";
    out += "vllm:request_success_total{" + labels + ",finished_reason=\"abort\"} 0\n";
    ttft.render(out, "vllm:time_to_first_token_seconds",
                "Histogram of time to first token in seconds.", labels);
    itl.render(out, "vllm:inter_token_latency_seconds",
               "Histogram of inter-token latency in seconds.", labels);
    e2e.render(out, "vllm:e2e_request_latency_seconds",
               "Histogram of e2e request latency in seconds.", labels);
    // What the engine holds (bounded under a flood: LiveEngine::release).
    render_gauge(out, "servesim:engine_retained_requests",
                 "Request records the simulated engine holds.", labels,
                 static_cast<double>(engine.retained_records()));
    render_gauge(out, "servesim:engine_retained_steps",
                 "Step end times the simulated engine holds.", labels,
                 static_cast<double>(engine.retained_steps()));
    {
      std::lock_guard<std::mutex> s(stats_mu);
      lateness.render(out, "servesim:token_send_lateness_seconds",
                      "Wall seconds from a token's due time to its send.", labels);
      render_counter(out, "servesim:client_disconnects",
                     "Streams whose client went away before the end.", labels,
                     static_cast<double>(disconnects));
      render_counter(out, "servesim:rejected_requests",
                     "Requests refused because --max-waiting-requests requests were waiting.",
                     labels, static_cast<double>(rejected));
      render_counter(out, "servesim:injected_failures", "Requests failed by --fail-rate.", labels,
                     static_cast<double>(injected_failures));
      render_counter(out, "servesim:outage_failures",
                     "Requests answered 503 or cut by a --replica-outage.", labels,
                     static_cast<double>(outage_failures));
    }
    return out;
  }

  // Waits for the time a token is due and records how late it goes out.
  void send_at(Clock::time_point due) {
    std::this_thread::sleep_until(due);
    const double late = std::chrono::duration<double>(Clock::now() - due).count();
    std::lock_guard<std::mutex> s(stats_mu);
    lateness.observe(std::max(0.0, late));
  }

  void handle(Endpoint endpoint, const httplib::Request& req, httplib::Response& res) {
    CompletionRequest r;
    try {
      r = parse_request(endpoint, req.body, limits);
    } catch (const ApiError& e) {
      send_error(res, e.status(), e.type(), e.what());
      return;
    }
    int64_t id = 0;
    {
      std::lock_guard<std::mutex> lock(mu);
      if (stopping) {
        send_error(res, 503, "ServiceUnavailableError", "the server is shutting down");
        return;
      }
      if (options.max_waiting_requests > 0) {
        // The requests received before this one count even when the engine thread has not yet
        // run their arrival (a flood): the engine is brought to the present first.
        engine.advance_to(std::max(sim_now(), engine.now()));
        tokens_cv.notify_all();
        wake_streams();
        if (engine.num_waiting() >= options.max_waiting_requests) {
          std::lock_guard<std::mutex> s(stats_mu);
          ++rejected;
          const bool rate_limit = options.max_waiting_status == 429;
          send_error(res, options.max_waiting_status,
                     rate_limit ? "RateLimitError" : "ServiceUnavailableError",
                     std::to_string(engine.num_waiting()) +
                         " requests are waiting (--max-waiting-requests " +
                         std::to_string(options.max_waiting_requests) + "); retry later");
          return;
        }
      }
      if (options.fail_rate > 0 && unit_draw(options.seed, received++) < options.fail_rate) {
        std::lock_guard<std::mutex> s(stats_mu);
        ++injected_failures;
        res.status = 500;  // --fail-rate: vLLM's answer to an engine error, an empty 500
        return;
      }
      id = engine.submit(std::max(sim_now(), engine.now()), r.prompt_tokens, r.max_tokens);
      active.push_back(id);
      submitted = true;
      ++open_requests;  // until its answer is written (request_done)
    }
    engine_cv.notify_one();
    if (!options.replica_outages.empty()) {
      // Routed, or refused because no replica is up, before any header is written: a proxy
      // with no upstream answers 503 at once.
      bool refused = false;
      {
        std::unique_lock<std::mutex> lock(mu);
        tokens_cv.wait(lock, [&] {
          return stopping || engine.finished(id) ||
                 engine.record(id).replica != sim::LiveEngine::kNotArrived;
        });
        refused = engine.finished(id) && engine.record(id).failed;
      }
      if (refused) {
        count_outage_failure();
        request_done(id);
        send_proxy_503(res, kNoHealthyUpstream);
        return;
      }
    }
    char hex[32];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(id));
    ResponseIds ids{std::string(endpoint == Endpoint::kChat ? "chatcmpl-" : "cmpl-") + hex,
                    static_cast<int64_t>(std::time(nullptr)), limits.served_model};
    if (!r.stream) {
      SimTime last;
      {
        // Waits for the answer, looking every kClientCheck whether the client is still there
        // (ClientSocket): one that went away is aborted as a stream's is.
        ClientSocket client(req.local_addr, req.local_port, req.remote_addr, req.remote_port);
        std::unique_lock<std::mutex> lock(mu);
        bool gone = false;
        while (!tokens_cv.wait_until(lock, Clock::now() + kClientCheck,
                                     [&] { return stopping || engine.finished(id); })) {
          lock.unlock();
          gone = client.closed();
          lock.lock();
          if (gone) break;
        }
        if (gone && !engine.finished(id)) {
          engine.abort(id);
          submitted = true;  // the engine thread applies it now
          lock.unlock();
          engine_cv.notify_one();
          {
            std::lock_guard<std::mutex> s(stats_mu);
            ++disconnects;
          }
          request_done(id);
          return;  // nobody reads the answer
        }
        if (!engine.finished(id)) {
          lock.unlock();
          request_done(id);
          send_error(res, 503, "ServiceUnavailableError", "the server is shutting down");
          return;
        }
        if (engine.record(id).failed) {  // its replica crashed (--replica-outage)
          lock.unlock();
          count_outage_failure();
          request_done(id);
          send_proxy_503(res, kUpstreamReset);
          return;
        }
        last = engine.record(id).last_token;
      }
      send_at(wall_of(last + offset));
      res.set_content(full_response(endpoint, ids, r.prompt_tokens, r.max_tokens).dump(),
                      "application/json");
      request_done(id);
      return;
    }
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider(
        "text/event-stream",
        [this, id, r, ids](size_t, httplib::DataSink& sink) { return stream(id, r, ids, sink); },
        [this, id](bool) { request_done(id); });  // however the stream ended
  }

  void count_outage_failure() {
    std::lock_guard<std::mutex> s(stats_mu);
    ++outage_failures;
  }

  // A request's answer is written (or cut): a drain waits for none to be left.
  void request_done(int64_t id) {
    std::lock_guard<std::mutex> lock(mu);
    if (--open_requests == 0) drained_cv.notify_all();
    side_done(id);
  }

  // Its answer is written or it is counted in /metrics (called with mu held): once both, nothing
  // reads it again, and the engine drops it (bounded memory under a flood: LiveEngine::release).
  void side_done(int64_t id) {
    if (half_done.erase(id) > 0) {
      engine.release(id);
    } else {
      half_done.insert(id);
    }
  }

  // Drain (ServeOptions::shutdown_mode "drain"): until no request is open, the timeout passes
  // or stop() is called.
  void drain() {
    std::unique_lock<std::mutex> lock(mu);
    auto done = [&] { return stopping || open_requests == 0; };
    if (options.shutdown_drain_timeout > 0) {
      drained_cv.wait_for(lock, std::chrono::duration<double>(options.shutdown_drain_timeout),
                          done);
    } else {
      drained_cv.wait(lock, done);
    }
  }

  static bool write_event(httplib::DataSink& sink, const std::string& data) {
    const std::string event = "data: " + data + "\n\n";
    return sink.write(event.data(), event.size());
  }

  // One SSE stream: a chunk per token when it is due, the usage chunk, [DONE].
  bool stream(int64_t id, const CompletionRequest& r, const ResponseIds& ids,
              httplib::DataSink& sink) {
    // The client went away: vLLM's API server aborts the request in the engine
    // (AsyncLLM.abort), which frees it at the next step boundary.
    auto disconnected = [&] {
      {
        std::lock_guard<std::mutex> lock(mu);
        engine.abort(id);
        submitted = true;  // the engine thread applies it now
      }
      engine_cv.notify_one();
      std::lock_guard<std::mutex> s(stats_mu);
      ++disconnects;
      return false;
    };
    if (r.endpoint == Endpoint::kChat &&
        !write_event(sink, role_chunk(ids, r.include_usage).dump())) {
      return disconnected();
    }
    int64_t sent = 0;
    std::vector<SimTime> times;
    while (sent < r.max_tokens) {
      times.clear();
      SimTime cut = SimTime::max();  // its replica's crash (--replica-outage), if it had one
      {
        std::unique_lock<std::mutex> lock(mu);
        auto ready = [&] {
          engine.token_times(id, sent, &times);
          return !times.empty() || stopping || engine.finished(id);
        };
        if (!ready()) {
          // Woken by the engine thread when a token past `sent` is produced (wake_streams).
          StreamWait wait;
          wait.sent = sent;
          stream_waits.emplace(id, &wait);
          wait.cv.wait(lock, ready);
          stream_waits.erase(id);
        }
        if (engine.finished(id) && engine.record(id).failed) cut = engine.cut_time(id);
      }
      if (times.empty() && cut == SimTime::max()) return false;  // shutting down: cut the stream
      for (SimTime t : times) {
        if (t > cut) break;
        send_at(wall_of(t + offset));
        ++sent;
        const bool last = sent == r.max_tokens;
        if (!write_event(
                sink, token_chunk(r.endpoint, ids, kFillerToken, last, r.include_usage).dump())) {
          return disconnected();
        }
      }
      if (cut != SimTime::max()) {
        // Its replica crashed: the proxy resets the stream then, without [DONE].
        std::this_thread::sleep_until(std::max(wall_of(cut), Clock::now()));
        count_outage_failure();
        return false;
      }
    }
    if (r.include_usage &&
        !write_event(sink, usage_chunk(r.endpoint, ids, r.prompt_tokens, sent).dump())) {
      return disconnected();
    }
    if (!write_event(sink, "[DONE]")) return disconnected();
    sink.done();
    return true;
  }

  void routes() {
    // While draining, vLLM's ServiceUnavailableMiddleware answers every path but /live and
    // /metrics with 503 and this body (vllm/entrypoints/serve/middleware.py).
    http.set_pre_routing_handler([this](const httplib::Request& q, httplib::Response& s) {
      {
        std::lock_guard<std::mutex> lock(mu);
        // No replica up (--replica-outage): the proxy in front answers every path but
        // servesim's /metrics.
        if (!draining && !options.replica_outages.empty() && !engine.any_replica_up() &&
            q.path != "/metrics") {
          if (q.method == "POST") count_outage_failure();
          send_proxy_503(s, kNoHealthyUpstream);
          return httplib::Server::HandlerResponse::Handled;
        }
        if (!draining || q.path == "/metrics" || q.path == "/live") {
          return httplib::Server::HandlerResponse::Unhandled;
        }
      }
      s.status = 503;
      s.set_content(json{{"error", "Server is unavailable. Please try again later."}}.dump(),
                    "application/json");
      return httplib::Server::HandlerResponse::Handled;
    });
    http.Post("/v1/completions", [this](const httplib::Request& q, httplib::Response& s) {
      handle(Endpoint::kCompletions, q, s);
    });
    http.Post("/v1/chat/completions", [this](const httplib::Request& q, httplib::Response& s) {
      handle(Endpoint::kChat, q, s);
    });
    http.Get("/v1/models", [this](const httplib::Request&, httplib::Response& s) {
      const json model = {{"id", limits.served_model},
                          {"object", "model"},
                          {"created", static_cast<int64_t>(std::time(nullptr))},
                          {"owned_by", "vllm"},
                          {"root", limits.served_model},
                          {"parent", nullptr},
                          {"max_model_len", limits.max_model_len}};
      s.set_content(json{{"object", "list"}, {"data", json::array({model})}}.dump(),
                    "application/json");
    });
    http.Get("/health", [](const httplib::Request&, httplib::Response& s) { s.status = 200; });
    http.Get("/version", [this](const httplib::Request&, httplib::Response& s) {
      s.set_content(json{{"version", vllm_version}}.dump(), "application/json");
    });
    http.Get("/metrics", [this](const httplib::Request&, httplib::Response& s) {
      s.set_content(metrics_text(), "text/plain; version=0.0.4; charset=utf-8");
    });
  }

  ServeOptions options;
  ApiLimits limits;
  std::string vllm_version;
  std::string labels;
  httplib::Server http;
  Clock::time_point start = Clock::now();

  std::mutex mu;  // the engine and everything below up to stats_mu
  std::condition_variable engine_cv;
  std::condition_variable tokens_cv;  // non-streaming handlers and routing waits
  // A stream waiting for its token number `sent` (stream(); the waiter owns it).
  struct StreamWait {
    std::condition_variable cv;
    int64_t sent = 0;
  };
  std::unordered_map<int64_t, StreamWait*> stream_waits;
  std::vector<SimTime> wake_scratch;  // wake_streams()'s
  bool stopping = false;
  bool submitted = false;
  bool draining = false;      // a SIGTERM began a drain (ServeOptions::shutdown_mode)
  int64_t open_requests = 0;  // admitted requests whose answer is not written yet
  uint64_t received = 0;      // valid requests admitted or failed so far (--fail-rate's numbers)
  std::condition_variable drained_cv;
  std::thread drain_thread;
  sim::LiveEngine engine;
  SimTime offset;
  std::vector<int64_t> active;  // submitted, not yet accounted as finished
  // Requests either answered or accounted, not both yet (side_done).
  std::unordered_set<int64_t> half_done;
  int64_t completed = 0;
  int64_t completed_prompt_tokens = 0;
  int64_t completed_output_tokens = 0;
  int64_t aborted_prompt_tokens = 0;  // of requests aborted after their first token
  int64_t aborted_output_tokens = 0;
  Histogram ttft, itl, e2e;

  std::mutex stats_mu;  // the streams' own counters
  Histogram lateness;
  int64_t disconnects = 0;
  int64_t rejected = 0;
  int64_t injected_failures = 0;
  int64_t outage_failures = 0;

  std::thread engine_thread;
  int bound_port = 0;
  int listen_fd = -1;                 // the listening socket (set_socket_options sees it first)
  std::atomic<int> listen_state{0};   // run(): 0 before its accept loop, 1 in it, 2 after
  bool descriptors_reserved = false;  // bind() counted its --threads (reserve_descriptors)
};

Server::Server(const sim::SimulationConfig& config, const sim::PreparedDeployment& prepared,
               const ServeOptions& options) {
  if (!(options.time_scale > 0) || options.time_scale > 1e6) {
    throw ConfigError("--time-scale: " + text_of(options.time_scale) +
                      " is invalid; expected a number in (0, 1e6]");
  }
  if (options.port < 0 || options.port > 65535) {
    throw ConfigError("--port: " + std::to_string(options.port) +
                      " is invalid; expected 0..65535 (0 = any free port)");
  }
  if (options.threads < 1 || options.threads > 16384) {
    throw ConfigError("--threads: " + std::to_string(options.threads) +
                      " is invalid; expected 1..16384");
  }
  if (options.max_waiting_requests < 0) {
    throw ConfigError("--max-waiting-requests: " + std::to_string(options.max_waiting_requests) +
                      " is invalid; expected 0 (no limit) or more");
  }
  if (options.max_waiting_status != 429 && options.max_waiting_status != 503) {
    throw ConfigError("--max-waiting-status: " + std::to_string(options.max_waiting_status) +
                      " is invalid; expected 429 (a gateway's rate limit) or 503 (overloaded)");
  }
  if (!(options.fail_rate >= 0 && options.fail_rate <= 1)) {
    throw ConfigError("--fail-rate: " + text_of(options.fail_rate) +
                      " is invalid; expected a fraction in [0, 1]");
  }
  if (options.shutdown_mode != "immediate" && options.shutdown_mode != "drain") {
    throw ConfigError("--shutdown-mode: \"" + options.shutdown_mode +
                      "\" is invalid; expected immediate or drain");
  }
  if (!(options.shutdown_drain_timeout >= 0) || options.shutdown_drain_timeout > 1e6) {
    throw ConfigError("--shutdown-drain-timeout: " + text_of(options.shutdown_drain_timeout) +
                      " is invalid; expected seconds in [0, 1e6] (0 = no limit)");
  }
  if (!(options.chars_per_token > 0) || options.chars_per_token > 1000) {
    throw ConfigError("--chars-per-token: " + text_of(options.chars_per_token) +
                      " is invalid; expected a number in (0, 1000]");
  }
  impl_ = std::make_unique<Impl>(config, prepared, options);
  const int threads = options.threads;
  impl_->http.new_task_queue = [threads] { return new WorkerPool(static_cast<size_t>(threads)); };
  Impl* impl = impl_.get();
  impl_->http.set_socket_options([impl](socket_t sock) {
    httplib::default_socket_options(sock);
    // Accept a connection once its request's first bytes came: cpp-httplib 0.11 waits for a
    // request by polling every 10 ms (its keep_alive()), and thousands of connections whose
    // requests were still on the way kept both cores busy (~1.4 ms of CPU per second each).
    const int defer_s = kDeferAcceptSeconds;
    setsockopt(sock, IPPROTO_TCP, TCP_DEFER_ACCEPT, &defer_s, sizeof defer_s);
    impl->listen_fd = sock;
  });
  impl_->http.set_keep_alive_max_count(100000);
  impl_->routes();
}

Server::~Server() {
  stop();
  if (impl_->engine_thread.joinable()) impl_->engine_thread.join();
  if (impl_->drain_thread.joinable()) impl_->drain_thread.join();
  if (impl_->descriptors_reserved) release_descriptors(impl_->options.threads);
}

void Server::bind() {
  Impl& s = *impl_;
  if (!s.descriptors_reserved) {
    reserve_descriptors(s.options.threads);
    s.descriptors_reserved = true;
  }
  if (s.options.port == 0) {
    s.bound_port = s.http.bind_to_any_port(s.options.host);
    if (s.bound_port <= 0) throw ConfigError("--host: cannot listen on " + s.options.host);
  } else {
    if (!s.http.bind_to_port(s.options.host, s.options.port)) {
      throw ConfigError("--port: cannot listen on " + s.options.host + ":" +
                        std::to_string(s.options.port) + " (in use, or not an address here)");
    }
    s.bound_port = s.options.port;
  }
  // listen() again on a listening socket only sets its backlog (cpp-httplib's is 5).
  const int backlog = std::max(kListenBacklog, s.options.threads);
  if (s.listen_fd < 0 || ::listen(s.listen_fd, backlog) != 0) {
    throw ConfigError("--port: cannot set the listen backlog of " + s.options.host + ":" +
                      std::to_string(s.bound_port) + " to " + std::to_string(backlog));
  }
}

int Server::port() const { return impl_->bound_port; }

void Server::run() {
  Impl& s = *impl_;
  s.start = Clock::now();
  s.engine_thread = std::thread([&s] { s.engine_loop(); });
  // 1 before looking at `stopping`, as stop() sets `stopping` before looking at listen_state:
  // a stop() that comes before this point is seen here (no accept loop is started), one after it
  // waits for the loop and ends it (--port-per-replica's second server can start after a SIGTERM).
  s.listen_state = 1;
  bool stopped;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    stopped = s.stopping;
  }
  if (!stopped) s.http.listen_after_bind();
  s.listen_state = 2;
  stop();
  s.engine_thread.join();
  if (s.drain_thread.joinable()) s.drain_thread.join();
}

void Server::on_signal() {
  Impl& s = *impl_;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.options.shutdown_mode == "drain" && !s.draining && !s.stopping) {
      s.draining = true;
      s.drain_thread = std::thread([this] {
        impl_->drain();
        stop();
      });
      return;
    }
  }
  stop();  // immediate, or a second signal
}

void Server::stop() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stopping = true;
    impl_->wake_streams();
  }
  impl_->engine_cv.notify_all();
  impl_->tokens_cv.notify_all();
  impl_->drained_cv.notify_all();
  // cpp-httplib's stop() does nothing until its accept loop runs (is_running()): a signal
  // between run()'s start and the loop's (a SIGTERM just after start, --port-per-replica's
  // second port) was lost, and accept() blocked the exit. run() sets listen_state to 1 before it
  // reads `stopping` (set above): either it sees the stop, or this waits for its loop.
  while (impl_->listen_state == 1 && !impl_->http.is_running()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  impl_->http.stop();
}

}  // namespace servesim::serve
