#pragma once
// What the store's server and every client of it agree on, below everything else of the store:
// an exchange's answer, the headers that prove the job token and name a presence, the refusal
// of a token, and how a key travels in a path. Nothing here opens a socket (http_exchange.h
// does, over a StoreConnection); so the connection, the exchange and the server all stand on
// this header and none on another's.

#include <cctype>
#include <string>
#include <string_view>

#include "common/error.h"

namespace paddle::store {

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

// Percent-encodes everything but [A-Za-z0-9_.-], so that any key is one path segment.
inline std::string encode_key(const std::string& key) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (const unsigned char c : key) {
    if (std::isalnum(c) || c == '_' || c == '-' || c == '.') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

}  // namespace paddle::store
