#pragma once
// KvStoreHandler: what the job's key-value store (store/kv_store_server.h, which documents
// the requests) answers to one parsed HTTP request, apart from the connection that carried it.
// It owns the store's values, their revisions, the requests that wait for a change, and the
// presences of the connections that announced one. Each connection keeps a KvConnection, what
// the store knows about it. Tests and tests/fuzz drive it without sockets.
//
// Every write gets the next revision (1, 2, ...). A blocking request (wait, watch) that cannot
// be answered at once is parked: the handler calls its `later` with the answer when a write
// meets it, and the connection asks for expire() when its time runs out. Finding the parked
// requests a write meets costs the requests parked on that key, plus one look per distinct
// watched prefix, never a pass over every connection.

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "store/shared_text.h"
#include "common/job_token.h"

namespace paddle::store {

struct StoredValue {
  SharedText value;  // shared with the answers that carry it
  std::chrono::steady_clock::time_point written;
  int64_t revision = 0;
};

// One connection's standing with the store.
struct KvConnection {
  std::string peer;       // "IP:PORT", for refusals
  std::string challenge;  // the last GET /auth/challenge answer
  bool proven = false;    // the job token is proven (or the store has none)
  std::string presence;   // set when this connection is a rank's or a launcher's presence
  uint64_t parked = 0;    // the id of its request that waits, 0 when none
};

class KvStoreHandler {
 public:
  using Request = boost::beast::http::request<boost::beast::http::string_body>;
  using Response = boost::beast::http::response<SharedTextBody>;
  using Clock = std::chrono::steady_clock;
  // Receives a parked request's answer, once; called without the handler's lock held.
  using Later = std::function<void(Response)>;

  // Without a token it serves anyone.
  explicit KvStoreHandler(std::optional<common::JobToken> token);

  bool has_token() const { return token_.has_value(); }
  KvConnection connect(std::string peer);
  // The answer to REQUEST on CONNECTION, payload prepared; keep_alive() false means close the
  // connection after it. Nothing when the request is parked (connection.parked is then its id
  // and its deadline is parked_until(): `later` gets the answer); without `later` a blocking
  // request is answered at once, as if its time had run out. Safe to call from several
  // connections at once.
  std::optional<Response> respond(const Request& request, KvConnection& connection, Later later = {});
  // When the parked request `id` stops waiting, on the store's clock.
  Clock::time_point parked_until(uint64_t id);
  // The parked request `id`'s time ran out: its answer, or nothing when a write answered it first.
  std::optional<Response> expire(uint64_t id);
  // CONNECTION closed: a presence it held is now lost (GET /lost), and its parked request goes.
  void closed(KvConnection& connection);
  // Marks lost the presences not heard from for longer than `silent_after` (no request, none
  // parked); returns how many it marked. The server calls it a few times per `silent_after`.
  int sweep(std::chrono::milliseconds silent_after);

 private:
  struct Parked {
    enum class Kind { kWait, kWatch };
    explicit Parked(Kind k) : kind(k) {}
    Kind kind;
    std::string key;                    // kWait
    std::vector<std::string> prefixes;  // kWatch
    int64_t after = 0;                  // kWatch: changes with a larger revision
    Clock::time_point until;
    unsigned version = 11;
    bool keep_alive = true;
    std::string presence;
    Later later;
  };
  struct Presence {
    Clock::time_point heard;
    int open = 0;    // connections that carry it
    int parked = 0;  // requests of it that wait now
  };
  using Ready = std::vector<std::pair<Later, Response>>;
  struct Routes;  // the requests' handlers (kv_store_handler.cc)

  bool prove(const Request& request, KvConnection& connection) const;
  void answer_key(const std::string& key, const Request& request, Response& response);
  std::string keys_under(const std::string& prefix, const char* separator, bool strip);
  std::string lost_answer(std::string_view target) const;
  std::string silent_answer(std::chrono::milliseconds over) const;
  // Renews (and first announces) the presence a request carries; under the lock.
  void hear(KvConnection& connection, const Request& request);
  void announce(KvConnection& connection, const std::string& name);
  // Stores KEY and answers the parked requests the write meets, into `ready`; under the lock.
  void write(const std::string& key, std::string value, Ready& ready);
  // The answer of a wait or watch now; nothing when it must wait. Under the lock. A wait's is
  // the stored value itself, so that a value many wait for is copied once per answer only.
  const SharedText* wait_answer(const Parked& p) const;
  std::optional<std::string> watch_answer(const Parked& p, std::optional<int64_t> only_revision = std::nullopt) const;
  Response parked_response(const Parked& p, int status, SharedText body) const;
  // Removes parked request `id` from the indexes; under the lock.
  Parked unpark(uint64_t id);
  std::optional<Response> blocking(const Request& request, KvConnection& connection, Parked p, Later later);

  std::optional<common::JobToken> token_;
  mutable std::mutex mutex_;
  std::map<std::string, StoredValue> values_;  // keys, "lost/NAME" included
  std::map<int64_t, std::string> by_revision_;  // each key's latest revision
  int64_t revision_ = 0;
  uint64_t requests_ = 0;
  int connections_ = 0;
  std::map<std::string, Presence> presences_;
  uint64_t next_parked_ = 1;
  std::map<uint64_t, Parked> parked_;
  std::multimap<std::string, uint64_t> waits_;             // key -> parked waits
  std::map<std::string, std::set<uint64_t>> watches_;      // prefix -> parked watches
};

}  // namespace paddle::store
