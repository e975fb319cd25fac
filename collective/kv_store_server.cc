#include "collective/kv_store_server.h"

#include <boost/asio/ip/address.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>
#include <memory>

#include "collective/http_exchange.h"
#include <optional>

namespace paddle::collective {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

constexpr std::string_view kPrefix = "/kv/";
constexpr std::string_view kPresence = "/presence/";
constexpr std::string_view kAge = "/age/";
constexpr std::string_view kKeys = "/keys/";
constexpr size_t kMaxBody = 64 << 20;

// One connection: requests are answered in turn until the client closes.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, std::mutex& mutex, std::map<std::string, StoredValue>& values,
          const std::optional<common::JobToken>& token)
      : stream_(std::move(socket)), mutex_(mutex), values_(values), token_(token), proven_(!token) {}

  void read() {
    parser_.emplace();
    parser_->body_limit(kMaxBody);
    http::async_read(stream_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, size_t) {
      if (!ec) {
        self->respond();
      } else if (!self->presence_.empty()) {
        std::lock_guard lock(self->mutex_);
        self->values_["lost/" + self->presence_] = {"1", std::chrono::steady_clock::now()};
      }
    });
  }

 private:
  void respond() {
    const auto& request = parser_->get();
    response_ = {};
    response_.version(request.version());
    response_.keep_alive(request.keep_alive());
    std::string_view target(request.target().data(), request.target().size());
    if (target == "/auth/challenge") {
      challenge_ = common::make_challenge();
      response_.body() = challenge_;
      response_.keep_alive(true);
      response_.result(http::status::ok);
    } else if (!proven_ && !prove(request)) {
      response_.keep_alive(false);
      response_.result(http::status::unauthorized);
    } else if (target.starts_with(kPresence) && request.method() == http::verb::put) {
      presence_ = std::string(target.substr(kPresence.size()));
      response_.keep_alive(true);
      response_.result(http::status::ok);
    } else if (target == "/lost") {
      response_.body() = keys_under("lost/", ",", true);
      response_.result(http::status::ok);
    } else if (target.starts_with(kKeys) && request.method() == http::verb::get) {
      response_.body() = keys_under(std::string(target.substr(kKeys.size())), "\n", false);
      response_.result(http::status::ok);
    } else if (target.starts_with(kAge) && request.method() == http::verb::get) {
      std::lock_guard lock(mutex_);
      auto it = values_.find(std::string(target.substr(kAge.size())));
      response_.result(it == values_.end() ? http::status::not_found : http::status::ok);
      if (it != values_.end())
        response_.body() = std::to_string(
            std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - it->second.written).count());
    } else if (!target.starts_with(kPrefix)) {
      response_.result(http::status::not_found);
    } else {
      answer_key(std::string(target.substr(kPrefix.size())), request);
    }
    response_.prepare_payload();
    http::async_write(stream_, response_, [self = shared_from_this()](beast::error_code ec, size_t) {
      if (!ec && self->response_.keep_alive()) self->read();
    });
  }

  // Whether the request carries the proof for this connection's challenge; prints a refusal.
  bool prove(const http::request<http::string_body>& request) {
    const auto proof = request[kProofHeader];
    proven_ = !challenge_.empty() &&
              token_->verify(kStoreProofPurpose, challenge_, std::string_view(proof.data(), proof.size()));
    if (!proven_) {
      beast::error_code ec;
      const auto peer = stream_.socket().remote_endpoint(ec);
      fmt::print(stderr, "key-value store: refused {}:{}: {}\n", ec ? "?" : peer.address().to_string(), ec ? 0 : peer.port(),
                 proof.empty() ? "no job token proof (PADDLE_JOB_TOKEN)" : "a wrong job token proof");
    }
    return proven_;
  }

  void answer_key(const std::string& key, const http::request<http::string_body>& request) {
    std::lock_guard lock(mutex_);
    auto it = values_.find(key);
    if (request.method() == http::verb::put) {
      values_[key] = {request.body(), std::chrono::steady_clock::now()};
      response_.result(http::status::ok);
    } else if (request.method() == http::verb::post) {
      if (it == values_.end()) values_[key] = {request.body(), std::chrono::steady_clock::now()};
      else response_.body() = it->second.value;
      response_.result(it == values_.end() ? http::status::created : http::status::conflict);
    } else if (request.method() == http::verb::get) {
      response_.result(it == values_.end() ? http::status::not_found : http::status::ok);
      if (it != values_.end()) response_.body() = it->second.value;
    } else {
      response_.result(http::status::method_not_allowed);
    }
  }

  // The keys starting with `prefix` (without it, when `strip`), joined by `separator`.
  std::string keys_under(const std::string& prefix, const char* separator, bool strip) {
    std::lock_guard lock(mutex_);
    std::string out;
    for (auto it = values_.lower_bound(prefix); it != values_.end() && it->first.starts_with(prefix); ++it)
      out += (out.empty() ? "" : separator) + (strip ? it->first.substr(prefix.size()) : it->first);
    return out;
  }

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::response<http::string_body> response_;
  std::mutex& mutex_;
  std::map<std::string, StoredValue>& values_;
  std::string presence_;  // set when this connection is a rank's presence
  const std::optional<common::JobToken>& token_;
  bool proven_;
  std::string challenge_;
};

}  // namespace

KvStoreServer::KvStoreServer(const std::string& ip, int port, std::optional<common::JobToken> token)
    : acceptor_(io_), token_(std::move(token)) {
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
  if (!token_)
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
    if (!ec) std::make_shared<Session>(std::move(socket), mutex_, values_, token_)->read();
    accept();
  });
}

}  // namespace paddle::collective
