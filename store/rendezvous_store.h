#pragma once
// RendezvousStore: the workers' face of the job's key-value store (kv_store_server.h): Gloo's
// Store contract, set, get and wait (collective/gloo_store.h hands it to Gloo), so that Gloo's own
// rendezvous, NCCL's unique-id exchange and our registration all run through one store. A wait
// is the store's blocking request, so a waiting worker costs the server nothing until the key it
// waits for is written.
//
// Every blocking call retries while the server is not up yet (rank 0 may start it late), within
// the timeout, and fails naming the store's endpoint. Safe to call from several threads.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "common/job_token.h"
#include "store/store_client.h"

namespace paddle::store {

class RendezvousStore {
 public:
  // `timeout` bounds the blocking calls; `request_timeout` each single request. `token`: the
  // job's, proved on the connection (none for a store started without one).
  RendezvousStore(std::string ip, int port, std::chrono::milliseconds timeout,
                  std::chrono::milliseconds request_timeout = std::chrono::seconds(10),
                  std::optional<common::JobToken> token = std::nullopt);

  // Gloo's contract: each throws common::TimeoutError after `timeout` (set, get, the first
  // wait) naming the endpoint or the keys.
  void set(const std::string& key, const std::vector<char>& data);
  std::vector<char> get(const std::string& key);
  void wait(const std::vector<std::string>& keys);
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout);

  // Single attempts, for a caller that polls with its own reporting (the rendezvous, which names
  // the ranks still missing): the value, or nothing when the key is absent; throws
  // common::PeerError when the store is unreachable.
  std::optional<std::string> try_get(const std::string& key);
  // False when the store can't be reached.
  bool try_put(const std::string& key, const std::string& value);

  std::string endpoint() const { return client_.endpoint(); }

 private:
  // The value of `key` once it is there, by `deadline`, through the server not being up yet.
  std::optional<std::string> value_by(const std::string& key, std::chrono::steady_clock::time_point deadline);

  std::chrono::milliseconds timeout_;
  StoreClient client_;
};

}  // namespace paddle::store
