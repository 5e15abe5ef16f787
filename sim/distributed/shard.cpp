#include "sim/distributed/shard.h"

#include <algorithm>
#include <fstream>
#include <mutex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/base/error.h"

namespace servesim::distributed {
namespace {

using nlohmann::json;

constexpr const char* kFormat = "servesim_part/1";

std::string shard_text(const ShardSpec& s) {
  return std::to_string(s.index) + "/" + std::to_string(s.count);
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : " ") + s;
  return out;
}

}  // namespace

ShardSpec parse_shard(const std::string& text) {
  const auto bad = [&]() {
    return ConfigError("--shard: '" + text +
                       "' is invalid; expected I/N with 0 <= I < N, e.g. 0/4 for the first of "
                       "four parts");
  };
  const size_t slash = text.find('/');
  if (slash == std::string::npos || slash == 0 || slash + 1 >= text.size()) throw bad();
  const std::string a = text.substr(0, slash), b = text.substr(slash + 1);
  auto digits = [](const std::string& s) {
    return s.size() <= 9 && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (!digits(a) || !digits(b)) throw bad();
  ShardSpec s{std::stoi(a), std::stoi(b)};
  if (s.count < 1 || s.index >= s.count) throw bad();
  return s;
}

std::string encode_part(const PartFile& part) {
  json results = json::array();
  for (const auto& [i, bytes] : part.results) {
    results.push_back({i, json::binary(std::vector<std::uint8_t>(bytes.begin(), bytes.end()))});
  }
  const json j = {{"format", kFormat},           {"version", part.version},
                  {"command", part.command},     {"shard", part.shard.index},
                  {"shards", part.shard.count},  {"jobs_total", part.jobs_total},
                  {"results", results}};
  const std::vector<std::uint8_t> v = json::to_cbor(j);
  return std::string(v.begin(), v.end());
}

PartFile decode_part(const std::string& bytes, const std::string& path) {
  json j;
  try {
    j = json::from_cbor(bytes);
  } catch (const json::exception&) {
    throw ConfigError(path + ": not a servesim part file (written by --shard I/N)");
  }
  if (!j.is_object() || j.value("format", "") != kFormat) {
    throw ConfigError(path + ": not a servesim part file (written by --shard I/N)");
  }
  PartFile p;
  p.path = path;
  try {
    p.version = j.at("version").get<std::string>();
    p.command = j.at("command").get<std::vector<std::string>>();
    p.shard = {j.at("shard").get<int>(), j.at("shards").get<int>()};
    p.jobs_total = j.at("jobs_total").get<int64_t>();
    for (const json& r : j.at("results")) {
      const auto& b = r.at(1).get_binary();
      p.results[r.at(0).get<int64_t>()] = std::string(b.begin(), b.end());
    }
  } catch (const json::exception& e) {
    throw ConfigError(path + ": damaged part file (" + e.what() + ")");
  }
  return p;
}

ShardExecutor::ShardExecutor(ShardSpec shard, int jobs, std::vector<std::string> command,
                             std::string version)
    : shard_(shard), jobs_(jobs), command_(std::move(command)), version_(std::move(version)) {}

int64_t ShardExecutor::run(const JobLoop& loop, const std::atomic<bool>* cancel) {
  PartFile part;
  part.version = version_;
  part.command = command_;
  part.shard = shard_;
  part.jobs_total = loop.n;
  JobLoop mine = loop;
  mine.skip = [&](int64_t i) {
    return i % shard_.count != shard_.index || (loop.skip && loop.skip(i));
  };
  mine.tick = nullptr;
  mine.accept = [&](int64_t i, std::string&& bytes) {
    part.results[i] = bytes;  // serialised by ThreadExecutor
    loop.accept(i, std::move(bytes));  // the shard's own skip() sees its results (early stop)
  };
  ThreadExecutor threads(jobs_);
  threads.run(mine, cancel);
  if (cancel != nullptr && cancel->load()) {
    throw ConfigError("--shard " + shard_text(shard_) +
                      ": interrupted before the part was complete; no part file written");
  }
  throw ShardComplete(std::move(part));
}

std::vector<PartFile> read_parts(const std::vector<std::string>& paths) {
  SERVESIM_CHECK(!paths.empty(), "merge needs part files");
  std::vector<PartFile> parts;
  for (const std::string& path : paths) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw ConfigError(path + ": cannot open part file");
    std::stringstream buf;
    buf << in.rdbuf();
    parts.push_back(decode_part(buf.str(), path));
  }
  const PartFile& first = parts.front();
  for (const PartFile& p : parts) {
    if (p.version != first.version) {
      throw ConfigError(p.path + ": written by " + p.version + " but " + first.path + " by " +
                        first.version + "; every part must come from the same servesim");
    }
    if (p.command != first.command) {
      throw ConfigError(p.path + ": a part of a different study ('" + joined(p.command) +
                        "'; " + first.path + " has '" + joined(first.command) + "')");
    }
    if (p.shard.count != first.shard.count || p.jobs_total != first.jobs_total) {
      throw ConfigError(p.path + ": part " + shard_text(p.shard) + " of " +
                        std::to_string(p.jobs_total) + " jobs, but " + first.path + " is part " +
                        shard_text(first.shard) + " of " + std::to_string(first.jobs_total) +
                        " jobs; every part must come from the same --shard I/N split");
    }
  }
  const int n = first.shard.count;
  std::vector<const PartFile*> by_index(static_cast<size_t>(n), nullptr);
  for (const PartFile& p : parts) {
    const PartFile*& slot = by_index[static_cast<size_t>(p.shard.index)];
    if (slot != nullptr) {
      throw ConfigError("merge: part " + shard_text(p.shard) + " is given twice (" + slot->path +
                        " and " + p.path + ")");
    }
    slot = &p;
  }
  std::string missing;
  for (int i = 0; i < n; ++i) {
    if (by_index[size_t(i)] == nullptr) {
      missing += (missing.empty() ? "" : ", ") + std::to_string(i) + "/" + std::to_string(n);
    }
  }
  if (!missing.empty()) {
    throw ConfigError("merge: part" + std::string(missing.find(',') != std::string::npos ? "s " : " ") +
                      missing + " missing (got " + std::to_string(parts.size()) + " of " +
                      std::to_string(n) + " parts); run that shard with --shard and merge again");
  }
  std::vector<PartFile> ordered;
  for (const PartFile* p : by_index) ordered.push_back(*p);
  return ordered;
}

