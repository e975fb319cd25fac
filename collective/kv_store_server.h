#pragma once
// KvStoreServer: the job's rendezvous key-value store, an in-memory map served over HTTP
// (Boost.Beast): PUT /kv/KEY stores the body, GET /kv/KEY returns it or 404. Rank 0 runs it on its
// PADDLE_CURRENT_ENDPOINT, so it works the same under the launcher and when started by hand.
//
// Presence: a rank that sends PUT /presence/NAME and keeps that connection open is present until
// the connection closes (its process exited or died); GET /lost lists the names whose
// connections closed, so survivors of a failed collective can say who left.
//
// For the launchers of a multi-node job: POST /kv/KEY stores the body only if KEY is absent
// (201; else 409 with the value already there), so the first of several reporters wins;
// GET /age/KEY gives the milliseconds since KEY was last written, on this server's monotonic
// clock, so liveness is judged without comparing two machines' clocks; GET /keys/PREFIX lists
// the keys starting with PREFIX, one per line.
//
// With the job's token (common/job_token.h), a connection is served once it proves it:
// GET /auth/challenge gives a challenge for this connection, and the next request carries the
// proof in X-Paddle-Proof. Any other first request, or a wrong proof, gets 401, the connection
// is closed, and the refusal is printed with the peer's address. GET /auth/challenge is always
// answered, so clients need not know whether the server has a token.
//
// The answers themselves are KvStoreHandler's (collective/kv_store_handler.h); this class is the
// sockets.

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <optional>
#include <string>
#include <thread>

#include "collective/kv_store_handler.h"
#include "common/job_token.h"

namespace paddle::collective {

class KvStoreServer {
 public:
  // Binds ip:port at once (throws std::runtime_error naming the endpoint when it can't) and
  // serves from a background thread until destroyed. Without a token it serves anyone, and
  // says so once on stderr.
  KvStoreServer(const std::string& ip, int port, std::optional<common::JobToken> token = std::nullopt);
  ~KvStoreServer();
  KvStoreServer(const KvStoreServer&) = delete;
  KvStoreServer& operator=(const KvStoreServer&) = delete;

  int port() const { return port_; }

 private:
  void accept();

  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  int port_ = 0;
  KvStoreHandler handler_;
  std::thread thread_;
};

}  // namespace paddle::collective
