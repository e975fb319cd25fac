#pragma once
// EtcdStore: the ControlStore of a --master=etcd://HOST:PORT[,HOST:PORT] job. No launcher hosts
// anything: every launcher holds a lease of dead_after (kept alive every heartbeat) and writes
// JOB.hb.IP on it (rewritten every heartbeat, so that the judge sees it change), so a launcher
// that is killed or cut off disappears when etcd's own clock says its lease ran out. The judge is whichever launcher holds JOB.judge, also on its lease; when
// it goes, the next to ask takes over.

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "store/etcd_client.h"
#include "store/control_store.h"

namespace paddle::store {

class EtcdStore : public ControlStore {
 public:
  // Grants this launcher's lease and writes its heartbeat key.
  EtcdStore(std::vector<EtcdEndpoint> endpoints, std::string job_id, std::string node_ip,
            std::chrono::milliseconds dead_after);
  ~EtcdStore() override;  // revokes the lease: this launcher's keys go at once

  void put(const std::string& key, const std::string& value) override { etcd_.put(key, value); }
  void put_while_alive(const std::string& key, const std::string& value) override { etcd_.put(key, value, lease_); }
  std::optional<std::string> get(const std::string& key) override { return etcd_.get(key); }
  std::string add_if_absent(const std::string& key, const std::string& value) override {
    return etcd_.create(key, value);
  }
  std::vector<Entry> range(const std::string& prefix) override;
  void remove_prefix(const std::string& prefix) override { etcd_.delete_prefix(prefix); }
  // Asks etcd again every 100 ms until the key is there or the wait is over.
  std::optional<std::string> wait_for(const std::string& key, std::chrono::milliseconds wait) override;
  // Ranges over the prefixes every 100 ms, keeping the keys whose mod revision is after `after`.
  Changes watch(const std::vector<std::string>& prefixes, int64_t after, std::chrono::milliseconds wait) override;

  // Throws LeaseEnded when the lease has ended: the others have judged this node gone.
  void heartbeat() override;
  std::map<std::string, std::string> gone(const std::vector<std::string>& ips) override;
  // Measured on this launcher's clock, from when it saw each heartbeat key's revision change.
  std::vector<std::string> silent(std::chrono::milliseconds over) override;
  std::vector<std::string> alive_nodes() override;
  bool judges() override { return etcd_.create(job_id_ + ".judge", node_ip_, lease_) == node_ip_; }
  bool hosted_here() const override { return false; }
  std::string describe() const override { return etcd_.describe(); }

 private:
  std::string heartbeat_key(const std::string& ip) const { return job_id_ + ".hb." + ip; }

  EtcdClient etcd_;
  std::string job_id_, node_ip_;
  std::chrono::milliseconds dead_after_;
  int64_t lease_ = 0;
  int64_t beats_ = 0;
  std::mutex seen_mutex_;
  // Per node: its heartbeat key's last revision, and when this launcher first saw it.
  std::map<std::string, std::pair<int64_t, std::chrono::steady_clock::time_point>> seen_;
};

}  // namespace paddle::store
