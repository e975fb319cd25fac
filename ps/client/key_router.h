#pragma once
// KeyRouter: a batch of sparse keys split into the servers' shares once (ps/wire/sharding.h
// server_of_key), with the batch positions of every share's keys, so that one pass routes the
// keys, the gradient rows that go with them, and the pulled rows coming back. With one server
// (or every key on one) a share is the batch itself and nothing is copied. Its buffers are kept
// from batch to batch; a share is valid until the next route().

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace paddle::ps {

class KeyRouter {
 public:
  void route(std::span<const uint64_t> keys, size_t servers);
  // True when the shares keep the batch's order: server s's share is then the keys at
  // positions [begin(s), end(s)) of the batch.
  bool in_order() const { return in_order_; }
  size_t begin(size_t server) const { return starts_[server]; }
  size_t end(size_t server) const { return starts_[server + 1]; }
  size_t count(size_t server) const { return end(server) - begin(server); }
  std::span<const uint64_t> keys(size_t server) const;
  // Arranges `rows` (dim floats per key of the batch) in the shares' order: a view of `rows`
  // when in_order(), else a copy in a buffer of the router's. rows(s) is then server s's part.
  void gather(std::span<const float> rows, size_t dim);
  std::span<const float> rows(size_t server) const;
  // Puts server s's rows (in its share's order) at their batch positions in `out`.
  void scatter(size_t server, const float* rows, float* out, size_t dim) const;

 private:
  std::span<const uint64_t> batch_;
  bool in_order_ = true;
  std::vector<size_t> starts_;
  std::vector<size_t> fill_;         // route()'s next free place per server
  std::vector<uint64_t> keys_;       // the shares one after another, when not in order
  std::vector<uint32_t> positions_;  // their positions in the batch
  std::vector<float> rows_;
  std::span<const float> gathered_;
  size_t dim_ = 0;
};

}  // namespace paddle::ps
