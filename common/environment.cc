#include "common/environment.h"

#include <fmt/format.h>

#include <cstring>

#include "common/error.h"
#include "common/parse.h"

extern char** environ;

namespace paddle::common {

Environment capture_environment(const char* const* envp) {
  Environment env;
  for (; envp != nullptr && *envp != nullptr; ++envp) {
    const char* eq = std::strchr(*envp, '=');
    if (eq != nullptr) env.emplace(std::string(*envp, eq), std::string(eq + 1));
  }
  return env;
}

Environment current_environment() { return capture_environment(environ); }

std::optional<std::string> get_env(const Environment& env, const std::string& name) {
  auto it = env.find(name);
  if (it == env.end()) return std::nullopt;
  return it->second;
}

int64_t env_int(const Environment& env, const std::string& name, int64_t fallback) {
  auto value = get_env(env, name);
  if (!value || value->empty()) return fallback;
  return parse_int(*value, name);
}

std::chrono::milliseconds env_seconds(const Environment& env, const std::string& name,
                                      std::chrono::milliseconds fallback) {
  auto value = get_env(env, name);
  if (!value || value->empty()) return fallback;
  const double seconds = parse_double(*value, name);
  if (seconds <= 0) throw ConfigError(fmt::format("{}='{}' is not a positive number of seconds", name, *value));
  return std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
}

}  // namespace paddle::common
