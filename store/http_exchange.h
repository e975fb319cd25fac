#pragma once
// One HTTP/1.1 request to the job's store on a connection of its own (StoreConnection, once).
// What the store's server and clients share is store_wire.h's. Internal to collective/.

#include <chrono>
#include <optional>
#include <string>
#include <utility>

#include <boost/beast/http/verb.hpp>

#include "store/store_wire.h"
#include "common/job_token.h"

namespace paddle::store {

// `target` is the request path ("/kv/KEY"); nothing when the server can't be reached or the
// exchange fails within `timeout`; StoreRefused when it refuses the token. With a token, the
// request first answers the server's challenge on the same connection.
std::optional<HttpAnswer> http_exchange(const std::string& ip, int port, boost::beast::http::verb verb,
                                        const std::string& target, const std::string& body,
                                        std::chrono::milliseconds timeout,
                                        const std::optional<common::JobToken>& token = std::nullopt);

}  // namespace paddle::store
