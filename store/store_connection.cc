#include "store/store_connection.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>

namespace paddle::store {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

constexpr size_t kMaxAnswer = 64 << 20;
// Beast reads as much as the buffer's free capacity, at least 512 bytes, and a buffer that
// starts empty never grows past 512: a member list of 79 KB took 160 reads, each with its own
// wakeup and timer. With this much room, a few reads.
constexpr size_t kReadRoom = 64 << 10;

}  // namespace

StoreConnection::StoreConnection(std::string ip, int port, std::optional<common::JobToken> token, std::string presence,
                                 std::chrono::milliseconds dead_peer)
    : ip_(std::move(ip)),
      port_(port),
      token_(std::move(token)),
      presence_(std::move(presence)),
      dead_peer_(dead_peer),
      stream_(io_) {
  buffer_.reserve(kReadRoom);
}

void StoreConnection::run() {
  io_.restart();
  io_.run();
}

void StoreConnection::interrupt() {
  interrupted_ = true;
  const int fd = socket_.load();
  if (fd >= 0) ::shutdown(fd, SHUT_RDWR);
}

void StoreConnection::close() {
  socket_ = -1;
  beast::error_code ec;
  stream_.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  stream_.close();
  buffer_.clear();
  open_ = false;
}

bool StoreConnection::open(std::chrono::milliseconds timeout) {
  beast::error_code ec;
  const auto address = asio::ip::make_address(ip_, ec);
  if (ec) return false;
  const asio::ip::tcp::endpoint endpoint(address, static_cast<unsigned short>(port_));
  // The socket is interrupt()'s from before the connect: a server whose host drops packets holds
  // a connect for the whole timeout.
  stream_.socket().open(endpoint.protocol(), ec);
  if (ec) return false;
  socket_ = stream_.socket().native_handle();
  if (interrupted_) {
    close();
    return false;
  }
  stream_.expires_after(timeout);
  stream_.async_connect(endpoint, [&](beast::error_code e) { ec = e; });
  run();
  if (ec) {
    close();
    return false;
  }
  stream_.socket().set_option(asio::ip::tcp::no_delay(true), ec);
  if (dead_peer_.count() > 0) {
    const int fd = stream_.socket().native_handle();
    const int on = 1, idle = 1, interval = 1;
    const int probes = std::max(1, static_cast<int>(dead_peer_.count() / 1000));
    const unsigned user_timeout = static_cast<unsigned>(dead_peer_.count());
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof(interval));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof(probes));
    setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout, sizeof(user_timeout));
  }
  open_ = true;
  if (!token_) return true;
  HttpAnswer challenge;
  if (!send(http::verb::get, "/auth/challenge", "", timeout, challenge) || challenge.status != 200 ||
      challenge.body.size() != common::kChallengeSize) {
    close();
    return false;
  }
  // The proof rides on the next request (send reads it from proof_).
  proof_ = token_->prove(kStoreProofPurpose, challenge.body);
  return true;
}

bool StoreConnection::send(http::verb verb, const std::string& target, const std::string& body,
                           std::chrono::milliseconds timeout, HttpAnswer& answer) {
  http::request<http::string_body> req{verb, target, 11};
  req.set(http::field::host, ip_);
  if (!proof_.empty() && target != "/auth/challenge") {
    req.set(kProofHeader, proof_);
    proof_.clear();
  }
  if (!presence_.empty()) req.set(kPresenceHeader, presence_);
  req.keep_alive(true);
  if (verb == http::verb::put || verb == http::verb::post) req.body() = body;
  req.prepare_payload();
  beast::error_code ec;
  http::response_parser<http::string_body> parser;
  parser.body_limit(kMaxAnswer);
  stream_.expires_after(timeout);
  http::async_write(stream_, req, [&](beast::error_code e, size_t) {
    ec = e;
    if (!e) http::async_read(stream_, buffer_, parser, [&](beast::error_code r, size_t) { ec = r; });
  });
  run();
  if (ec) return false;
  answer.status = static_cast<int>(parser.get().result_int());
  answer.body = std::move(parser.get().body());
  if (!parser.get().keep_alive()) close();
  return true;
}

std::optional<HttpAnswer> StoreConnection::exchange(http::verb verb, const std::string& target, const std::string& body,
                                                    std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto left = [&] {
    return std::max(std::chrono::milliseconds(1),
                    std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()));
  };
  for (int attempt = 0; attempt < 2; ++attempt) {
    const bool kept = open_;
    if (!open_ && !open(left())) break;
    HttpAnswer answer;
    if (send(verb, target, body, left(), answer)) {
      if (answer.status == 401) {
        close();
        throw StoreRefused(fmt::format("key-value store {}:{} refused this process: {} (PADDLE_JOB_TOKEN)", ip_, port_,
                                       token_ ? "its job token is not the job's" : "it has no job token"));
      }
      interrupted_ = false;
      return answer;
    }
    close();
    // Only a kept connection is tried again: the server may have closed it while it was idle.
    if (!kept || interrupted_.exchange(false) || std::chrono::steady_clock::now() >= deadline) break;
  }
  interrupted_ = false;
  return std::nullopt;
}

}  // namespace paddle::store
