#include "store/http_exchange.h"

#include "store/store_connection.h"

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include <cctype>
#include <fmt/format.h>

#include "common/error.h"

namespace paddle::store {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

std::optional<HttpAnswer> http_exchange(const std::string& ip, int port, http::verb verb, const std::string& target,
                                        const std::string& body, std::chrono::milliseconds timeout,
                                        const std::optional<common::JobToken>& token) {
  StoreConnection connection(ip, port, token);
  auto answer = connection.exchange(verb, target, body, timeout);
  connection.close();
  return answer;
}

}  // namespace paddle::store
