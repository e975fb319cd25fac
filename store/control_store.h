#pragma once
// ControlStore: the key-value store the launchers of a multi-node job meet in, as their
// ClusterLink (launcher/cluster/cluster_link.h) uses it: etcd's KV, Watch and Lease as the one
// vocabulary of a control plane. Two kinds:
//   MasterStore (master_store.h)                 --master=IP:PORT: our store, which one node's
//                                                launcher hosts;
//   EtcdStore (etcd_store.h)                     --master=etcd://HOST:PORT[,...]: a real etcd.
// Besides keys it answers who is alive, judged on the store's own clock (never by comparing two
// machines' clocks), and which launcher judges liveness and root causes: exactly one at a time.
//
// Waiting is the store's: a launcher waits for a key, or watches prefixes from a revision, in
// one request that the store answers when something changes (the master's store holds it; etcd
// is asked again every 100 ms), so a waiting node costs nothing per round at the master.
//
// Implementations are safe to call from several threads. Every call throws common::PeerError
// when the store cannot be reached.

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/error.h"

namespace paddle::store {

// The store counts this launcher as gone, its keys with it (an etcd lease that ran out while the
// launcher was paused or cut off): nothing it writes now holds, so it must leave the job rather
// than wait on in it.
class LeaseEnded : public common::PeerError {
 public:
  using common::PeerError::PeerError;
};

class ControlStore {
 public:
  struct Entry {
    std::string key, value;
    int64_t order = 0;  // the store's revision of its last write: larger for later writes
  };
  struct Changes {
    int64_t revision = 0;  // the newest revision the answer covers: the next watch's `after`
    std::vector<Entry> entries;
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
  // The value of `key` once it exists, waiting up to `wait`; nothing when it did not come.
  virtual std::optional<std::string> wait_for(const std::string& key, std::chrono::milliseconds wait) = 0;
  // The keys under `prefixes` written after revision `after` (0: all), once there is one,
  // waiting up to `wait` (then no entries), in the order they were written.
  virtual Changes watch(const std::vector<std::string>& prefixes, int64_t after, std::chrono::milliseconds wait) = 0;

  // This launcher is leaving: a wait in flight ends now, and no other starts.
  virtual void stop_waiting() {}

  // This launcher is alive; called every heartbeat interval (a store that heard this launcher
  // lately, on any request, need not be told again). Throws LeaseEnded once the store has
  // counted this launcher gone for good, common::PeerError while it cannot be reached.
  virtual void heartbeat() = 0;
  // The nodes among `ips` whose launchers the store counts as gone, each with why; one request.
  virtual std::map<std::string, std::string> gone(const std::vector<std::string>& ips) = 0;
  // The nodes whose launchers have not been heard from for longer than `over`: they may be gone
  // before the store says so. The judge asks every round: etcd's store measures silence from
  // one look to the next.
  virtual std::vector<std::string> silent(std::chrono::milliseconds over) = 0;
  // The nodes whose launchers are alive now.
  virtual std::vector<std::string> alive_nodes() = 0;
  // Whether this launcher is the one that judges liveness and root causes now.
  virtual bool judges() = 0;
  // Whether the store lives in this launcher, which must then outlive the others' use of it.
  virtual bool hosted_here() const = 0;

  // "the master 10.0.0.1:6069" or "etcd 10.0.0.5:2379".
  virtual std::string describe() const = 0;
  // The requests the store hosted here has served; nothing where it lives elsewhere, or cannot say.
  virtual std::optional<uint64_t> requests_served() { return std::nullopt; }
};

}  // namespace paddle::store
