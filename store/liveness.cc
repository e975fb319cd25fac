#include "store/liveness.h"

#include <boost/beast/http/verb.hpp>
#include <fmt/format.h>

#include "store/http_exchange.h"
#include "store/store_connection.h"
#include "common/error.h"
#include "common/parse.h"

namespace paddle::store {
namespace {

namespace http = boost::beast::http;

constexpr auto kRequestTimeout = std::chrono::seconds(10);

// Holds the presence connection open; the server notices when it closes.
class OpenConnection : public Liveness::Presence {
 public:
  explicit OpenConnection(std::unique_ptr<StoreConnection> c) : connection(std::move(c)) {}
  std::unique_ptr<StoreConnection> connection;
};

}  // namespace

std::unique_ptr<Liveness::Presence> Liveness::announce(const std::string& name) {
  auto connection = std::make_unique<StoreConnection>(ip_, port_, token_);
  auto answer = connection->exchange(http::verb::put, "/presence/" + encode_key(name), "", kRequestTimeout);
  if (!answer || answer->status != 200)
    throw common::PeerError(fmt::format("key-value store {}:{}: cannot announce presence of {}", ip_, port_, name));
  return std::make_unique<OpenConnection>(std::move(connection));
}

std::optional<std::vector<std::string>> Liveness::lost() {
  auto answer = http_exchange(ip_, port_, http::verb::get, "/lost", "", std::chrono::seconds(2), token_);
  if (!answer || answer->status != 200) return std::nullopt;
  if (answer->body.empty()) return std::vector<std::string>{};
  return common::split_list(answer->body, "the store's lost record");
}

}  // namespace paddle::store
