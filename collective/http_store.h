#pragma once
// HttpStore: a client of KvStoreServer that is also a gloo::rendezvous::Store, so Gloo's own
// rendezvous (connectFullMesh) runs through the job's store. Every call retries while the server
// is not up yet, within the timeout, and fails naming the store's endpoint.

#include <gloo/rendezvous/store.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace paddle::collective {

class HttpStore : public gloo::rendezvous::Store {
 public:
  HttpStore(std::string ip, int port, std::chrono::milliseconds timeout);

  void set(const std::string& key, const std::vector<char>& data) override;
  std::vector<char> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys) override;
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) override;

  // One attempt: the value, or nothing when the key is absent. Throws when unreachable.
  std::optional<std::string> try_get(const std::string& key);
  // Retries until the timeout while the server is unreachable.
  void put(const std::string& key, const std::string& value);
  // One attempt: false when the server can't be reached.
  bool try_put(const std::string& key, const std::string& value);

  // Marks `name` present for as long as the returned connection stays open (see KvStoreServer).
  class Presence;
  std::unique_ptr<Presence> announce_presence(const std::string& name);
  // Names whose presence connection has closed, comma-separated; nothing if the store itself is
  // unreachable.
  std::optional<std::string> lost();

  std::string endpoint() const { return ip_ + ":" + std::to_string(port_); }

 private:
  // One HTTP request; nothing when the server can't be reached.
  std::optional<std::pair<int, std::string>> request(bool is_put, const std::string& key, const std::string& body);

  std::string ip_;
  int port_;
  std::chrono::milliseconds timeout_;
};

class HttpStore::Presence {
 public:
  virtual ~Presence() = default;
};

}  // namespace paddle::collective
