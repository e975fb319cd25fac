#pragma once
// HttpStore: the job's rendezvous store as Gloo's Store contract (set, get, wait), spoken over
// HTTP to a KvStoreServer, so that Gloo's own rendezvous (connectFullMesh), NCCL's unique-id
// exchange and our registration all run through one store. Every blocking call retries while
// the server is not up yet, within the timeout, and fails naming the store's endpoint.
// Liveness ("who left") is a separate concern: see liveness.h.

#include <gloo/rendezvous/store.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "common/job_token.h"

namespace paddle::collective {

class HttpStore : public gloo::rendezvous::Store {
 public:
  // `timeout` bounds the blocking calls; `request_timeout` each single request. `token`: the
  // job's, proved on every connection (none for a store started without one).
  HttpStore(std::string ip, int port, std::chrono::milliseconds timeout,
            std::chrono::milliseconds request_timeout = std::chrono::seconds(10),
            std::optional<common::JobToken> token = std::nullopt);

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override;

  // Single attempts, for callers that poll with their own reporting (the rendezvous):
  // the value, or nothing when the key is absent; throws PeerError when unreachable.
  std::optional<std::string> try_get(const std::string& key);
  // False when the server can't be reached.
  bool try_put(const std::string& key, const std::string& value);
  // Stores `value` unless `key` is there already; returns the value the key holds afterwards
  // (`value` when this call stored it). Throws PeerError when unreachable.
  std::string add_if_absent(const std::string& key, const std::string& value);
  // Time since `key` was last written, on the server's clock; nothing when absent. Throws
  // PeerError when unreachable.
  std::optional<std::chrono::milliseconds> age(const std::string& key);
  // The keys that start with `prefix` (made of [A-Za-z0-9_.-]). Throws PeerError when unreachable.
  std::vector<std::string> keys(const std::string& prefix);

  std::string endpoint() const { return ip_ + ":" + std::to_string(port_); }

 private:
  std::string ip_;
  int port_;
  std::chrono::milliseconds timeout_;
  std::chrono::milliseconds request_timeout_;
  std::optional<common::JobToken> token_;
};

}  // namespace paddle::collective
