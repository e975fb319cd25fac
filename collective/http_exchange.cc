#include "collective/http_exchange.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <cctype>

namespace paddle::collective {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

std::optional<HttpAnswer> http_exchange(const std::string& ip, int port, http::verb verb, const std::string& target,
                                        const std::string& body, std::chrono::milliseconds timeout) {
  asio::io_context io;
  beast::tcp_stream stream(io);
  beast::error_code ec;
  const auto address = asio::ip::make_address(ip, ec);
  if (ec) return std::nullopt;
  stream.expires_after(timeout);
  stream.connect(asio::ip::tcp::endpoint(address, static_cast<unsigned short>(port)), ec);
  if (ec) return std::nullopt;
  http::request<http::string_body> req{verb, target, 11};
  req.set(http::field::host, ip);
  req.keep_alive(false);
  if (verb == http::verb::put || verb == http::verb::post) req.body() = body;
  req.prepare_payload();
  http::write(stream, req, ec);
  if (ec) return std::nullopt;
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(64 << 20);
  http::read(stream, buffer, parser, ec);
  if (ec) return std::nullopt;
  return HttpAnswer{static_cast<int>(parser.get().result_int()), std::move(parser.get().body())};
}

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

}  // namespace paddle::collective
