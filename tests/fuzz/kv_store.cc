// Fuzz target: the job key-value store's request handling (store/kv_store_handler.h) on
// one connection: the input, after its first byte, is the bytes a client sends, parsed by Beast
// as the server's sessions parse them (body limit included), and every complete request is
// answered in turn. The first byte's low bit gives the store a job token, so refusals are
// exercised too. Every answer must be a whole HTTP response; an unparsable request ends the
// connection, as it does on a socket.

#include <boost/beast/core/buffers_prefix.hpp>
#include <boost/beast/http/parser.hpp>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

#include "store/kv_store_handler.h"

namespace {

using paddle::store::KvStoreHandler;
namespace http = boost::beast::http;

constexpr size_t kMaxBody = 1 << 16;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::optional<paddle::common::JobToken> token;
  if (data[0] & 1) token.emplace("fuzz-secret");
  KvStoreHandler handler(token);
  auto connection = handler.connect("127.0.0.1:1");
  std::string_view input(reinterpret_cast<const char*>(data + 1), size - 1);
  while (!input.empty()) {
    http::request_parser<http::string_body> parser;
    parser.eager(true);
    parser.body_limit(kMaxBody);
    boost::beast::error_code ec;
    const size_t used = parser.put(boost::asio::buffer(input.data(), input.size()), ec);
    if (ec || !parser.is_done()) {
      if (!ec && !input.empty()) parser.put_eof(ec);
      if (ec || !parser.is_done()) break;
    }
    input.remove_prefix(used);
    // Without a continuation a blocking request is answered at once, as if out of time.
    const auto answer = handler.respond(parser.get(), connection);
    if (!answer) std::abort();
    const auto& response = *answer;
    if (response.has_content_length() && response[http::field::content_length] != std::to_string(response.body().size()))
      std::abort();
    if (!response.keep_alive()) break;
    if (used == 0) break;
  }
  handler.closed(connection);
  return 0;
}
