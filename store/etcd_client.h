#pragma once
// EtcdClient: the few etcd v3 calls a multi-node job's launchers need (keys, prefixes, a
// create-if-absent transaction, leases), spoken as JSON to etcd's HTTP gateway (/v3/kv/...,
// /v3/lease/...) with Beast: one short request per call, so the client is safe to share
// between threads. Keys and values travel base64-encoded, as the gateway wants.
//
// A call tries the endpoints in the order given and keeps the first that answers; it throws
// common::PeerError naming every endpoint when none does, or naming etcd's own message when
// etcd refuses the request.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace paddle::store {

struct EtcdEndpoint {
  std::string ip;
  int port = 2379;
  std::string to_string() const { return ip + ":" + std::to_string(port); }
};

struct EtcdKeyValue {
  std::string key, value;
  int64_t mod_revision = 0;  // etcd's revision of the last write: later writes have larger ones
  int64_t lease = 0;         // 0: the key outlives every client
};

class EtcdClient {
 public:
  EtcdClient(std::vector<EtcdEndpoint> endpoints, std::chrono::milliseconds request_timeout);

  // A lease that ends `ttl` after its last keep-alive; the keys attached to it go with it.
  int64_t grant_lease(std::chrono::seconds ttl);
  // False when the lease has already ended (it was not kept alive in time).
  bool keep_alive(int64_t lease);
  void revoke_lease(int64_t lease);

  void put(const std::string& key, const std::string& value, int64_t lease = 0);
  std::optional<std::string> get(const std::string& key);
  // Stores `value` unless `key` exists; returns the value the key holds afterwards.
  std::string create(const std::string& key, const std::string& value, int64_t lease = 0);
  // Every key that starts with `prefix`, sorted by key.
  std::vector<EtcdKeyValue> range(const std::string& prefix);
  void delete_prefix(const std::string& prefix);

  // "etcd 10.0.0.5:2379" or "etcd 10.0.0.5:2379,10.0.0.6:2379".
  std::string describe() const;

 private:
  // POSTs `body` to `path` at the first endpoint that answers; returns the answer's JSON text.
  std::string call(const std::string& path, const std::string& body);

  std::vector<EtcdEndpoint> endpoints_;
  std::chrono::milliseconds request_timeout_;
};

}  // namespace paddle::store
