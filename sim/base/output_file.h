// Output files, safely: checked before any work, written to a temporary file in the same folder
// and renamed into place, several files of one output (sweep/plan JSON + CSV) together or not at
// all.
#ifndef SERVESIM_SIM_BASE_OUTPUT_FILE_H_
#define SERVESIM_SIM_BASE_OUTPUT_FILE_H_

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "sim/base/error.h"

namespace servesim {

// Refuses, with ConfigError naming `what` (the flag) and `path`, an output path that
//  * is empty, or whose folder does not exist;
//  * exists and is not a regular file: a symlink (rename would replace the link, not write
//    through it), a directory, a FIFO, a socket or a device (/dev/full as root was replaced by a
//    JSON file);
//  * is one of the command's inputs (same file, through any path): writing it would destroy it.
// Call it before any work, for every output path.
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
  const fs::file_status st = fs::symlink_status(target, ec);
  if (fs::exists(st)) {
    const char* kind = nullptr;
    switch (st.type()) {
      case fs::file_type::regular: break;
      case fs::file_type::symlink: kind = "a symbolic link"; break;
      case fs::file_type::directory: kind = "a directory"; break;
      case fs::file_type::fifo: kind = "a FIFO"; break;
      case fs::file_type::socket: kind = "a socket"; break;
      case fs::file_type::block:
      case fs::file_type::character: kind = "a device"; break;
      default: kind = "not a regular file"; break;
    }
    if (kind != nullptr) {
      throw ConfigError(what + ": '" + path + "' is " + kind +
                        "; expected a new or regular file (outputs are written to a temporary "
                        "file and renamed into place)");
    }
    for (const std::string& in : inputs) {
      if (in.empty()) continue;
      std::error_code eq;
      if (fs::equivalent(target, fs::path(in), eq) && !eq) {
        throw ConfigError(what + ": '" + path + "' is also an input of this command ('" + in +
                          "'); expected a different output path (writing it would destroy the "
                          "input)");
      }
    }
  }
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
// in this call, so the outputs appear together or not at all. Throws ConfigError naming the path.
inline void write_files_atomically(const std::vector<std::pair<std::string, std::string>>& files) {
  if (!output_files_enabled().load()) return;
  namespace fs = std::filesystem;
  std::vector<std::string> temps;
  auto cleanup = [&temps]() {
    for (const std::string& t : temps) {
      std::error_code ignored;
      fs::remove(t, ignored);
    }
  };
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
