#include "collective/rendezvous.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "collective/communicator.h"
#include "store/store_wire.h"
#include "common/parse.h"
#include "common/wait.h"

namespace paddle::collective {
std::string Rendezvous::who_left() {
  // The peer's connection may close a moment before the store hears of it.
  std::optional<std::vector<std::string>> lost;
  const std::string self = std::to_string(config_.rank);
  common::wait_until(
      std::chrono::seconds(1),
      [&] {
        lost = liveness_->lost();
        return !lost || std::any_of(lost->begin(), lost->end(), [&](const std::string& name) { return name != self; });
      },
      std::chrono::milliseconds(100));
  if (!lost)
    return fmt::format("rank 0 ({}), which hosts the rendezvous store, left the job", config_.endpoints.at(0));
  std::vector<std::string> names;
  for (const std::string& name : *lost) {
    const int rank = static_cast<int>(common::parse_int(name, "the store's lost record"));
    if (rank != config_.rank && rank >= 0 && rank < static_cast<int>(config_.endpoints.size()))
      names.push_back(fmt::format("{} ({})", rank, config_.endpoints[rank]));
  }
  if (names.empty()) return "no rank has left the job";
  return fmt::format("rank(s) {} left the job", fmt::join(names, ", "));
}

std::chrono::milliseconds collective_timeout_from(const common::Environment& env) {
  return common::env_seconds(env, "PADDLE_COLLECTIVE_TIMEOUT", std::chrono::seconds(300));
}

Rendezvous::Rendezvous(const RendezvousConfig& config) : config_(config) {
  const int world = static_cast<int>(config.endpoints.size());
  auto [host, port] = common::parse_endpoint(config.endpoints.at(0), "rank 0's endpoint (PADDLE_TRAINER_ENDPOINTS)");
  if (config.rank == 0) {
    try {
      server_ = std::make_unique<paddle::store::KvStoreServer>(host, port, config.token);
    } catch (const std::exception& e) {
      throw CollectiveError(fmt::format("rank 0 cannot host the rendezvous store: {}", e.what()));
    }
  }
  store_ = std::make_unique<paddle::store::RendezvousStore>(host, port, config.timeout, std::chrono::seconds(10), config.token);
  gloo_store_ = std::make_unique<GlooStore>(*store_);
  liveness_ = std::make_unique<paddle::store::Liveness>(host, port, config.token);

  common::WaitOptions wait;
  wait.timeout = config.timeout;
  wait.report_interval = config.report_interval;
  wait.report_to = config.report_to;
  bool registered = false;
  std::vector<int> missing;
  common::wait_until_ready(
      wait,
      [&] {
        missing.clear();
        try {
          if (!registered)
            registered = store_->try_put(fmt::format("rendezvous/rank/{}", config.rank), config.endpoints.at(config.rank));
          if (registered) {
            if (!presence_) presence_ = liveness_->announce(std::to_string(config.rank));
            for (int r = 0; r < world; ++r)
              if (!store_->try_get(fmt::format("rendezvous/rank/{}", r))) missing.push_back(r);
          } else {
            missing = {0};  // the store itself (rank 0) is not up yet
          }
        } catch (const paddle::store::StoreRefused&) {
          throw;  // rank 0 is up, and waiting would not change its answer
        } catch (const common::PeerError&) {
          missing = {0};  // rank 0's store went away between two requests: wait for it again
        }
        std::vector<std::string> endpoints;
        for (int r : missing) endpoints.push_back(config.endpoints[r]);
        return endpoints;
      },
      [&](const std::vector<std::string>& endpoints) {
        return fmt::format("rendezvous timed out after {} s on rank {}: rank(s) {} ({}) did not arrive; check their logs",
                           config.timeout.count() / 1000, config.rank, fmt::join(missing, ","),
                           fmt::join(endpoints, ","));
      });
}

}  // namespace paddle::collective
