#pragma once
// The requests both faces of the store (rendezvous_store.h, master_store.h) send, one function
// each over a StoreClient: a key's write, its read, and the wait for it. The requests and their
// answers are kv_store_server.h's.

#include <chrono>
#include <optional>
#include <string>

#include "store/store_client.h"

namespace paddle::store {

// PUT /kv/KEY. False when the store can't be reached; throws common::PeerError for a refusal.
bool put_value(StoreClient& client, const std::string& key, const std::string& value);
// GET /kv/KEY: the value, or nothing when the key is absent. Throws common::PeerError when the
// store is unreachable.
std::optional<std::string> get_value(StoreClient& client, const std::string& key);
// GET /wait/KEY: the value of `key` once it exists, waiting on the store (a long poll) up to
// `wait`, at most a minute; nothing when it did not come in time. Throws common::PeerError when
// the store is unreachable, or the client stopped waiting (StoreClient::stop_waiting).
std::optional<std::string> wait_value(StoreClient& client, const std::string& key, std::chrono::milliseconds wait);

}  // namespace paddle::store
