// The files a command reads: checked when opened (a regular file, not too large to read whole) and
// registered, so that no output of the same command can replace one of them.
//
// Contract:
//  - check_input_file(path, what, max_bytes) is called by every reader before it opens a file,
//    and by the commands for the inputs they know before any work (with the flag as `what`). It
//    refuses, with ConfigError naming `what` (a flag, or "" for the path alone), the path, what it
//    is and what was expected: a directory, FIFO, socket or device (/dev/zero would be read
//    forever; a FIFO is consumed by the first read), and a file larger than `max_bytes` (0 = no
//    limit: readers that stream line by line). A missing file passes: its reader says "cannot
//    open". Symbolic links to a regular file are inputs like the file.
//  - Every path checked while an InputScope is open is registered (thread-safe: the jobs of a
//    study read their traces in parallel). run_cli opens one scope per command; a nested run_cli
//    (merge replaying a study) shares the outer scope's files, so a study's outputs cannot
//    replace the part files being merged. Outside any scope nothing is registered.
//  - registered_input_equal_to(p) is the registered input that is the same file as `p` (same
//    device and inode: through any path, hard link or symlink), or "" when none is.
//  - The size limits are documented in docs/cli.md ("Input files") and docs/reliability.md.
#ifndef SERVESIM_SIM_BASE_INPUT_FILES_H_
#define SERVESIM_SIM_BASE_INPUT_FILES_H_

#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "sim/base/error.h"

namespace servesim {

// Settings files read whole and parsed as JSON: --config, model config.json, GPU and link JSON,
// calibration profiles and kernel tables, workload files, sidecars. The largest shipped one (a
// kernel table) is under 1 MiB.
inline constexpr uint64_t kMaxSettingsFileBytes = uint64_t{64} << 20;
// Data files read whole into memory: measured result files, part files, vLLM-result traces and
// profiling CSVs (their parsed form takes a few times the text). Traces and datasets read line by
// line have no size limit.
inline constexpr uint64_t kMaxDataFileBytes = uint64_t{1} << 30;

// "64 MiB", "1 GiB", "70.5 MiB": sizes in messages.
inline std::string size_text(uint64_t bytes) {
  char buf[32];
  if (bytes >= (uint64_t{1} << 30) && bytes % (uint64_t{1} << 30) == 0) {
    std::snprintf(buf, sizeof buf, "%llu GiB", static_cast<unsigned long long>(bytes >> 30));
  } else if (bytes % (uint64_t{1} << 20) == 0) {
    std::snprintf(buf, sizeof buf, "%llu MiB", static_cast<unsigned long long>(bytes >> 20));
  } else {
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  }
  return buf;
}

// "a directory", "a FIFO", ... for a file that is not a regular one; nullptr for a regular file
// (and for a missing one).
inline const char* non_regular_kind(std::filesystem::file_type t) {
  using T = std::filesystem::file_type;
  switch (t) {
    case T::regular:
    case T::none:
    case T::not_found:
      return nullptr;
    case T::symlink:
      return "a symbolic link";
    case T::directory:
      return "a directory";
    case T::fifo:
      return "a FIFO";
    case T::socket:
      return "a socket";
    case T::block:
    case T::character:
      return "a device";
    default:
      return "not a regular file";
  }
}

// The process-wide registry of the current command's inputs (see the file comment).
class InputRegistry {
 public:
  static InputRegistry& instance() {
    static InputRegistry registry;
    return registry;
  }
  void open_scope() {
    std::lock_guard<std::mutex> lock(mu_);
    if (depth_++ == 0) files_.clear();
  }
  void close_scope() {
    std::lock_guard<std::mutex> lock(mu_);
    if (depth_ > 0 && --depth_ == 0) files_.clear();
  }
  void add(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return;  // missing: its reader fails, nothing to protect
    std::lock_guard<std::mutex> lock(mu_);
    if (depth_ == 0) return;
    for (const File& f : files_) {
      if (f.dev == st.st_dev && f.ino == st.st_ino) return;
    }
    files_.push_back({path, st.st_dev, st.st_ino});
  }
  // The registered paths, in registration order.
  std::vector<std::string> paths() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> out;
    for (const File& f : files_) out.push_back(f.path);
    return out;
  }
  std::string equal_to(const std::string& path) const {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return "";
    std::lock_guard<std::mutex> lock(mu_);
    for (const File& f : files_) {
      if (f.dev == st.st_dev && f.ino == st.st_ino) return f.path;
    }
    return "";
  }

 private:
  struct File {
    std::string path;
    dev_t dev;
    ino_t ino;
  };
  mutable std::mutex mu_;
  int depth_ = 0;
  std::vector<File> files_;
};

// Registers the inputs of one command while it runs (RAII).
class InputScope {
 public:
  InputScope() { InputRegistry::instance().open_scope(); }
  ~InputScope() { InputRegistry::instance().close_scope(); }
  InputScope(const InputScope&) = delete;
  InputScope& operator=(const InputScope&) = delete;
};

inline std::string registered_input_equal_to(const std::string& path) {
  return InputRegistry::instance().equal_to(path);
}

// See the file comment.
inline void check_input_file(const std::string& path, const std::string& what, uint64_t max_bytes) {
  namespace fs = std::filesystem;
  const std::string who = what.empty() ? "'" + path + "'" : what + ": '" + path + "'";
  const std::string limit = max_bytes > 0 ? " of at most " + size_text(max_bytes) : std::string();
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);  // follows symlinks
  if (const char* kind = non_regular_kind(st.type())) {
    throw ConfigError(who + " is " + kind + "; expected a regular file" + limit);
  }
  if (fs::is_regular_file(st) && max_bytes > 0) {
    const uintmax_t size = fs::file_size(path, ec);
    if (!ec && size > max_bytes) {
      throw ConfigError(who + " is " + size_text(size) + "; expected a file" + limit +
                        " (the limit for files of its kind, docs/cli.md \"Input files\")");
    }
  }
  InputRegistry::instance().add(path);
}

}  // namespace servesim

#endif  // SERVESIM_SIM_BASE_INPUT_FILES_H_
