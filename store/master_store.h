#pragma once
// MasterStore: the ControlStore of a --master=IP:PORT job: the key-value store
// (kv_store_server.h) that the launcher on the master's address hosts, and that the others
// reach as clients, each over one kept-alive connection (store_client.h). The
// host judges. Every request of a launcher names its presence (JOB.hb.IP), so any request is a
// heartbeat; the launcher is gone once that connection closes (a SIGKILLed launcher's closes at
// once) or the store has heard nothing from it for dead_after, which the store itself checks a
// few times per dead_after: the judge asks only for the names it lost.

#include <chrono>
#include <memory>
#include <mutex>

#include <nlohmann/json.hpp>

#include "store/control_store.h"
#include "store/kv_store_server.h"
#include "store/store_client.h"

namespace paddle::store {

class MasterStore : public ControlStore {
 public:
  // Hosts the store when `host` (throws the server's error when it cannot bind).
  // `token`: the job's, which the store asks of every connection and the client proves.
  MasterStore(std::string master_ip, int master_port, bool host, std::string job_id, std::string node_ip,
              std::chrono::milliseconds dead_after, std::optional<common::JobToken> token);

  void put(const std::string& key, const std::string& value) override;
  void put_while_alive(const std::string& key, const std::string& value) override { put(key, value); }
  std::optional<std::string> get(const std::string& key) override;
  std::string add_if_absent(const std::string& key, const std::string& value) override;
  std::vector<Entry> range(const std::string& prefix) override;
  void remove_prefix(const std::string&) override {}  // the store ends with its host
  std::optional<std::string> wait_for(const std::string& key, std::chrono::milliseconds wait) override;
  Changes watch(const std::vector<std::string>& prefixes, int64_t after, std::chrono::milliseconds wait) override;

  void stop_waiting() override { client_.stop_waiting(); }
  void heartbeat() override;
  std::map<std::string, std::string> gone(const std::vector<std::string>& ips) override;
  std::vector<std::string> silent(std::chrono::milliseconds over) override;
  std::vector<std::string> alive_nodes() override;
  bool judges() override { return server_ != nullptr; }
  bool hosted_here() const override { return server_ != nullptr; }
  std::string describe() const override { return "the master " + client_.endpoint(); }
  std::optional<uint64_t> requests_served() override;

 private:
  std::string heartbeat_prefix() const { return job_id_ + ".hb."; }
  // The requests behind gone() and alive_nodes(): the presences under `prefix` that ended, and
  // why; the keys under `prefix`.
  std::map<std::string, std::string> lost(const std::string& prefix);
  std::vector<std::string> keys(const std::string& prefix);
  // A GET whose answer is JSON (/lost, /silent, /stats), or entries with revisions (/range,
  // /watch); a malformed answer throws common::PeerError naming `what`.
  nlohmann::json answer_json(const std::string& target, const std::string& what,
                             std::chrono::milliseconds wait = std::chrono::milliseconds(0), bool long_poll = false);
  Changes changes_answer(const std::string& target, const std::string& what,
                         std::chrono::milliseconds wait = std::chrono::milliseconds(0), bool long_poll = false);

  std::string job_id_, node_ip_;
  std::chrono::milliseconds dead_after_;
  std::unique_ptr<KvStoreServer> server_;
  StoreClient client_;
  // JOB.hb.IP written, so alive_nodes() lists this node. The watch's thread and join() both
  // announce first; the second waits for the first's write (and tries again if it failed)
  // rather than going on to a long poll, under which the write would need a second connection
  // to the master: at 16,384 nodes, each holding one already, the master's open files run out.
  std::mutex announce_mutex_;
  bool announced_ = false;
};

}  // namespace paddle::store
