#include "sim/distributed/shard.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sim/base/error.h"
#include "sim/base/input_files.h"

namespace servesim::distributed {
namespace {

using nlohmann::json;

constexpr const char* kFormat = "servesim_part/2";
constexpr const char* kOldFormat = "servesim_part/1";  // before inputs and checksum

uint64_t fnv1a(const std::uint8_t* data, size_t n, uint64_t h = 1469598103934665603ull) {
  for (size_t i = 0; i < n; ++i) {
    h ^= data[i];
    h *= 1099511628211ull;
  }
  return h;
}

uint64_t body_checksum(const json& body) {
  const std::vector<std::uint8_t> v = json::to_cbor(body);
  return fnv1a(v.data(), v.size());
}

std::string hex(uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

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
    return s.size() <= 9 &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  if (!digits(a) || !digits(b)) throw bad();
  ShardSpec s{std::stoi(a), std::stoi(b)};
  if (s.count < 1 || s.index >= s.count) throw bad();
  return s;
}

std::optional<uint64_t> input_content_hash(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  uint64_t h = 1469598103934665603ull;
  std::vector<char> buf(1 << 16);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    h = fnv1a(reinterpret_cast<const std::uint8_t*>(buf.data()), static_cast<size_t>(in.gcount()),
              h);
  }
  if (in.bad()) return std::nullopt;
  return h;
}

std::string encode_part(const PartFile& part) {
  json results = json::array();
  for (const auto& [i, bytes] : part.results) {
    results.push_back({i, json::binary(std::vector<std::uint8_t>(bytes.begin(), bytes.end()))});
  }
  json inputs = json::array();
  for (const auto& [path, hash] : part.inputs) inputs.push_back({path, hash});
  json j = {{"format", kFormat},          {"version", part.version},
            {"command", part.command},    {"shard", part.shard.index},
            {"shards", part.shard.count}, {"jobs_total", part.jobs_total},
            {"inputs", inputs},           {"results", results}};
  j["checksum"] = body_checksum(j);
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
  // Compared as JSON, not read as a string: json::value("format", "") throws when the field
  // holds another type (a CBOR byte string, found by fuzz_merge).
  if (j.is_object() && j.contains("format") && j.at("format") == kOldFormat) {
    throw ConfigError(path + ": a part file of an older servesim (format " + kOldFormat +
                      ", without input hashes and checksum); run its shard again");
  }
  if (!j.is_object() || !j.contains("format") || j.at("format") != kFormat) {
    throw ConfigError(path + ": not a servesim part file (written by --shard I/N)");
  }
  // The checksum covers every other field: a flipped bit anywhere is refused here, before any
  // number is read.
  if (!j.contains("checksum") || !j.at("checksum").is_number_unsigned()) {
    throw ConfigError(path + ": damaged part file (no checksum)");
  }
  const uint64_t stored = j.at("checksum").get<uint64_t>();
  j.erase("checksum");
  if (const uint64_t actual = body_checksum(j); actual != stored) {
    throw ConfigError(path + ": damaged part file (checksum " + hex(actual) + ", recorded " +
                      hex(stored) + "); copy or run its shard again");
  }
  PartFile p;
  p.path = path;
  // Integers are checked before they are converted: a float or an out-of-range number in a
  // damaged file must not reach a static_cast (undefined behaviour) or size a vector.
  auto integer = [&](const json& v, const char* what, int64_t lo, int64_t hi) {
    if (!v.is_number_integer() || (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(hi)) ||
        v.get<int64_t>() < lo || v.get<int64_t>() > hi) {
      throw ConfigError(path + ": damaged part file (" + what + " is " + v.dump() +
                        "; expected an integer in [" + std::to_string(lo) + ", " +
                        std::to_string(hi) + "])");
    }
    return v.get<int64_t>();
  };
  try {
    p.version = j.at("version").get<std::string>();
    p.command = j.at("command").get<std::vector<std::string>>();
    const int64_t shards = integer(j.at("shards"), "shards", 1, INT32_MAX);
    p.shard = {static_cast<int>(integer(j.at("shard"), "shard", 0, shards - 1)),
               static_cast<int>(shards)};
    p.jobs_total = integer(j.at("jobs_total"), "jobs_total", 0, INT64_MAX);
    for (const json& in : j.at("inputs")) {
      p.inputs.emplace_back(in.at(0).get<std::string>(), in.at(1).get<uint64_t>());
    }
    for (const json& r : j.at("results")) {
      const auto& b = r.at(1).get_binary();
      const int64_t i = integer(r.at(0), "a job index", 0, p.jobs_total - 1);
      p.results[i] = std::string(b.begin(), b.end());
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
  for (const std::string& path : InputRegistry::instance().paths()) {
    if (const auto h = input_content_hash(path)) part.inputs.emplace_back(path, *h);
  }
  JobLoop mine = loop;
  mine.skip = [&](int64_t i) {
    return i % shard_.count != shard_.index || (loop.skip && loop.skip(i));
  };
  mine.tick = nullptr;
  mine.accept = [&](int64_t i, std::string&& bytes) {
    part.results[i] = bytes;           // serialised by ThreadExecutor
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
    check_input_file(path, "", kMaxDataFileBytes);
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
      throw ConfigError(p.path + ": a part of a different study ('" + joined(p.command) + "'; " +
                        first.path + " has '" + joined(first.command) + "')");
    }
    if (p.shard.count != first.shard.count || p.jobs_total != first.jobs_total) {
      throw ConfigError(p.path + ": part " + shard_text(p.shard) + " of " +
                        std::to_string(p.jobs_total) + " jobs, but " + first.path + " is part " +
                        shard_text(first.shard) + " of " + std::to_string(first.jobs_total) +
                        " jobs; every part must come from the same --shard I/N split");
    }
  }
  // The inputs every part recorded (a process that ran several studies may have read a catalog
  // file once, so the lists need not be equal): one content per path across the parts.
  std::map<std::string, std::pair<uint64_t, const PartFile*>> inputs;
  for (const PartFile& p : parts) {
    for (const auto& [input, hash] : p.inputs) {
      const auto [it, added] = inputs.emplace(input, std::make_pair(hash, &p));
      if (!added && it->second.first != hash) {
        throw ConfigError(p.path + ": a part of a different study ('" + input +
                          "' had other "
                          "content when " +
                          it->second.second->path + " was made)");
      }
    }
  }
  // merge runs the study's command again to write its outputs: its inputs must be what the
  // shards read.
  for (const auto& [input, recorded] : inputs) {
    const uint64_t hash = recorded.first;
    const auto now = input_content_hash(input);
    if (!now) {
      throw ConfigError("merge: '" + input +
                        "', an input of the study, cannot be read; merge "
                        "needs the files the shards read");
    }
    if (*now != hash) {
      throw ConfigError("merge: '" + input + "' changed since the shards read it (content hash " +
                        hex(*now) + ", the parts recorded " + hex(hash) +
                        "); restore it or run the shards again");
    }
  }
  // Indexed by a map, not a vector of N slots: N comes from the file (at most 2^31 − 1).
  const int n = first.shard.count;
  std::map<int, const PartFile*> by_index;
  for (const PartFile& p : parts) {
    const auto [it, added] = by_index.emplace(p.shard.index, &p);
    if (!added) {
      throw ConfigError("merge: part " + shard_text(p.shard) + " is given twice (" +
                        it->second->path + " and " + p.path + ")");
    }
  }
  if (static_cast<int64_t>(by_index.size()) < n) {
    std::string missing;  // the first ten
    int listed = 0;
    for (int i = 0; i < n && listed < 10; ++i) {
      if (by_index.count(i) == 0) {
        missing += (listed++ > 0 ? ", " : "") + std::to_string(i) + "/" + std::to_string(n);
      }
    }
    const int64_t count = n - static_cast<int64_t>(by_index.size());
    if (count > listed) missing += " and " + std::to_string(count - listed) + " more";
    throw ConfigError("merge: part" + std::string(count > 1 ? "s " : " ") + missing +
                      " missing (got " + std::to_string(parts.size()) + " of " + std::to_string(n) +
                      " parts); run that shard with --shard and merge again");
  }
  std::vector<PartFile> ordered;
  for (const auto& entry : by_index) ordered.push_back(*entry.second);
  return ordered;
}

ReplayExecutor::ReplayExecutor(std::vector<PartFile> parts) : parts_(std::move(parts)) {}

int64_t ReplayExecutor::run(const JobLoop& loop, const std::atomic<bool>* /*cancel*/) {
  if (loops_++ > 0) {
    throw ConfigError(
        "merge: this study has more than one round of jobs; it cannot come from "
        "part files");
  }
  SERVESIM_CHECK(!parts_.empty(), "replay needs parts");
  const int n = parts_.front().shard.count;
  if (loop.n != parts_.front().jobs_total) {
    throw ConfigError("merge: the parts hold a study of " +
                      std::to_string(parts_.front().jobs_total) +
                      " jobs but the command now makes " + std::to_string(loop.n) +
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
    try {
      loop.accept(i, std::string(it->second));
    } catch (const nlohmann::json::exception& e) {
      // The part's CBOR framing was sound but this job's result is not what the study wrote.
      throw ConfigError(part.path + ": damaged part file (job " + std::to_string(i) +
                        "'s result: " + e.what() + ")");
    }
    ++accepted;
    if (loop.tick) loop.tick();
  }
  return accepted;
}

}  // namespace servesim::distributed
