// Server::Impl: the state a Server's parts share — one LiveEngine behind one lock, the HTTP
// server, the histograms and counters /metrics shows — and the parts' methods, each defined in
// the file of its job (server.h says what the server does):
//   server.cpp          the lifecycle: options checked, bind, run, signals, stop
//   server_engine.cpp   the engine thread: the clock, finished requests, waking streams, drain
//   server_routes.cpp   the HTTP routes and a request's way from its body to its answer
//   server_stream.cpp   the SSE stream writer and the send clock of every token
//   server_metrics.cpp  the /metrics text and the counters the handlers bump
// Private to servesim::serve (it names cpp-httplib's types).
#ifndef SERVESIM_SIM_SERVE_SERVER_IMPL_H_
#define SERVESIM_SIM_SERVE_SERVER_IMPL_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <httplib.h>

#include "sim/cluster/live_engine.h"
#include "sim/serve/openai_api.h"
#include "sim/serve/prometheus.h"
#include "sim/serve/server.h"

namespace servesim::serve {

struct Server::Impl {
  using Clock = std::chrono::steady_clock;

  // The engine with o's latency spikes and outages scheduled (server.cpp).
  Impl(const sim::SimulationConfig& config, const sim::PreparedDeployment& prepared,
       const ServeOptions& o);

  // --- the clock (simulated time = wall time since start × time_scale) ---
  SimTime sim_now() const {
    const double wall_s = std::chrono::duration<double>(Clock::now() - start).count();
    return SimTime::from_ns(static_cast<int64_t>(wall_s * options.time_scale * 1e9));
  }
  Clock::time_point wall_of(SimTime t) const {
    if (t == SimTime::max()) return Clock::time_point::max();
    return start + std::chrono::duration_cast<Clock::duration>(
                       std::chrono::duration<double>(t.seconds() / options.time_scale));
  }

  // --- the engine thread (server_engine.cpp) ---
  // Advances the engine to the present, accounts finished requests, wakes the streams, sleeps
  // until the next event or a new request; until stopping.
  void engine_loop();
  // Wakes the streams waiting for a token that now have one, finished, or must stop (called
  // with mu held). Only those: a stream whose request waits in the engine's queue sleeps
  // through the steps (a notify_all per step woke every held stream, thousands of threads
  // made runnable per step for the ~max_num_seqs that had a token).
  void wake_streams();
  // Histograms and totals of the requests that finished (called with mu held).
  void account_finished();
  // A request's answer is written (or cut): a drain waits for none to be left.
  void request_done(int64_t id);
  // Its answer is written or it is counted in /metrics (called with mu held): once both, nothing
  // reads it again, and the engine drops it (bounded memory under a flood: LiveEngine::release).
  void side_done(int64_t id);
  // Drain (ServeOptions::shutdown_mode "drain"): waits until no request is open, the timeout
  // passes or stop() is called.
  void drain();

  // --- the routes (server_routes.cpp) ---
  // Installs the routes on `http`, and the drain's and the outage's answers before them.
  void routes();
  // A completion request from its body to its answer: refusals, --fail-rate, submission to the
  // engine, then the whole answer when its last token is due or a stream (stream()).
  void handle(Endpoint endpoint, const httplib::Request& req, httplib::Response& res);

  // --- the stream writer (server_stream.cpp) ---
  // One SSE stream: a chunk per token when it is due, the usage chunk, [DONE]. False when the
  // stream is cut (client gone, shutdown, its replica crashed).
  bool stream(int64_t id, const CompletionRequest& r, const ResponseIds& ids,
              httplib::DataSink& sink);
  // Waits for the time a token is due and records how late it goes out.
  void send_at(Clock::time_point due);

  // --- /metrics (server_metrics.cpp) ---
  std::string metrics_text();
  void count_outage_failure();

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

}  // namespace servesim::serve

#endif  // SERVESIM_SIM_SERVE_SERVER_IMPL_H_
