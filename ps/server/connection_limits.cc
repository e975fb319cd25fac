#include "ps/server/connection_limits.h"

#include <fmt/format.h>

#include "common/error.h"

namespace paddle::ps {
namespace {

int64_t bounded(const common::Environment& env, const char* name, int64_t fallback, int64_t low, int64_t high) {
  const int64_t value = common::env_int(env, name, fallback);
  if (value < low || value > high)
    throw common::ConfigError(fmt::format("{}={} is out of range: it must be from {} to {}", name, value, low, high));
  return value;
}

std::chrono::milliseconds seconds_or_never(const common::Environment& env, const char* name,
                                           std::chrono::milliseconds fallback) {
  if (common::get_env(env, name).value_or("") == "0") return std::chrono::milliseconds(0);
  return common::env_seconds(env, name, fallback);
}

}  // namespace

ConnectionLimits ConnectionLimits::from_environment(const common::Environment& env) {
  ConnectionLimits limits;
  limits.max_frame_bytes = static_cast<uint32_t>(
      bounded(env, "PADDLE_PS_MAX_FRAME_BYTES", limits.max_frame_bytes, 1024, UINT32_MAX));
  limits.frame_timeout = common::env_seconds(env, "PADDLE_PS_FRAME_TIMEOUT", limits.frame_timeout);
  limits.idle_timeout = seconds_or_never(env, "PADDLE_PS_IDLE_TIMEOUT", limits.idle_timeout);
  limits.max_connections_per_peer = static_cast<int>(
      bounded(env, "PADDLE_PS_MAX_CONNECTIONS_PER_PEER", limits.max_connections_per_peer, 1, 1 << 20));
  limits.max_connections =
      static_cast<int>(bounded(env, "PADDLE_PS_MAX_CONNECTIONS", limits.max_connections, 1, 1 << 20));
  return limits;
}

}  // namespace paddle::ps
