#include "workloads/session_workload.h"

#include <utility>

#include "sim/base/error.h"

namespace servesim::workloads {
uint64_t session_chain_key(uint64_t previous, uint64_t session_key, uint64_t j) {
  uint64_t z = previous ^ (session_key + 0x9e3779b97f4a7c15ull * (j + 1));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

SessionWorkload::SessionWorkload(std::unique_ptr<Dataset> bodies, ArrivalSequence starts,
                                 const SessionOptions& options,
                                 std::vector<std::string> class_names)
    : bodies_(std::move(bodies)),
      class_mix_(dynamic_cast<ClassMixDataset*>(bodies_.get())),
      starts_(std::move(starts)),
      options_(options),
      class_names_(std::move(class_names)),
      think_rng_(options.seed, "think-time") {
  SERVESIM_CHECK(options_.num_sessions >= 1 && options_.num_turns >= 1, "bad session options");
  SERVESIM_CHECK(starts_.size() == options_.num_sessions, "one start per conversation");
  SERVESIM_CHECK(
      bodies_->size() == (class_mix_ != nullptr ? options_.num_sessions
                                                : options_.num_sessions * options_.num_turns),
      "one body per turn");
  sessions_.resize(static_cast<size_t>(options_.num_sessions));
  session_of_id_.assign(static_cast<size_t>(size()), -1);
}

RequestSpec SessionWorkload::make_turn(int64_t s, SimTime arrival) {
  Session& session = sessions_[static_cast<size_t>(s)];
  const int32_t k = session.next_turn - 1;  // the turn being sent (0-based)
  const RequestSpec& body = session.turns[static_cast<size_t>(k)];
  RequestSpec spec = body;
  spec.id = next_id_++;
  spec.arrival = arrival;
  spec.prompt_tokens = static_cast<int32_t>(session.history + body.prompt_tokens);
  spec.prefix_group = -1;
  spec.prefix_tokens = 0;
  spec.prefix_chain = session.chain;
  spec.chain_block_tokens = kChainBlockTokens;
  spec.chain_covers_output = true;
  session.history += int64_t{body.prompt_tokens} + body.output_tokens;
  session_of_id_[static_cast<size_t>(spec.id)] = s;
  return spec;
}

std::optional<RequestSpec> SessionWorkload::next() {
  if (started_ == options_.num_sessions) return std::nullopt;
  const int64_t s = started_++;
  const SimTime arrival = SimTime::from_seconds_ceil(starts_.next_s());
  Session& session = sessions_[static_cast<size_t>(s)];
  session.turns.reserve(static_cast<size_t>(options_.num_turns));
  RequestSpec first = bodies_->next();
  session.turns.push_back(first);
  for (int32_t k = 1; k < options_.num_turns; ++k) {
    session.turns.push_back(class_mix_ != nullptr ? class_mix_->next_of_class(first.class_id)
                                                  : bodies_->next());
  }
  // The stream's chain: one key per full kChainBlockTokens block of the whole conversation.
  int64_t total = 0;
  for (const RequestSpec& t : session.turns) total += int64_t{t.prompt_tokens} + t.output_tokens;
  SERVESIM_CHECK(total <= INT32_MAX, "conversation longer than 2^31 tokens");
  auto chain = std::make_shared<std::vector<uint64_t>>();
  const int64_t blocks = total / kChainBlockTokens;
  chain->reserve(static_cast<size_t>(blocks));
  RngStream key_rng(options_.seed ^ static_cast<uint64_t>(s), "session-key");
  const uint64_t session_key = key_rng.next_u64();
  uint64_t h = session_key;
  for (int64_t j = 0; j < blocks; ++j) {
    h = session_chain_key(h, session_key, static_cast<uint64_t>(j));
    chain->push_back(h);
  }
  session.chain = std::move(chain);
  session.next_turn = 1;
  return make_turn(s, arrival);
}

std::optional<RequestSpec> SessionWorkload::on_done(int64_t id, SimTime /*sent*/, SimTime now) {
  SERVESIM_CHECK(id >= 0 && id < size(), "on_done for an unknown request");
  const int64_t s = session_of_id_[static_cast<size_t>(id)];
  SERVESIM_CHECK(s >= 0, "on_done for a request not handed out");
  Session& session = sessions_[static_cast<size_t>(s)];
  if (session.next_turn >= options_.num_turns) {
    session = Session{};  // the conversation is over: release its bodies and chain
    return std::nullopt;
  }
  ++session.next_turn;
  const double think_s = options_.exponential_think ? think_rng_.exponential(options_.think_time_s)
                                                    : options_.think_time_s;
  return make_turn(s, now + SimTime::from_seconds_ceil(think_s));
}

}  // namespace servesim::workloads
