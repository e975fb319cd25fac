#include "collective/http_exchange.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <cctype>
#include <fmt/format.h>

#include "common/error.h"

namespace paddle::collective {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

std::optional<std::string> answer_challenge(beast::tcp_stream& stream, const std::string& host,
                                            const std::optional<common::JobToken>& token) {
  if (!token) return std::string();
  http::request<http::string_body> req{http::verb::get, "/auth/challenge", 11};
  req.set(http::field::host, host);
  req.keep_alive(true);
  beast::error_code ec;
  http::write(stream, req, ec);
  if (ec) return std::nullopt;
  beast::flat_buffer buffer;
  http::response<http::string_body> res;
  http::read(stream, buffer, res, ec);
  if (ec || res.result_int() != 200 || res.body().size() != common::kChallengeSize) return std::nullopt;
  return token->prove(kStoreProofPurpose, res.body());
}

std::optional<HttpAnswer> http_exchange(const std::string& ip, int port, http::verb verb, const std::string& target,
                                        const std::string& body, std::chrono::milliseconds timeout,
                                        const std::optional<common::JobToken>& token) {
  asio::io_context io;
  beast::tcp_stream stream(io);
  beast::error_code ec;
  const auto address = asio::ip::make_address(ip, ec);
  if (ec) return std::nullopt;
  stream.expires_after(timeout);
  stream.connect(asio::ip::tcp::endpoint(address, static_cast<unsigned short>(port)), ec);
  if (ec) return std::nullopt;
  const auto proof = answer_challenge(stream, ip, token);
  if (!proof) return std::nullopt;
  http::request<http::string_body> req{verb, target, 11};
  req.set(http::field::host, ip);
  if (!proof->empty()) req.set(kProofHeader, *proof);
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
  if (parser.get().result() == http::status::unauthorized)
    throw StoreRefused(fmt::format("key-value store {}:{} refused this process: {} (PADDLE_JOB_TOKEN)", ip, port,
                                   token ? "its job token is not the job's" : "it has no job token"));
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
