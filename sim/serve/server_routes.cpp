// Server's HTTP routes (server_impl.h): vLLM's endpoints, the answers a drain or an outage gives
// before them, and a completion request from its body to its answer or its stream.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <string>

#include "sim/serve/client_socket.h"
#include "sim/serve/server_impl.h"

namespace servesim::serve {
namespace {

using nlohmann::json;

// What a proxy in front of a crashed vLLM answers (Envoy's bodies, text/plain, status 503): a
// request that comes while no replica is up, and one whose replica died before its answer.
constexpr const char* kNoHealthyUpstream = "no healthy upstream";
constexpr const char* kUpstreamReset =
    "upstream connect error or disconnect/reset before headers. reset reason: connection "
    "termination";

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

void Server::Impl::routes() {
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

void Server::Impl::handle(Endpoint endpoint, const httplib::Request& req, httplib::Response& res) {
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

}  // namespace servesim::serve
