#pragma once
// StoreClient: one client's way to the job's key-value store (kv_store_server.h): requests over
// one kept-alive connection (store_connection.h) that callers on several threads share. It is the
// transport under the store's two faces, and knows no verb of either:
//   RendezvousStore (rendezvous_store.h)  Gloo's set, get and wait, for the workers' rendezvous;
//   MasterStore (master_store.h)          the launchers' ControlStore (control_store.h).
//
// A short request goes before the next long poll, and one that comes while a long poll holds the
// connection goes at once on a connection of its own, closed after it (the presence stays: the
// kept connection still carries it).

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>

#include <boost/beast/http/verb.hpp>

#include "common/job_token.h"
#include "store/store_connection.h"
#include "store/store_wire.h"

namespace paddle::store {

class StoreClient {
 public:
  // `request_timeout` bounds each single request (a long poll's wait comes on top). `token`: the
  // job's, proved on the connection (none for a store started without one). `presence`: the
  // name every request renews (a launcher's heartbeat key); empty for none. `dead_peer`: see
  // StoreConnection (0: none).
  StoreClient(std::string ip, int port, std::chrono::milliseconds request_timeout,
              std::optional<common::JobToken> token = std::nullopt, std::string presence = "",
              std::chrono::milliseconds dead_peer = std::chrono::milliseconds(0));

  // One request; `long_poll` waits its turn behind short requests, and its `wait` is added to the
  // request timeout. Nothing when the server can't be reached, or for a long poll after
  // stop_waiting(). Throws StoreRefused when the server refuses the token.
  std::optional<HttpAnswer> request(boost::beast::http::verb verb, const std::string& target, const std::string& body,
                                    std::chrono::milliseconds wait = std::chrono::milliseconds(0), bool long_poll = false);
  // As request(), but throws common::PeerError (naming `what`) when unreachable or refused (an
  // error status other than 404 absent, 408 out of time and 409 present already).
  HttpAnswer checked(boost::beast::http::verb verb, const std::string& target, const std::string& body,
                     const std::string& what, std::chrono::milliseconds wait = std::chrono::milliseconds(0),
                     bool long_poll = false);

  // Ends the request in flight on the kept connection now, a long poll or a connect to a server
  // that does not answer (its connection is shut down, so the server forgets this client's
  // presence), and refuses later long polls: for a client that is leaving. Short requests after
  // it go ahead (a leaving launcher's last report).
  void stop_waiting();
  // When this client last had an answer (or has a request in flight now): the server heard it then.
  std::chrono::steady_clock::time_point last_heard() const;
  std::string endpoint() const { return ip_ + ":" + std::to_string(port_); }

 private:
  std::string ip_;
  int port_;
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
