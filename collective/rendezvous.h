#pragma once
// Rendezvous: brings the trainers of a collective job together before any collective runs.
// Rank 0 serves the key-value store on its own endpoint; every rank registers there and waits
// until all have, printing Paddle's "server not ready, wait 3 sec to retry..." and
// "not ready endpoints:[...]" every 3 s, and failing after the timeout with the ranks that
// never arrived.

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "collective/gloo_store.h"
#include "store/rendezvous_store.h"
#include "store/kv_store_server.h"
#include "store/liveness.h"
#include "common/environment.h"
#include "common/job_token.h"

namespace paddle::collective {

struct RendezvousConfig {
  int rank = 0;
  std::vector<std::string> endpoints;  // rank order; rank 0's hosts the store
  std::chrono::milliseconds timeout{300000};
  std::chrono::milliseconds report_interval{3000};
  std::FILE* report_to = stderr;
  std::optional<common::JobToken> token;  // PADDLE_JOB_TOKEN: rank 0's store asks every peer for it
};

class Rendezvous {
 public:
  // Returns once every rank has registered; throws common::TimeoutError naming the missing ranks,
  // or paddle::store::StoreRefused at once when rank 0's store refuses this process's job token.
  explicit Rendezvous(const RendezvousConfig& config);

  paddle::store::RendezvousStore& store() { return *store_; }
  // The same store as Gloo's Store, for the communicators.
  gloo::rendezvous::Store& gloo_store() { return *gloo_store_; }

  // After a failed collective: which ranks have left the job, as "rank(s) 1 (ip:port) left
  // the job", from the store's presence records; rank 0 when the store itself is gone.
  std::string who_left();

 private:
  RendezvousConfig config_;
  std::unique_ptr<paddle::store::KvStoreServer> server_;  // rank 0 only
  std::unique_ptr<paddle::store::RendezvousStore> store_;
  std::unique_ptr<GlooStore> gloo_store_;
  std::unique_ptr<paddle::store::Liveness> liveness_;
  std::unique_ptr<paddle::store::Liveness::Presence> presence_;
};

// PADDLE_COLLECTIVE_TIMEOUT in seconds (default 300); throws common::ConfigError when malformed.
std::chrono::milliseconds collective_timeout_from(const common::Environment& env);

}  // namespace paddle::collective
