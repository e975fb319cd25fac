#pragma once
// The command every launched process runs: the training script resolved to a file that exists
// and can run, so that a typo fails before anything starts instead of in every child.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "launcher/plan/environment.h"

namespace paddle::launcher {

// An executable given as a path, found in the current directory, or found on PATH; or a `.py`
// file, run as `python3 -u script args...` (PYTHON overrides the interpreter). Throws common::UsageError
// naming the script when it is missing or cannot be run.
// The executable `name` in the first directory of env's PATH that holds one.
std::optional<std::filesystem::path> search_path(const std::string& name, const EnvMap& env);
// env's PATH, directory by directory (an empty entry is the current directory, "."); the
// shell's default where PATH is unset.
std::vector<std::string> path_directories(const EnvMap& env);

std::vector<std::string> resolve_training_command(const std::string& script, const std::vector<std::string>& args,
                                                  const EnvMap& env);

}  // namespace paddle::launcher
