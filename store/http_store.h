#pragma once
// HttpStore: a client of the job's key-value store (kv_store_server.h) on one kept-alive
// connection. It keeps Gloo's Store contract (set, get, wait; collective/gloo_store.h hands it
// to Gloo), so that Gloo's own rendezvous, NCCL's unique-id exchange and our registration all
// run through one store, and it speaks the store's blocking requests, so a waiting client costs
// the server nothing until the key it waits for is written. The launchers of a multi-node job
// use it for their control plane (launcher/cluster/master_store.h).
//
// Callers on several threads share the connection: a short request goes before the next long
// poll, and one that comes while a long poll holds the connection goes at once on a connection
// of its own, closed after it. Every blocking call
// retries while the server is not up yet, within the timeout, and fails naming the store's
// endpoint. Liveness of the ranks ("who left") is a separate concern: see liveness.h.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "store/store_connection.h"
#include "store/store_wire.h"
#include "common/job_token.h"

namespace paddle::store {

// Keys that changed, as the store's /range and /watch answer them.
struct StoreChanges {
  struct Entry {
    std::string key, value;
    int64_t revision = 0;  // the store's revision of the entry's last write
  };
  int64_t revision = 0;  // the store's newest revision when it answered: the next watch's `after`
  std::vector<Entry> entries;
};

class HttpStore {
 public:
  // `timeout` bounds the blocking calls; `request_timeout` each single request. `token`: the
  // job's, proved on the connection (none for a store started without one). `presence`: the
  // name every request renews (a launcher's heartbeat key); empty for none. `dead_peer`: see
  // StoreConnection (0: none).
  HttpStore(std::string ip, int port, std::chrono::milliseconds timeout,
            std::chrono::milliseconds request_timeout = std::chrono::seconds(10),
            std::optional<common::JobToken> token = std::nullopt, std::string presence = "",
            std::chrono::milliseconds dead_peer = std::chrono::milliseconds(0));

  // Gloo's contract: each retries while the server is not up yet; throws common::TimeoutError
  // after `timeout` (set, get, the first wait) naming the endpoint or the keys.
  void set(const std::string& key, const std::vector<char>& data);
  std::vector<char> get(const std::string& key);
  void wait(const std::vector<std::string>& keys);
  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout);

  // Single attempts, for callers that poll with their own reporting (the rendezvous):
  // the value, or nothing when the key is absent; throws PeerError when unreachable.
  std::optional<std::string> try_get(const std::string& key);
  // False when the server can't be reached.
  bool try_put(const std::string& key, const std::string& value);
  // Stores `value` unless `key` is there already; returns the value the key holds afterwards
  // (`value` when this call stored it). Throws PeerError when unreachable.
  std::string add_if_absent(const std::string& key, const std::string& value);
  // The value of `key` once it exists, waiting on the server up to `wait`; nothing when it did
  // not come in time. Throws PeerError when unreachable.
  std::optional<std::string> wait_value(const std::string& key, std::chrono::milliseconds wait);
  // The keys under `prefixes` written after revision `after`, once there is one, waiting on the
  // server up to `wait` (then no entries). Throws PeerError when unreachable.
  StoreChanges watch(const std::vector<std::string>& prefixes, int64_t after, std::chrono::milliseconds wait);
  // Every key under `prefix`, with its value and revision. Throws PeerError when unreachable.
  StoreChanges range(const std::string& prefix);
  // The keys that start with `prefix` (made of [A-Za-z0-9_.-]). Throws PeerError when unreachable.
  std::vector<std::string> keys(const std::string& prefix);
  // The presences starting with `prefix` that ended, and why. Throws PeerError when unreachable.
  std::map<std::string, std::string> lost(const std::string& prefix);
  // The presences not heard from for longer than `over`. Throws PeerError when unreachable.
  std::vector<std::string> silent(std::chrono::milliseconds over);
  // The server's counters (GET /stats), as its JSON text. Throws PeerError when unreachable.
  std::string stats();

  // Ends the request in flight on the kept connection now, a long poll or a connect to a server
  // that does not answer (its connection is shut down, so the server forgets this client's
  // presence), and refuses later long polls: for a client that is leaving. Short requests after
  // it go ahead (a leaving launcher's last report).
  void stop_waiting();
  // When this client last had an answer (or has a request in flight now): the server heard it then.
  std::chrono::steady_clock::time_point last_heard() const;
  std::string endpoint() const { return ip_ + ":" + std::to_string(port_); }

 private:
  // The value of `key` once it is there, by `deadline`, through the server not being up yet.
  std::optional<std::string> value_by(const std::string& key, std::chrono::steady_clock::time_point deadline);
  // One request on the connection; `long_poll` waits its turn behind short requests, and its
  // `wait` is added to the request timeout. Nothing when the server can't be reached.
  std::optional<HttpAnswer> request(boost::beast::http::verb verb, const std::string& target, const std::string& body,
                                    std::chrono::milliseconds wait = std::chrono::milliseconds(0), bool long_poll = false);
  // As request(), but throws PeerError (naming `what`) when unreachable or refused (an error
  // status other than 404 absent, 408 out of time and 409 present already).
  HttpAnswer checked(boost::beast::http::verb verb, const std::string& target, const std::string& body,
                     const std::string& what, std::chrono::milliseconds wait = std::chrono::milliseconds(0),
                     bool long_poll = false);
  static StoreChanges parse_changes(const std::string& text);

  std::string ip_;
  int port_;
  std::chrono::milliseconds timeout_;
  std::chrono::milliseconds request_timeout_;
  std::optional<common::JobToken> token_;
  std::string presence_;
  std::chrono::milliseconds dead_peer_;

  mutable std::mutex mutex_;
  std::condition_variable turn_;
  bool busy_ = false;
  bool polling_ = false;   // the request in flight is a long poll
  bool stopping_ = false;  // stop_waiting() was called
  int short_waiting_ = 0;
  std::chrono::steady_clock::time_point last_heard_{};
  StoreConnection connection_;
};

}  // namespace paddle::store
