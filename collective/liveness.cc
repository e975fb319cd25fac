#include "collective/liveness.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>

#include "collective/http_exchange.h"
#include "common/error.h"
#include "common/parse.h"

namespace paddle::collective {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

constexpr auto kRequestTimeout = std::chrono::seconds(10);

// Holds the presence connection open; the server notices when it closes.
class OpenConnection : public Liveness::Presence {
 public:
  asio::io_context io;
  beast::tcp_stream stream{io};
};

}  // namespace

std::unique_ptr<Liveness::Presence> Liveness::announce(const std::string& name) {
  auto connection = std::make_unique<OpenConnection>();
  beast::error_code ec;
  const auto address = asio::ip::make_address(ip_, ec);
  connection->stream.expires_after(kRequestTimeout);
  if (!ec) connection->stream.connect(asio::ip::tcp::endpoint(address, static_cast<unsigned short>(port_)), ec);
  std::optional<std::string> proof;
  if (!ec) proof = answer_challenge(connection->stream, ip_, token_);
  http::request<http::string_body> req{http::verb::put, "/presence/" + encode_key(name), 11};
  req.set(http::field::host, ip_);
  if (proof && !proof->empty()) req.set(kProofHeader, *proof);
  req.keep_alive(true);
  req.prepare_payload();
  if (!ec) http::write(connection->stream, req, ec);
  beast::flat_buffer buffer;
  http::response<http::string_body> res;
  if (!ec) http::read(connection->stream, buffer, res, ec);
  if (!ec && !proof) ec = asio::error::connection_reset;
  if (ec || res.result_int() != 200)
    throw common::PeerError(fmt::format("key-value store {}:{}: cannot announce presence of {}", ip_, port_, name));
  connection->stream.expires_never();
  return connection;
}

std::optional<std::vector<std::string>> Liveness::lost() {
  auto answer = http_exchange(ip_, port_, http::verb::get, "/lost", "", std::chrono::seconds(2), token_);
  if (!answer || answer->status != 200) return std::nullopt;
  if (answer->body.empty()) return std::vector<std::string>{};
  return common::split_list(answer->body, "the store's lost record");
}

}  // namespace paddle::collective
