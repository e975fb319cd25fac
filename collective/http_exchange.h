#pragma once
// One HTTP/1.1 request to the job's store and its answer, the transport HttpStore and Liveness
// share. Internal to collective/.

#include <chrono>
#include <optional>
#include <string>
#include <utility>

#include <boost/beast/http/verb.hpp>

namespace paddle::collective {

struct HttpAnswer {
  int status = 0;
  std::string body;
};

// `target` is the request path ("/kv/KEY"); nothing when the server can't be reached or the
// exchange fails within `timeout`.
std::optional<HttpAnswer> http_exchange(const std::string& ip, int port, boost::beast::http::verb verb,
                                        const std::string& target, const std::string& body,
                                        std::chrono::milliseconds timeout);

// Percent-encodes everything but [A-Za-z0-9_.-], so that any key is one path segment.
std::string encode_key(const std::string& key);

}  // namespace paddle::collective
