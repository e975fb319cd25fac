#pragma once
// EnvMap: a process environment as an ordered map, captured once at start-up and passed
// explicitly, so that planning is a pure function of its inputs and tests can feed their own.

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace paddle_launch {

using EnvMap = std::map<std::string, std::string>;

// The variables a launched process gets on top of the inherited environment, in the order the
// "Distributed Envs" table and the dry run show them.
using EnvList = std::vector<std::pair<std::string, std::string>>;

EnvMap capture_environment(const char* const* envp);

// The value of `name`, or nothing when unset. An empty value counts as set.
std::optional<std::string> get_env(const EnvMap& env, const std::string& name);

}  // namespace paddle_launch
