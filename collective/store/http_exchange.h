#pragma once
// One HTTP/1.1 request to the job's store on a connection of its own (StoreConnection, once),
// and what the store's clients share. Internal to collective/.

#include <chrono>
#include <optional>
#include <string>
#include <utility>

#include <boost/beast/http/verb.hpp>

#include "common/error.h"
#include "common/job_token.h"

namespace paddle::collective {

struct HttpAnswer {
  int status = 0;
  std::string body;
};

// The socket kind a store's proofs are for (common/job_token.h).
inline constexpr std::string_view kStoreProofPurpose = "paddle-store";
// The header a request proves the job token with, after GET /auth/challenge on its connection.
inline constexpr const char* kProofHeader = "X-Paddle-Proof";
// The header that names the presence a request renews (a launcher's "JOB.hb.IP"): its first
// request announces it on its connection, and the presence is lost when that connection closes
// or, on a store that sweeps, when nothing is heard from it for too long.
inline constexpr const char* kPresenceHeader = "X-Paddle-Presence";

// The store refused this process's job token (HTTP 401). Final, unlike a store not up yet: the
// message names the store and PADDLE_JOB_TOKEN.
class StoreRefused : public common::PeerError {
 public:
  using common::PeerError::PeerError;
};

// `target` is the request path ("/kv/KEY"); nothing when the server can't be reached or the
// exchange fails within `timeout`; StoreRefused when it refuses the token. With a token, the
// request first answers the server's challenge on the same connection.
std::optional<HttpAnswer> http_exchange(const std::string& ip, int port, boost::beast::http::verb verb,
                                        const std::string& target, const std::string& body,
                                        std::chrono::milliseconds timeout,
                                        const std::optional<common::JobToken>& token = std::nullopt);

// Percent-encodes everything but [A-Za-z0-9_.-], so that any key is one path segment.
std::string encode_key(const std::string& key);

}  // namespace paddle::collective
