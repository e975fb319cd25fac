#pragma once
// StoreConnection: one kept-alive HTTP/1.1 connection to the job's key-value store
// (kv_store_server.h), over which a client sends its requests one at a time. It connects, and
// proves the job token (the server's challenge), on its first request and again only after the
// connection broke. A presence name, when given, rides on every request (X-Paddle-Presence), so
// the server hears this client whenever it asks anything and counts it gone when the connection
// closes. Not safe for concurrent use: StoreClient (store_client.h) serialises its callers.

#include <boost/asio/io_context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/verb.hpp>

#include <atomic>
#include <chrono>
#include <optional>
#include <string>

#include "store/store_wire.h"
#include "common/job_token.h"

namespace paddle::store {

class StoreConnection {
 public:
  // `dead_peer`: with it, the kernel ends the connection when the server's host has not
  // acknowledged anything for that long (TCP keep-alive and TCP_USER_TIMEOUT), however long a
  // request may wait for its answer: a slow server is waited for, a vanished one is not.
  StoreConnection(std::string ip, int port, std::optional<common::JobToken> token, std::string presence = "",
                  std::chrono::milliseconds dead_peer = std::chrono::milliseconds(0));
  StoreConnection(const StoreConnection&) = delete;
  StoreConnection& operator=(const StoreConnection&) = delete;

  // One request and its answer within `timeout` (connecting included); nothing when the server
  // cannot be reached or the exchange fails, and the connection is then closed. A kept
  // connection the server closed meanwhile is replaced once, silently. Throws StoreRefused when
  // the server refuses the token.
  std::optional<HttpAnswer> exchange(boost::beast::http::verb verb, const std::string& target, const std::string& body,
                                     std::chrono::milliseconds timeout);
  bool is_open() const { return open_; }
  void close();
  // From another thread: ends the exchange in flight (the socket is shut down, so the server
  // sees the connection close), which then fails without trying a new connection. Safe while
  // exchange() runs; the connection is reopened by the next exchange.
  void interrupt();

 private:
  bool open(std::chrono::milliseconds timeout);
  // The exchange on the open connection; false when it failed.
  bool send(boost::beast::http::verb verb, const std::string& target, const std::string& body,
            std::chrono::milliseconds timeout, HttpAnswer& answer);
  // Runs the asynchronous operations started on the stream until they finish or time out.
  void run();

  std::string ip_;
  int port_;
  std::optional<common::JobToken> token_;
  std::string presence_;
  std::chrono::milliseconds dead_peer_;
  boost::asio::io_context io_;
  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer buffer_;
  std::string proof_;  // for the next request, after a challenge
  bool open_ = false;
  std::atomic<int> socket_ = -1;  // the open socket's descriptor, for interrupt()
  // interrupt() was called during the exchange in flight: a leaving launcher's thousands of
  // watches must not each reconnect once as they end.
  std::atomic<bool> interrupted_ = false;
};

}  // namespace paddle::store
