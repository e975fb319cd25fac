#pragma once
// Liveness: which ranks of the job are still there, kept by the store's server from open
// connections rather than heartbeats. A rank announces itself once and holds the returned
// Presence; when its process exits or dies the connection closes and the server records the
// name as lost. After a failed collective, survivors ask who left, so the error names the peer
// instead of saying "connection reset".

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/job_token.h"

namespace paddle::store {

class Liveness {
 public:
  Liveness(std::string ip, int port, std::optional<common::JobToken> token = std::nullopt)
      : ip_(std::move(ip)), port_(port), token_(std::move(token)) {}

  // Present while the returned object lives. Throws PeerError when the store can't be reached.
  class Presence {
   public:
    virtual ~Presence() = default;
  };
  std::unique_ptr<Presence> announce(const std::string& name);

  // The names whose presence has ended, sorted; nothing when the
  // store itself is unreachable (its host, rank 0, is gone).
  std::optional<std::vector<std::string>> lost();

 private:
  std::string ip_;
  int port_;
  std::optional<common::JobToken> token_;
};

}  // namespace paddle::store
