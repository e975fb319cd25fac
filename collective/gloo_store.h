#pragma once
// GlooStore: Gloo's Store contract (set, get, wait) over the workers' face of the job's
// key-value store (paddle::store::RendezvousStore), so that Gloo's own rendezvous
// (connectFullMesh), NCCL's unique-id exchange, the node map and the shared-memory segments all
// run through the job's one store. A seam of its own, so that paddle_store, which the launcher
// stands on too, does not bring Gloo (and with it hiredis, ibverbs and libnl, a third of the
// launcher's dynamic linking) into the launcher.

#include <gloo/rendezvous/store.h>

#include <chrono>
#include <string>
#include <vector>

#include "store/rendezvous_store.h"

namespace paddle::collective {

class GlooStore : public gloo::rendezvous::Store {
 public:
  // `store` must outlive this.
  explicit GlooStore(paddle::store::RendezvousStore& store) : store_(store) {}

  void set(const std::string& key, const std::vector<char>& data) override { store_.set(key, data); }
  std::vector<char> get(const std::string& key) override { return store_.get(key); }
  void wait(const std::vector<std::string>& keys) override { store_.wait(keys); }
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override {
    store_.wait(keys, timeout);
  }

 private:
  paddle::store::RendezvousStore& store_;
};

}  // namespace paddle::collective
