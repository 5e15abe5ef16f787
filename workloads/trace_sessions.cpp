#include "workloads/trace_sessions.h"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>

#include "sim/base/error.h"
#include "workloads/session_workload.h"
#include "workloads/trace_reader.h"

namespace servesim::workloads {
namespace {

constexpr uint64_t kHashBlockSalt = 0x7472616365686173ull;  // keys derived from hash ids

uint64_t session_key(int32_t session, size_t turn) {
  // Distinct per (session, turn): a turn's new blocks never collide with another turn's.
  return session_chain_key(0x73657373696f6e73ull, static_cast<uint64_t>(session),
                           static_cast<uint64_t>(turn));
}

}  // namespace

TraceSessionWorkload::TraceSessionWorkload(const TraceReplayOptions& options) {
  const std::unique_ptr<TraceReader> probe = open_trace(options.path, options.format);
  hash_block_tokens_ = probe->block_tokens();
  const bool by_column = hash_block_tokens_ == 0;  // else sessions come from the hash ids
  if (by_column && !probe->has_sessions()) {
    throw ConfigError("--multi-turn: --trace " + options.path + " (--trace-format " +
                      options.format +
                      ") has no session_id column; expected a CSV trace with a session_id "
                      "column, or --trace-format mooncake (sessions inferred from hash_ids)");
  }
  std::unordered_map<std::string, int32_t> session_by_id;  // CSV: session_id -> session
  std::unordered_map<uint64_t, int32_t> tail_by_key;       // mooncake: full-prefix key -> row
  auto new_session = [this]() {
    sessions_.emplace_back();
    return static_cast<int32_t>(sessions_.size() - 1);
  };
  window_ = scan_trace_window(options, [&](const TraceRow& r) {
    const auto i = static_cast<int32_t>(rows_.size());
    Row row;
    row.prompt_tokens = r.prompt_tokens;
    row.output_tokens = r.output_tokens;
    row.offset_ns = r.arrival_ns;  // made relative to the window below
    if (by_column) {
      if (r.session.empty()) {
        row.session = new_session();
      } else {
        auto [it, added] = session_by_id.try_emplace(r.session, 0);
        if (added) it->second = new_session();
        row.session = it->second;
      }
    } else {
      const std::vector<uint64_t> chain = prefix_chain_of(r.hash_ids);
      int32_t parent = -1;
      for (size_t k = chain.size(); k-- >= kMinChainedBlocks;) {
        auto it = tail_by_key.find(chain[k]);
        if (it != tail_by_key.end()) {
          parent = it->second;
          tail_by_key.erase(it);  // the parent is no longer its session's last turn
          break;
        }
      }
      if (parent >= 0) {
        row.session = rows_[static_cast<size_t>(parent)].session;
      } else {
        row.session = new_session();
        row.hash_chain = std::make_shared<const std::vector<uint64_t>>(chain);
      }
      const size_t full = static_cast<size_t>(r.prompt_tokens / hash_block_tokens_);
      if (full >= kMinChainedBlocks) tail_by_key[chain[full - 1]] = i;
    }
    sessions_[static_cast<size_t>(row.session)].rows.push_back(i);
    rows_.push_back(std::move(row));
  });
  for (Row& row : rows_) row.offset_ns -= window_.lo_ns;
  SERVESIM_CHECK(static_cast<int64_t>(rows_.size()) == window_.count, "one row per request");
  SERVESIM_CHECK(rows_.size() <= static_cast<size_t>(INT32_MAX), "trace window too long");
  session_of_id_.assign(rows_.size(), -1);
}

std::vector<int32_t> TraceSessionWorkload::session_of_rows() const {
  std::vector<int32_t> out;
  out.reserve(rows_.size());
  for (const Row& row : rows_) out.push_back(row.session);
  return out;
}

RequestSpec TraceSessionWorkload::make_turn(int32_t s, SimTime arrival) {
  Session& session = sessions_[static_cast<size_t>(s)];
  const size_t k = session.next_turn++;
  const Row& row = rows_[static_cast<size_t>(session.rows[k])];
  RequestSpec spec;
  spec.id = next_id_++;
  spec.arrival = arrival;
  spec.prompt_tokens = row.prompt_tokens;
  spec.output_tokens = row.output_tokens;
  // The shared history h = min(P_k, P_{k-1} + O_{k-1}), in whole chain blocks.
  size_t kept = 0;
  if (k > 0) {
    const Row& prev = rows_[static_cast<size_t>(session.rows[k - 1])];
    const int64_t history =
        std::min<int64_t>(row.prompt_tokens, int64_t{prev.prompt_tokens} + prev.output_tokens);
    kept = static_cast<size_t>(history / kChainBlockTokens);
  }
  const auto blocks =
      static_cast<size_t>((int64_t{row.prompt_tokens} + row.output_tokens) / kChainBlockTokens);
  auto chain = std::make_shared<std::vector<uint64_t>>();
  chain->reserve(blocks);
  if (kept > 0) chain->assign(session.chain->begin(), session.chain->begin() + kept);
  // Blocks inside the first turn's full hash-id blocks take their keys from the hash ids.
  const size_t per_hash = static_cast<size_t>(hash_block_tokens_ / kChainBlockTokens);
  const size_t from_hash =
      row.hash_chain ? static_cast<size_t>(row.prompt_tokens / hash_block_tokens_) * per_hash : 0;
  const uint64_t key = session_key(s, k);
  uint64_t h = kept > 0 ? chain->back() : key;
  for (size_t j = kept; j < blocks; ++j) {
    h = j < from_hash ? session_chain_key((*row.hash_chain)[j / per_hash], kHashBlockSalt, j)
                      : session_chain_key(h, key, j);
    chain->push_back(h);
  }
  session.chain = std::move(chain);
  spec.prefix_chain = session.chain;
  spec.chain_block_tokens = kChainBlockTokens;
  spec.chain_covers_output = true;
  session_of_id_[static_cast<size_t>(spec.id)] = s;
  return spec;
}

std::optional<RequestSpec> TraceSessionWorkload::next() {
  if (started_ == num_sessions()) return std::nullopt;
  const int32_t s = started_++;
  const Row& first = rows_[static_cast<size_t>(sessions_[static_cast<size_t>(s)].rows[0])];
  return make_turn(s, SimTime::from_ns(window_.scaled_ns(first.offset_ns)));
}

std::optional<RequestSpec> TraceSessionWorkload::on_done(int64_t id, SimTime sent, SimTime now) {
  SERVESIM_CHECK(id >= 0 && id < size(), "on_done for an unknown request");
  const int32_t s = session_of_id_[static_cast<size_t>(id)];
  SERVESIM_CHECK(s >= 0, "on_done for a request not handed out");
  Session& session = sessions_[static_cast<size_t>(s)];
  if (session.next_turn == session.rows.size()) {
    session.chain.reset();  // the session is over
    return std::nullopt;
  }
  const Row& prev = rows_[static_cast<size_t>(session.rows[session.next_turn - 1])];
  const Row& row = rows_[static_cast<size_t>(session.rows[session.next_turn])];
  // send = max(done, sent + s·gap): the recorded gap minus the simulated answer time, >= 0.
  const SimTime gap = SimTime::from_ns(window_.scaled_ns(row.offset_ns - prev.offset_ns));
  return make_turn(s, std::max(now, sent + gap));
}

}  // namespace servesim::workloads
