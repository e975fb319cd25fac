#pragma once
// KvStoreServer: the job's rendezvous key-value store, an in-memory map served over HTTP
// (Boost.Beast): PUT /kv/KEY stores the body, GET /kv/KEY returns it or 404. Rank 0 runs it on its
// PADDLE_CURRENT_ENDPOINT, so it works the same under the launcher and when started by hand.
//
// Presence: a rank that sends PUT /presence/NAME and keeps that connection open is present until
// the connection closes (its process exited or died); GET /lost lists the names whose
// connections closed, so survivors of a failed collective can say who left.

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <map>
#include <mutex>
#include <string>
#include <thread>

namespace paddle::collective {

class KvStoreServer {
 public:
  // Binds ip:port at once (throws std::runtime_error naming the endpoint when it can't) and
  // serves from a background thread until destroyed.
  KvStoreServer(const std::string& ip, int port);
  ~KvStoreServer();
  KvStoreServer(const KvStoreServer&) = delete;
  KvStoreServer& operator=(const KvStoreServer&) = delete;

  int port() const { return port_; }

 private:
  void accept();

  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  int port_ = 0;
  std::mutex mutex_;
  std::map<std::string, std::string> values_;  // keys, "presence/NAME" and "lost/NAME" included
  std::thread thread_;
};

}  // namespace paddle::collective
