#pragma once
// JobToken: the job's secret, and the challenge-response by which a peer proves it holds it
// without sending it. The launcher makes a random token per job and gives it to its processes
// as PADDLE_JOB_TOKEN (the environment, never a command line). Every listening socket of the
// job (the rendezvous and master store, the PS servers) then asks each connection:
//
//   server -> client   challenge: 32 random hex digits, new for each connection
//   client -> server   proof: hex(HMAC-SHA1(token, purpose + " " + challenge))
//
// where `purpose` names the socket kind ("paddle-store", "paddle-ps"), so a proof for one kind
// is no proof for another. A wrong or missing proof is refused and logged with the peer's
// address. Processes started by hand have no token: the servers then accept anyone, with one
// warning, unless PADDLE_REQUIRE_TOKEN=1 (then a missing token is an error at start).

#include <optional>
#include <string>
#include <string_view>

#include "common/environment.h"

namespace paddle::common {

class JobToken {
 public:
  explicit JobToken(std::string secret) : secret_(std::move(secret)) {}

  // PADDLE_JOB_TOKEN from `env`, or nothing. Throws ConfigError when PADDLE_REQUIRE_TOKEN=1
  // and there is none; `who` names the server or client for that message.
  static std::optional<JobToken> from_environment(const Environment& env, std::string_view who);
  // A new random token (the launcher's, once per job).
  static JobToken generate();

  const std::string& secret() const { return secret_; }
  std::string prove(std::string_view purpose, std::string_view challenge) const;
  // Compares in constant time.
  bool verify(std::string_view purpose, std::string_view challenge, std::string_view proof) const;

 private:
  std::string secret_;
};

// 32 random hex digits.
std::string make_challenge();

inline constexpr size_t kChallengeSize = 32;
inline constexpr size_t kProofSize = 40;  // hex of a 20-byte SHA-1 HMAC

}  // namespace paddle::common