ReplayExecutor::ReplayExecutor(std::vector<PartFile> parts) : parts_(std::move(parts)) {}

int64_t ReplayExecutor::run(const JobLoop& loop, const std::atomic<bool>* /*cancel*/) {
  if (loops_++ > 0) {
    throw ConfigError("merge: this study has more than one round of jobs; it cannot come from "
                      "part files");
  }
  SERVESIM_CHECK(!parts_.empty(), "replay needs parts");
  const int n = parts_.front().shard.count;
  if (loop.n != parts_.front().jobs_total) {
    throw ConfigError("merge: the parts hold a study of " +
                      std::to_string(parts_.front().jobs_total) + " jobs but the command now makes " +
                      std::to_string(loop.n) +
                      " (were its input files or catalogs changed since the shards ran?)");
  }
  int64_t accepted = 0;
  for (int64_t i = 0; i < loop.n; ++i) {
    if (loop.skip && loop.skip(i)) {
      if (loop.tick) loop.tick();
      continue;
    }
    const PartFile& part = parts_[static_cast<size_t>(i % n)];
    const auto it = part.results.find(i);
    if (it == part.results.end()) {
      throw ConfigError(part.path + ": part " + shard_text(part.shard) + " lacks job " +
                        std::to_string(i) + " of the study; run that shard again");
    }
    loop.accept(i, std::string(it->second));
    ++accepted;
    if (loop.tick) loop.tick();
  }
  return accepted;
}

}  // namespace servesim::distributed
