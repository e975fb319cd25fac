#pragma once
// Which server holds what: the dense vector is cut into one contiguous block per server; a
// sparse key belongs to shard key % (servers * kShardsPerServer), and shards go to servers in
// consecutive blocks of kShardsPerServer.

#include <cstddef>
#include <cstdint>
#include <utility>

namespace paddle::ps {

inline constexpr uint64_t kShardsPerServer = 16;

// [begin, end) of server `index`'s block of a dense vector of `total` values.
inline std::pair<size_t, size_t> dense_block(size_t total, size_t servers, size_t index) {
  return {total * index / servers, total * (index + 1) / servers};
}

inline size_t server_of_key(uint64_t key, size_t servers) {
  return static_cast<size_t>((key % (servers * kShardsPerServer)) / kShardsPerServer);
}

}  // namespace paddle::ps
