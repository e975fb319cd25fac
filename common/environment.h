#pragma once
// Environment: a process environment as an ordered map, captured once at start-up and then
// passed explicitly, so that everything reading it is a pure function its tests can feed.

#include <chrono>
#include <map>
#include <optional>
#include <string>

namespace paddle::common {

using Environment = std::map<std::string, std::string>;

// The variables of a NAME=VALUE array (environ, or a test's own).
Environment capture_environment(const char* const* envp);
// This process's environment.
Environment current_environment();

// The value of `name`, or nothing when unset. An empty value counts as set.
std::optional<std::string> get_env(const Environment& env, const std::string& name);

// `name` as an integer, `fallback` when unset or empty; ConfigError naming it when malformed.
int64_t env_int(const Environment& env, const std::string& name, int64_t fallback);
// `name` as a positive number of seconds, `fallback` when unset or empty.
std::chrono::milliseconds env_seconds(const Environment& env, const std::string& name,
                                      std::chrono::milliseconds fallback);

}  // namespace paddle::common
