#include "launcher/cluster/etcd_store.h"

#include <fmt/format.h>

#include "common/error.h"

namespace paddle::launcher {
namespace {

constexpr auto kRequestTimeout = std::chrono::seconds(2);

}  // namespace

EtcdStore::EtcdStore(std::vector<collective::EtcdEndpoint> endpoints, std::string job_id, std::string node_ip,
                     std::chrono::milliseconds dead_after)
    : etcd_(std::move(endpoints), kRequestTimeout),
      job_id_(std::move(job_id)),
      node_ip_(std::move(node_ip)),
      dead_after_(dead_after) {
  // etcd counts leases in whole seconds.
  lease_ = etcd_.grant_lease(std::chrono::ceil<std::chrono::seconds>(dead_after_));
  etcd_.put(heartbeat_key(node_ip_), "1", lease_);
}

EtcdStore::~EtcdStore() { etcd_.revoke_lease(lease_); }

std::vector<ControlStore::Entry> EtcdStore::range(const std::string& prefix) {
  std::vector<Entry> entries;
  for (auto& kv : etcd_.range(prefix)) entries.push_back({std::move(kv.key), std::move(kv.value), kv.mod_revision});
  return entries;
}

void EtcdStore::heartbeat() {
  if (!etcd_.keep_alive(lease_))
    throw common::PeerError(fmt::format("this node's lease at {} ended: no keep-alive reached it for {:.3g} s, so the "
                                        "other nodes count this node as gone",
                                        describe(), dead_after_.count() / 1000.0));
  etcd_.put(heartbeat_key(node_ip_), std::to_string(++beats_), lease_);
}

std::chrono::milliseconds EtcdStore::silence(const std::string& ip) {
  const auto now = std::chrono::steady_clock::now();
  int64_t revision = 0;
  for (const auto& kv : etcd_.range(heartbeat_key(ip)))
    if (kv.key == heartbeat_key(ip)) revision = kv.mod_revision;
  std::lock_guard lock(seen_mutex_);
  auto& [seen_revision, seen_at] = seen_[ip];
  if (revision != seen_revision || seen_at == std::chrono::steady_clock::time_point{}) {
    seen_revision = revision;
    seen_at = now;
  }
  return std::chrono::duration_cast<std::chrono::milliseconds>(now - seen_at);
}

std::optional<std::string> EtcdStore::gone(const std::string& ip) {
  if (ip == node_ip_ || etcd_.get(heartbeat_key(ip))) return std::nullopt;
  return fmt::format("its lease at {} ended: no keep-alive for {:.3g} s (its launcher was killed, or it is cut off from "
                     "the network)",
                     describe(), dead_after_.count() / 1000.0);
}

std::vector<std::string> EtcdStore::alive_nodes() {
  std::vector<std::string> alive;
  const std::string prefix = heartbeat_key("");
  for (const auto& kv : etcd_.range(prefix)) alive.push_back(kv.key.substr(prefix.size()));
  return alive;
}

}  // namespace paddle::launcher
