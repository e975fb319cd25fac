#include "environment.h"

#include <cstring>

namespace paddle_launch {

EnvMap capture_environment(const char* const* envp) {
  EnvMap env;
  for (; envp != nullptr && *envp != nullptr; ++envp) {
    const char* eq = std::strchr(*envp, '=');
    if (eq == nullptr) continue;
    env.emplace(std::string(*envp, eq), std::string(eq + 1));
  }
  return env;
}

std::optional<std::string> get_env(const EnvMap& env, const std::string& name) {
  auto it = env.find(name);
  if (it == env.end()) return std::nullopt;
  return it->second;
}

}  // namespace paddle_launch
