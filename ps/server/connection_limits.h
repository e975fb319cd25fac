#pragma once
// ConnectionLimits: what one peer may cost a parameter server. A server serves whoever proves the
// job's token, but a broken or hostile peer (one that stops mid-frame, sends a byte a second,
// announces a 4 GB frame, or opens a thousand connections and says nothing) must not hold its
// memory or its file descriptors, nor slow the honest workers. Each limit closes the offending
// connection, or refuses it at accept, and the server prints the peer's address and the limit's
// variable.
//
// Memory: a body is read in chunks as its bytes arrive, so a connection holds at most what its
// peer has really sent, never more than max_frame_bytes; with max_connections that bounds it all.

#include <chrono>
#include <cstdint>

#include "common/environment.h"
#include "ps/wire/protocol.h"

namespace paddle::ps {

struct ConnectionLimits {
  // PADDLE_PS_MAX_FRAME_BYTES: a frame announcing a larger body is closed before it is read.
  uint32_t max_frame_bytes = kDefaultMaxBody;
  // PADDLE_PS_FRAME_TIMEOUT (seconds): the handshake, and each frame once its first byte is in,
  // must arrive whole within it; each reply must be taken within it too.
  std::chrono::milliseconds frame_timeout{std::chrono::seconds(60)};
  // PADDLE_PS_IDLE_TIMEOUT (seconds, 0: never): a connection silent between frames for longer is
  // closed. Long by default: a worker may think for minutes between two requests.
  std::chrono::milliseconds idle_timeout{std::chrono::hours(1)};
  // PADDLE_PS_MAX_CONNECTIONS_PER_PEER: connections one IP address may hold at once (a worker
  // holds one per server; loopback jobs put every worker on one address).
  int max_connections_per_peer = 256;
  // PADDLE_PS_MAX_CONNECTIONS: connections the server holds at once, from everyone.
  int max_connections = 4096;

  // The defaults above, overridden by the variables of `env`; ConfigError naming the variable
  // for a malformed or out-of-range value.
  static ConnectionLimits from_environment(const common::Environment& env);
};

}  // namespace paddle::ps
