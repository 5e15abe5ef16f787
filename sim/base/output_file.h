// Output files, safely: checked before any work, written to a temporary file in the same folder
// and renamed into place, several files of one output (sweep/plan JSON + CSV) together or not at
// all.
#ifndef SERVESIM_SIM_BASE_OUTPUT_FILE_H_
#define SERVESIM_SIM_BASE_OUTPUT_FILE_H_

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "sim/base/error.h"
#include "sim/base/exit_signals.h"
#include "sim/base/input_files.h"

namespace servesim {

// Why `path` cannot be an output, or "" when it can: it exists and is not a regular file (a
// symlink: rename would replace the link, not write through it; a directory, FIFO, socket or
// device: /dev/full as root was replaced by a JSON file), or it is one of the command's inputs
// (`inputs`, or a file registered by sim/base/input_files.h) through any path: writing it would
// destroy the input.
inline std::string output_path_problem(const std::string& path,
                                       const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(target, ec);
  if (!fs::exists(st)) return "";
  if (const char* kind = non_regular_kind(st.type())) {
    return std::string("is ") + kind +
           "; expected a new or regular file (outputs are written to a temporary file and renamed "
           "into place)";
  }
  std::string in = registered_input_equal_to(path);
  for (size_t i = 0; in.empty() && i < inputs.size(); ++i) {
    std::error_code eq;
    if (!inputs[i].empty() && fs::equivalent(target, fs::path(inputs[i]), eq) && !eq) {
      in = inputs[i];
    }
  }
  if (in.empty()) return "";
  return "is also an input of this command ('" + in +
         "'); expected a different output path (writing it would destroy the input)";
}

// Refuses, with ConfigError naming `what` (the flag) and `path`, an output path that is empty,
// whose folder does not exist, or that output_path_problem refuses. Call it before any work, for
// every output path, after the command's inputs are known (`inputs`, or registered).
inline void check_output_path(const std::string& path, const std::string& what,
                              const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  if (path.empty()) throw ConfigError(what + ": empty path; expected a file name");
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw ConfigError(what + ": '" + path + "': folder '" + dir.string() +
                      "' does not exist; expected a path in an existing folder");
  }
  const std::string problem = output_path_problem(path, inputs);
  if (!problem.empty()) throw ConfigError(what + ": '" + path + "' " + problem);
}

// The rule again at write time (every writer calls it before it creates its temporary file): a
// path can have become a symlink or FIFO since the command checked it, and a file read during the
// run (a length file a workload names, a dataset) is registered only when it is read.
inline void refuse_output_at_write(const std::string& path) {
  const std::string problem = output_path_problem(path, {});
  if (!problem.empty()) throw ConfigError(path + ": not written: it " + problem);
}

// rename(2) of `from` to `to` that fails with EEXIST instead of replacing an existing `to`
// (renameat2 RENAME_NOREPLACE; a hard link then unlink where the filesystem lacks it). Returns 0
// or the errno.
inline int rename_no_replace(const std::string& from, const std::string& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS) return errno;
  if (::link(from.c_str(), to.c_str()) != 0) return errno;
  ::unlink(from.c_str());
  return 0;
}

// Process-wide switch for write_files_atomically (default on). The ranks > 0 of an MPI job turn it
// off so that rank 0 alone writes a study's files (sim/app/study.cpp); nothing else touches it.
inline std::atomic<bool>& output_files_enabled() {
  static std::atomic<bool> enabled{true};
  return enabled;
}

// Writes every (path, text) pair: all to temporary files in their own folders first, then renames
// them into place. If any write fails, no file is renamed and the temporaries are removed; a
// failing rename (only possible if the folder changed under us) removes the files already renamed
// in this call, so the outputs appear together or not at all. Throws ConfigError naming the path,
// before writing anything, when output_path_problem refuses one of the paths.
inline void write_files_atomically(const std::vector<std::pair<std::string, std::string>>& files) {
  if (!output_files_enabled().load()) return;
  namespace fs = std::filesystem;
  std::vector<std::string> temps;
  // Removed by the exit-signal handler if SIGINT or SIGTERM kills the process mid-write.
  std::deque<TempFileRegistration> registered;
  auto cleanup = [&temps]() {
    for (const std::string& t : temps) {
      std::error_code ignored;
      fs::remove(t, ignored);
    }
  };
  for (const auto& [path, text] : files) refuse_output_at_write(path);
  for (const auto& [path, text] : files) {
    const fs::path target(path);
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
      cleanup();
      throw ConfigError(path + ": cannot write output: folder '" + dir.string() +
                        "' does not exist");
    }
    const std::string tmp = path + ".tmp." + std::to_string(static_cast<long long>(::getpid()));
    registered.emplace_back(tmp);
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      cleanup();
      throw ConfigError(path + ": cannot write output (cannot create '" + tmp + "')");
    }
    temps.push_back(tmp);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.flush();
    if (!out) {
      out.close();
      cleanup();
      throw ConfigError(path + ": cannot write output (write to '" + tmp + "' failed)");
    }
  }
  for (size_t i = 0; i < files.size(); ++i) {
    std::error_code ec;
    fs::rename(temps[i], files[i].first, ec);
    if (ec) {
      for (size_t k = 0; k < i; ++k) {
        std::error_code ignored;
        fs::remove(files[k].first, ignored);
      }
      temps.erase(temps.begin(), temps.begin() + static_cast<std::ptrdiff_t>(i));
      cleanup();
      throw ConfigError(files[i].first + ": cannot write output (rename failed: " + ec.message() +
                        ")");
    }
  }
}

}  // namespace servesim

#endif  // SERVESIM_SIM_BASE_OUTPUT_FILE_H_
