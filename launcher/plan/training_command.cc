#include "launcher/plan/training_command.h"

#include <unistd.h>

#include <filesystem>
#include <fmt/format.h>

#include "common/error.h"
#include "launcher/plan/address.h"

namespace paddle::launcher {
namespace {

namespace fs = std::filesystem;

bool is_executable_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

}  // namespace

std::vector<std::string> path_directories(const EnvMap& env) {
  const std::string path = get_env(env, "PATH").value_or("/usr/local/bin:/usr/bin:/bin");
  std::vector<std::string> dirs;
  for (size_t start = 0;;) {
    const size_t colon = path.find(':', start);
    const std::string dir = path.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    dirs.push_back(dir.empty() ? "." : dir);
    if (colon == std::string::npos) return dirs;
    start = colon + 1;
  }
}

std::optional<fs::path> search_path(const std::string& name, const EnvMap& env) {
  for (const std::string& dir : path_directories(env))
    if (const fs::path candidate = fs::path(dir) / name; is_executable_file(candidate)) return fs::absolute(candidate);
  return std::nullopt;
}

std::vector<std::string> resolve_training_command(const std::string& script, const std::vector<std::string>& args,
                                                  const EnvMap& env) {
  std::error_code ec;
  std::vector<std::string> argv;
  if (script.ends_with(".py")) {
    if (!fs::is_regular_file(script, ec))
      throw common::UsageError(fmt::format("training script '{}': no such file", script));
    if (::access(script.c_str(), R_OK) != 0)
      throw common::UsageError(fmt::format("training script '{}': not readable", script));
    std::string python = get_env(env, "PYTHON").value_or("python3");
    auto interpreter = python.find('/') != std::string::npos
                           ? (is_executable_file(python) ? std::optional<fs::path>(python) : std::nullopt)
                           : search_path(python, env);
    if (!interpreter)
      throw common::UsageError(fmt::format("training script '{}': the interpreter '{}' is not on PATH (set PYTHON)",
                                   script, python));
    argv = {interpreter->string(), "-u", script};
  } else {
    std::optional<fs::path> exe;
    if (script.find('/') != std::string::npos || fs::exists(script, ec)) {
      if (!fs::exists(script, ec)) throw common::UsageError(fmt::format("training script '{}': no such file", script));
      if (!is_executable_file(script))
        throw common::UsageError(fmt::format("training script '{}': not an executable file (chmod +x, or pass a .py file)",
                                     script));
      exe = fs::absolute(script);
    } else {
      exe = search_path(script, env);
      if (!exe)
        throw common::UsageError(fmt::format("training script '{}': not found in the current directory or on PATH", script));
    }
    argv = {exe->lexically_normal().string()};
  }
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

}  // namespace paddle::launcher
