#include "ps/client/key_router.h"

#include <algorithm>
#include <stdexcept>

#include "ps/wire/sharding.h"

namespace paddle::ps {

void KeyRouter::route(std::span<const uint64_t> keys, size_t servers) {
  if (keys.size() > UINT32_MAX) throw std::invalid_argument("a sparse batch of more than 2^32 keys");
  batch_ = keys;
  starts_.assign(servers + 1, 0);
  for (uint64_t key : keys) ++starts_[server_of_key(key, servers) + 1];
  for (size_t s = 0; s < servers; ++s) starts_[s + 1] += starts_[s];
  size_t holding = 0;
  for (size_t s = 0; s < servers; ++s) holding += count(s) > 0;
  in_order_ = holding <= 1;
  if (in_order_) return;
  keys_.resize(keys.size());
  positions_.resize(keys.size());
  fill_.assign(starts_.begin(), starts_.end() - 1);
  for (size_t i = 0; i < keys.size(); ++i) {
    const size_t at = fill_[server_of_key(keys[i], servers)]++;
    keys_[at] = keys[i];
    positions_[at] = static_cast<uint32_t>(i);
  }
}

std::span<const uint64_t> KeyRouter::keys(size_t server) const {
  const auto& all = in_order_ ? batch_ : std::span<const uint64_t>(keys_);
  return all.subspan(begin(server), count(server));
}

void KeyRouter::gather(std::span<const float> rows, size_t dim) {
  dim_ = dim;
  if (in_order_) {
    gathered_ = rows;
    return;
  }
  rows_.resize(rows.size());
  for (size_t j = 0; j < positions_.size(); ++j) std::copy_n(rows.data() + positions_[j] * dim, dim, rows_.data() + j * dim);
  gathered_ = rows_;
}

std::span<const float> KeyRouter::rows(size_t server) const {
  return gathered_.subspan(begin(server) * dim_, count(server) * dim_);
}

void KeyRouter::scatter(size_t server, const float* rows, float* out, size_t dim) const {
  if (in_order_) {
    std::copy_n(rows, count(server) * dim, out + begin(server) * dim);
    return;
  }
  for (size_t j = begin(server); j < end(server); ++j)
    std::copy_n(rows + (j - begin(server)) * dim, dim, out + positions_[j] * dim);
}

}  // namespace paddle::ps
