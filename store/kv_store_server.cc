#include "store/kv_store_server.h"

#include <boost/asio/ip/address.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>
#include <sys/socket.h>

#include <cerrno>
#include <memory>
#include <optional>

#include "common/error.h"
#include "common/listen.h"

namespace paddle::store {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr size_t kMaxBody = 64 << 20;
constexpr auto kAcceptPause = std::chrono::milliseconds(50);
// Connections taken from the listen queue at once, before the event loop serves anything else:
// thousands of nodes connect within a second, and one accept per turn of a busy loop let the
// queue fill (SYNs dropped past it cost a client a second each).
constexpr int kAcceptBatch = 256;

// One connection: requests are answered in turn until the client closes. A request the handler
// parks waits for its answer (a write) or its deadline (the timer), whichever comes first; and
// while it waits the socket is watched, so that a client that closes its connection (a killed
// launcher, whose watch is nearly always parked) is gone at once, not when its wait would end.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, KvStoreHandler& handler)
      : stream_(std::move(socket)), timer_(stream_.get_executor()), handler_(handler) {
    beast::error_code ec;
    const auto peer = stream_.socket().remote_endpoint(ec);
    connection_ = handler_.connect(ec ? "?:0" : fmt::format("{}:{}", peer.address().to_string(), peer.port()));
  }

  void read() {
    parser_.emplace();
    parser_->body_limit(kMaxBody);
    http::async_read(stream_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, size_t) {
      if (!ec) self->respond();
      else self->handler_.closed(self->connection_);
    });
  }

 private:
  void respond() {
    std::weak_ptr<Session> weak = shared_from_this();
    auto executor = stream_.get_executor();
    auto answer = handler_.respond(parser_->get(), connection_, [weak, executor](KvStoreHandler::Response r) {
      asio::post(executor, [weak, r = std::move(r)]() mutable {
        if (auto self = weak.lock()) self->answer_parked(std::move(r));
      });
    });
    if (answer) return write(std::move(*answer));
    const uint64_t parked = connection_.parked;
    timer_.expires_at(handler_.parked_until(parked));
    timer_.async_wait([self = shared_from_this(), parked](beast::error_code ec) {
      if (ec || self->connection_.parked != parked) return;
      if (auto r = self->handler_.expire(parked)) self->answer_parked(std::move(*r));
    });
    watch_for_close(parked);
  }

  void watch_for_close(uint64_t parked) {
    stream_.socket().async_wait(tcp::socket::wait_read, [self = shared_from_this(), parked](beast::error_code ec) {
      if (ec || self->connection_.parked != parked) return;
      char byte;
      const ssize_t n = ::recv(self->stream_.socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
      if (n > 0) return;  // a request sent ahead: read once this one is answered
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return self->watch_for_close(parked);
      // The end of the stream, or a reset: the client is gone while its request waited. closed()
      // unparks it, so neither the timer nor a later answer writes to this connection.
      self->timer_.cancel();
      self->handler_.closed(self->connection_);
      beast::error_code ignored;
      self->stream_.socket().close(ignored);
    });
  }

  void answer_parked(KvStoreHandler::Response r) {
    if (!connection_.parked) return;
    connection_.parked = 0;
    timer_.cancel();
    write(std::move(r));
  }

  void write(KvStoreHandler::Response r) {
    response_ = std::move(r);
    http::async_write(stream_, response_, [self = shared_from_this()](beast::error_code ec, size_t) {
      if (!ec && self->response_.keep_alive()) self->read();
      else self->handler_.closed(self->connection_);
    });
  }

  beast::tcp_stream stream_;
  asio::steady_timer timer_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  KvStoreHandler::Response response_;
  KvStoreHandler& handler_;
  KvConnection connection_;
};

}  // namespace

KvStoreServer::KvStoreServer(const std::string& ip, int port, std::optional<common::JobToken> token,
                             std::optional<std::chrono::milliseconds> silent_after)
    : acceptor_(io_), accept_pause_(io_), sweep_timer_(io_), handler_(std::move(token)), silent_after_(silent_after) {
  // As long a queue as the kernel allows (net.core.somaxconn caps it): thousands of nodes may
  // connect at once.
  common::listen_on(acceptor_, ip, port, 65535, "key-value store");
  boost::system::error_code ec;
  acceptor_.non_blocking(true, ec);
  if (ec) throw common::Error(fmt::format("key-value store: cannot listen on {}:{}: {}", ip, port, ec.message()));
  port_ = acceptor_.local_endpoint().port();
  if (!handler_.has_token())
    fmt::print(stderr, "key-value store on {}:{}: no PADDLE_JOB_TOKEN, so any peer that reaches it is served "
               "(PADDLE_REQUIRE_TOKEN=1 refuses to run so)\n", ip, port_);
  accept();
  if (silent_after_) sweep();
  thread_.start("kv-store", [this](std::stop_token) { io_.run(); }, [this] { io_.stop(); });
}

KvStoreServer::~KvStoreServer() { thread_.stop(); }

void KvStoreServer::accept() {
  acceptor_.async_accept([this](beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted) return;  // the server is shutting down
    if (ec == asio::error::no_descriptors || ec == asio::error::no_buffer_space || ec == asio::error::no_memory) {
      // Out of open files: the connection waits in the listen queue until one closes. Slower
      // answers, and no node dropped (the master checked its limit before the rendezvous).
      if (!out_of_files_said_) {
        fmt::print(stderr, "key-value store on port {}: {} (ulimit -n); new connections wait\n", port_, ec.message());
        out_of_files_said_ = true;
      }
      accept_pause_.expires_after(kAcceptPause);
      accept_pause_.async_wait([this](beast::error_code wait_ec) {
        if (!wait_ec) accept();
      });
      return;
    }
    // A client that vanished before its connection was accepted (ECONNABORTED) must not stop
    // the store from accepting the others.
    if (!ec) std::make_shared<Session>(std::move(socket), handler_)->read();
    for (int i = 0; !ec && i < kAcceptBatch; ++i) {
      tcp::socket next(io_);
      acceptor_.accept(next, ec);  // would_block once the queue is empty; any error is async_accept's to handle
      if (!ec) std::make_shared<Session>(std::move(next), handler_)->read();
    }
    accept();
  });
}

void KvStoreServer::sweep() {
  // Several looks per silent_after, so a silent presence is marked within a quarter of it late.
  // A look that comes late itself means the store was too busy to hear anyone: it marks nobody.
  const auto interval = *silent_after_ / 4;
  const auto planned = std::chrono::steady_clock::now() + interval;
  sweep_timer_.expires_at(planned);
  sweep_timer_.async_wait([this, planned, interval](beast::error_code ec) {
    if (ec) return;
    if (std::chrono::steady_clock::now() - planned < interval) handler_.sweep(*silent_after_);
    sweep();
  });
}

}  // namespace paddle::store
