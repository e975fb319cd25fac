#include "collective/kv_store_server.h"

#include <boost/asio/ip/address.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>
#include <memory>

#include <optional>

namespace paddle::collective {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr size_t kMaxBody = 64 << 20;

// One connection: requests are answered in turn until the client closes.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, KvStoreHandler& handler) : stream_(std::move(socket)), handler_(handler) {
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
    response_ = handler_.respond(parser_->get(), connection_);
    http::async_write(stream_, response_, [self = shared_from_this()](beast::error_code ec, size_t) {
      if (!ec && self->response_.keep_alive()) self->read();
    });
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  KvStoreHandler::Response response_;
  KvStoreHandler& handler_;
  KvConnection connection_;
};

}  // namespace

KvStoreServer::KvStoreServer(const std::string& ip, int port, std::optional<common::JobToken> token)
    : acceptor_(io_), handler_(std::move(token)) {
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(ip, ec);
  if (ec) throw std::runtime_error(fmt::format("key-value store: '{}' is not an IP address", ip));
  const tcp::endpoint endpoint(address, static_cast<unsigned short>(port));
  acceptor_.open(endpoint.protocol());
  acceptor_.set_option(asio::socket_base::reuse_address(true));
  acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw std::runtime_error(fmt::format("key-value store: cannot listen on {}:{}: {}", ip, port, ec.message()));
  port_ = acceptor_.local_endpoint().port();
  if (!handler_.has_token())
    fmt::print(stderr, "key-value store on {}:{}: no PADDLE_JOB_TOKEN, so any peer that reaches it is served "
               "(PADDLE_REQUIRE_TOKEN=1 refuses to run so)\n", ip, port_);
  accept();
  thread_ = std::thread([this] { io_.run(); });
}

KvStoreServer::~KvStoreServer() {
  io_.stop();
  thread_.join();
}

void KvStoreServer::accept() {
  acceptor_.async_accept([this](beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted) return;  // the server is shutting down
    // A client that vanished before its connection was accepted (ECONNABORTED) must not stop
    // the store from accepting the others.
    if (!ec) std::make_shared<Session>(std::move(socket), handler_)->read();
    accept();
  });
}

}  // namespace paddle::collective
