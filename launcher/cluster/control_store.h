#pragma once
// ControlStore: the key-value store the launchers of a multi-node job meet in, as ClusterLink
// (cluster_link.h) uses it. Two kinds:
//   MasterStore (master_store.h)  --master=IP:PORT: the HTTP store one node's launcher hosts;
//   EtcdStore (etcd_store.h)      --master=etcd://HOST:PORT[,...]: a real etcd, with leases.
// Besides keys it answers who is alive, judged on the store's own clock (never by comparing two
// machines' clocks), and which launcher judges liveness and root causes: exactly one at a time.
//
// Implementations are safe to call from several threads. Every call throws common::PeerError
// when the store cannot be reached.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace paddle::launcher {

class ControlStore {
 public:
  struct Entry {
    std::string key, value;
    int64_t order = 0;  // larger for later writes
  };

  virtual ~ControlStore() = default;

  virtual void put(const std::string& key, const std::string& value) = 0;
  // A key that lives only while this launcher does (etcd: on its lease; the master's store has
  // no such tie and keeps it).
  virtual void put_while_alive(const std::string& key, const std::string& value) = 0;
  virtual std::optional<std::string> get(const std::string& key) = 0;
  // Stores `value` unless `key` exists; returns what the key holds afterwards.
  virtual std::string add_if_absent(const std::string& key, const std::string& value) = 0;
  // The keys that start with `prefix`, sorted by key.
  virtual std::vector<Entry> range(const std::string& prefix) = 0;
  // Forgets the keys that start with `prefix` where the store outlives the job (etcd).
  virtual void remove_prefix(const std::string& prefix) = 0;

  // This launcher is alive; called every heartbeat interval.
  virtual void heartbeat() = 0;
  // Why the launcher of node `ip` is judged gone, or nothing while it is alive (or was never seen).
  virtual std::optional<std::string> gone(const std::string& ip) = 0;
  // How long since the launcher of node `ip` last sent a heartbeat, as far as this launcher can
  // tell (zero when it cannot): a long silence means it may be gone before the store says so.
  virtual std::chrono::milliseconds silence(const std::string& ip) = 0;
  // The nodes whose launchers are alive now.
  virtual std::vector<std::string> alive_nodes() = 0;
  // Whether this launcher is the one that judges liveness and root causes now.
  virtual bool judges() = 0;
  // Whether the store lives in this launcher, which must then outlive the others' use of it.
  virtual bool hosted_here() const = 0;

  // "the master 10.0.0.1:6069" or "etcd 10.0.0.5:2379".
  virtual std::string describe() const = 0;
};

}  // namespace paddle::launcher
