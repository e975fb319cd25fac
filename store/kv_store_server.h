#pragma once
// KvStoreServer: the job's key-value store, an in-memory map served over HTTP/1.1 (Boost.Beast)
// on kept-alive connections. Rank 0 runs it on its PADDLE_CURRENT_ENDPOINT for the ranks'
// rendezvous (so it works the same under the launcher and when started by hand), and the master
// node's launcher runs it for the launchers of a multi-node job.
//
// Keys (KEY and PREFIX travel percent-encoded, store/http_exchange.h's encode_key):
//   PUT /kv/KEY          stores the body
//   GET /kv/KEY          the value, or 404
//   POST /kv/KEY         stores the body only if KEY is absent (201; else 409 with the value
//                        already there), so the first of several reporters wins
//   GET /keys/PREFIX     the keys starting with PREFIX, one per line
//   GET /range/PREFIX    {"revision": R, "entries": [{"key", "value", "revision"}, ...]}
// Every write gets the next revision. Blocking requests hold their answer, at most timeout_ms,
// and cost the server nothing while they wait:
//   GET /wait/KEY?timeout_ms=T   the value once KEY exists; 408 when time runs out
//   GET /watch?after=R&timeout_ms=T&prefix=P[&prefix=Q]   the keys under the prefixes written
//                        after revision R, as /range gives them, once there is one; empty
//                        entries when time runs out. The next watch passes the answer's revision.
//
// Presence: a connection whose request carries X-Paddle-Presence: NAME (or that sends
// PUT /presence/NAME) holds NAME's presence until it closes (its process exited or died). Every
// request renews it, and a parked one counts as heard. GET /lost lists the names whose presence
// ended, comma-separated, so survivors of a failed collective can say who left;
// GET /lost?prefix=P gives {NAME: why} for those names starting with P; a name announced again
// is no longer lost. A server with `silent_after` also marks lost the presences not heard from
// for that long. GET /silent?over_ms=T lists those quiet for more than T; GET /stats counts
// requests, connections and parked requests.
//
// With the job's token (common/job_token.h), a connection is served once it proves it:
// GET /auth/challenge gives a challenge for this connection, and the next request carries the
// proof in X-Paddle-Proof. Any other first request, or a wrong proof, gets 401, the connection
// is closed, and the refusal is printed with the peer's address. GET /auth/challenge is always
// answered, so clients need not know whether the server has a token.
//
// The answers themselves are KvStoreHandler's (store/kv_store_handler.h); this class is the
// sockets. Out of open files, it stops accepting for a moment and says so once: new
// connections wait in the listen queue, none is refused.

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <optional>
#include <string>

#include "store/kv_store_handler.h"
#include "common/background_thread.h"
#include "common/job_token.h"

namespace paddle::store {

class KvStoreServer {
 public:
  // Binds ip:port at once (throws std::runtime_error naming the endpoint when it can't) and
  // serves from a background thread until destroyed. Without a token it serves anyone, and
  // says so once on stderr.
  // With `silent_after`, a presence not heard from for that long is marked lost (the
  // launchers' master); without, only a closed connection loses it (the ranks' store).
  KvStoreServer(const std::string& ip, int port, std::optional<common::JobToken> token = std::nullopt,
                std::optional<std::chrono::milliseconds> silent_after = std::nullopt);
  ~KvStoreServer();
  KvStoreServer(const KvStoreServer&) = delete;
  KvStoreServer& operator=(const KvStoreServer&) = delete;

  int port() const { return port_; }

 private:
  void accept();
  void sweep();

  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer accept_pause_;
  boost::asio::steady_timer sweep_timer_;
  int port_ = 0;
  KvStoreHandler handler_;
  std::optional<std::chrono::milliseconds> silent_after_;
  bool out_of_files_said_ = false;
  common::BackgroundThread thread_;
};

}  // namespace paddle::store
