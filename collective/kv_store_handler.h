#pragma once
// KvStoreHandler: what the job's key-value store (collective/kv_store_server.h, which documents
// the requests) answers to one parsed HTTP request, apart from the connection that carried it.
// It owns the store's values and token; each connection keeps a KvConnection, what the store
// knows about it. Tests and tests/fuzz drive it without sockets.

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "common/job_token.h"

namespace paddle::collective {

struct StoredValue {
  std::string value;
  std::chrono::steady_clock::time_point written;
};

// One connection's standing with the store.
struct KvConnection {
  std::string peer;       // "IP:PORT", for refusals
  std::string challenge;  // the last GET /auth/challenge answer
  bool proven = false;    // the job token is proven (or the store has none)
  std::string presence;   // set when this connection is a rank's presence
};

class KvStoreHandler {
 public:
  using Request = boost::beast::http::request<boost::beast::http::string_body>;
  using Response = boost::beast::http::response<boost::beast::http::string_body>;

  // Without a token it serves anyone.
  explicit KvStoreHandler(std::optional<common::JobToken> token);

  bool has_token() const { return token_.has_value(); }
  KvConnection connect(std::string peer) const;
  // The answer to REQUEST on CONNECTION, payload prepared; keep_alive() false means close the
  // connection after it. Safe to call from several connections at once.
  Response respond(const Request& request, KvConnection& connection);
  // CONNECTION closed: a presence it held is now lost (GET /lost).
  void closed(const KvConnection& connection);

 private:
  bool prove(const Request& request, KvConnection& connection) const;
  void answer_key(const std::string& key, const Request& request, Response& response);
  std::string keys_under(const std::string& prefix, const char* separator, bool strip);

  std::optional<common::JobToken> token_;
  std::mutex mutex_;
  std::map<std::string, StoredValue> values_;  // keys, "lost/NAME" included
};

}  // namespace paddle::collective
