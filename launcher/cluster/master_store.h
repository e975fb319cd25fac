#pragma once
// MasterStore: the ControlStore of a --master=IP:PORT job: the HTTP key-value store
// (collective/kv_store_server.h) that the launcher on the master's address hosts, and that the
// others reach as clients. The host judges. A launcher is alive while its heartbeat key
// (JOB.hb.IP) is younger than dead_after on the host's monotonic clock and its presence
// connection (collective/liveness.h) is open: a SIGKILLed launcher closes it at once.

#include <chrono>
#include <memory>
#include <mutex>

#include "collective/http_store.h"
#include "collective/kv_store_server.h"
#include "collective/liveness.h"
#include "launcher/cluster/control_store.h"

namespace paddle::launcher {

class MasterStore : public ControlStore {
 public:
  // Hosts the store when `host` (throws the server's error when it cannot bind).
  // `token`: the job's, which the store asks of every connection and the client proves.
  MasterStore(std::string master_ip, int master_port, bool host, std::string job_id, std::string node_ip,
              std::chrono::milliseconds dead_after, std::optional<common::JobToken> token);

  void put(const std::string& key, const std::string& value) override;
  void put_while_alive(const std::string& key, const std::string& value) override { put(key, value); }
  std::optional<std::string> get(const std::string& key) override { return client_.try_get(key); }
  std::string add_if_absent(const std::string& key, const std::string& value) override {
    return client_.add_if_absent(key, value);
  }
  std::vector<Entry> range(const std::string& prefix) override;
  void remove_prefix(const std::string&) override {}  // the store ends with its host

  void heartbeat() override;
  std::optional<std::string> gone(const std::string& ip) override;
  std::chrono::milliseconds silence(const std::string& ip) override {
    return client_.age(heartbeat_key(ip)).value_or(std::chrono::milliseconds(0));
  }
  std::vector<std::string> alive_nodes() override;
  bool judges() override { return server_ != nullptr; }
  bool hosted_here() const override { return server_ != nullptr; }
  std::string describe() const override { return "the master " + client_.endpoint(); }

 private:
  std::string heartbeat_key(const std::string& ip) const { return job_id_ + ".hb." + ip; }

  std::string master_ip_;
  int master_port_;
  std::string job_id_, node_ip_;
  std::chrono::milliseconds dead_after_;
  std::optional<common::JobToken> token_;
  std::unique_ptr<collective::KvStoreServer> server_;
  collective::HttpStore client_;
  std::mutex presence_mutex_;
  std::unique_ptr<collective::Liveness::Presence> presence_;
};

}  // namespace paddle::launcher
