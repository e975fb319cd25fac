#include "collective/http_store.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>
#include <stdexcept>
#include <thread>

namespace paddle::collective {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using Clock = std::chrono::steady_clock;

constexpr auto kRetryInterval = std::chrono::milliseconds(20);
constexpr auto kRequestTimeout = std::chrono::seconds(10);

std::string encode_key(const std::string& key) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : key) {
    if (std::isalnum(c) || c == '_' || c == '-' || c == '.') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

// Holds the presence connection open; the server notices when it closes.
class OpenConnection : public HttpStore::Presence {
 public:
  asio::io_context io;
  beast::tcp_stream stream{io};
};

}  // namespace

HttpStore::HttpStore(std::string ip, int port, std::chrono::milliseconds timeout)
    : ip_(std::move(ip)), port_(port), timeout_(timeout) {}

std::optional<std::pair<int, std::string>> HttpStore::request(bool is_put, const std::string& key,
                                                              const std::string& body) {
  asio::io_context io;
  beast::tcp_stream stream(io);
  beast::error_code ec;
  stream.expires_after(kRequestTimeout);
  stream.connect(tcp::endpoint(asio::ip::make_address(ip_), static_cast<unsigned short>(port_)), ec);
  if (ec) return std::nullopt;
  http::request<http::string_body> req{is_put ? http::verb::put : http::verb::get, "/kv/" + encode_key(key), 11};
  req.set(http::field::host, ip_);
  req.keep_alive(false);
  if (is_put) req.body() = body;
  req.prepare_payload();
  http::write(stream, req, ec);
  if (ec) return std::nullopt;
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(64 << 20);
  http::read(stream, buffer, parser, ec);
  if (ec) return std::nullopt;
  return std::make_pair(static_cast<int>(parser.get().result_int()), std::move(parser.get().body()));
}

void HttpStore::put(const std::string& key, const std::string& value) {
  const auto deadline = Clock::now() + timeout_;
  while (true) {
    if (auto r = request(true, key, value)) {
      if (r->first == 200) return;
      throw std::runtime_error(fmt::format("key-value store {}: PUT {} answered {}", endpoint(), key, r->first));
    }
    if (Clock::now() > deadline)
      throw std::runtime_error(fmt::format("key-value store {} unreachable for {} s (rank 0 hosts it)", endpoint(),
                                           timeout_.count() / 1000));
    std::this_thread::sleep_for(kRetryInterval);
  }
}

std::unique_ptr<HttpStore::Presence> HttpStore::announce_presence(const std::string& name) {
  auto connection = std::make_unique<OpenConnection>();
  beast::error_code ec;
  connection->stream.expires_after(kRequestTimeout);
  connection->stream.connect(tcp::endpoint(asio::ip::make_address(ip_), static_cast<unsigned short>(port_)), ec);
  http::request<http::string_body> req{http::verb::put, "/presence/" + encode_key(name), 11};
  req.set(http::field::host, ip_);
  req.keep_alive(true);
  req.prepare_payload();
  if (!ec) http::write(connection->stream, req, ec);
  beast::flat_buffer buffer;
  http::response<http::string_body> res;
  if (!ec) http::read(connection->stream, buffer, res, ec);
  if (ec || res.result_int() != 200)
    throw std::runtime_error(fmt::format("key-value store {}: cannot announce presence of {}", endpoint(), name));
  connection->stream.expires_never();
  return connection;
}

std::optional<std::string> HttpStore::lost() {
  asio::io_context io;
  beast::tcp_stream stream(io);
  beast::error_code ec;
  stream.expires_after(std::chrono::seconds(2));
  stream.connect(tcp::endpoint(asio::ip::make_address(ip_), static_cast<unsigned short>(port_)), ec);
  http::request<http::string_body> req{http::verb::get, "/lost", 11};
  req.set(http::field::host, ip_);
  if (!ec) http::write(stream, req, ec);
  beast::flat_buffer buffer;
  http::response<http::string_body> res;
  if (!ec) http::read(stream, buffer, res, ec);
  if (ec) return std::nullopt;
  return res.body();
}

bool HttpStore::try_put(const std::string& key, const std::string& value) {
  auto r = request(true, key, value);
  if (!r) return false;
  if (r->first != 200)
    throw std::runtime_error(fmt::format("key-value store {}: PUT {} answered {}", endpoint(), key, r->first));
  return true;
}

std::optional<std::string> HttpStore::try_get(const std::string& key) {
  auto r = request(false, key, "");
  if (!r) throw std::runtime_error(fmt::format("key-value store {} is unreachable", endpoint()));
  if (r->first == 404) return std::nullopt;
  if (r->first != 200)
    throw std::runtime_error(fmt::format("key-value store {}: GET {} answered {}", endpoint(), key, r->first));
  return std::move(r->second);
}

void HttpStore::set(const std::string& key, const std::vector<char>& data) {
  put(key, std::string(data.begin(), data.end()));
}

std::vector<char> HttpStore::get(const std::string& key) {
  wait({key});
  auto value = try_get(key);
  return std::vector<char>(value->begin(), value->end());
}

void HttpStore::wait(const std::vector<std::string>& keys) { wait(keys, timeout_); }

void HttpStore::wait(const std::vector<std::string>& keys, const std::chrono::milliseconds& timeout) {
  const auto deadline = Clock::now() + timeout;
  for (const auto& key : keys) {
    while (true) {
      auto r = request(false, key, "");
      if (r && r->first == 200) break;
      if (Clock::now() > deadline)
        throw std::runtime_error(fmt::format("key-value store {}: key '{}' did not appear within {} s", endpoint(), key,
                                             timeout.count() / 1000));
      std::this_thread::sleep_for(kRetryInterval);
    }
  }
}

}  // namespace paddle::collective
