#include <doctest/doctest.h>

#include <random>
#include <unordered_map>

#include "ps/table/row_store.h"

using namespace paddle::ps;

TEST_CASE("row store: any key, rows through growth, erase keeps every other key's row") {
  RowStore store(3);
  bool added = false;
  store.insert(0, added)[0] = 1;
  CHECK(added);
  store.insert(~uint64_t{0}, added)[0] = 2;  // the extreme keys are ordinary keys
  CHECK(store.insert(0, added)[0] == 1);
  CHECK_FALSE(added);
  CHECK(store.find(7) == nullptr);

  std::mt19937_64 rng(3);
  std::unordered_map<uint64_t, float> expected{{0, 1}, {~uint64_t{0}, 2}};
  for (int i = 0; i < 200000; ++i) {
    const uint64_t key = rng() % 60000 * 16 + (i % 7 == 0 ? uint64_t{0xFFFFFFFF00000000} : 0);  // alike modulo 16
    if (i % 3 == 2 && !expected.empty()) {  // erase a present key now and then
      const uint64_t victim = expected.begin()->first;
      store.erase_key(victim);
      expected.erase(victim);
      continue;
    }
    float* row = store.insert(key, added);
    auto [it, is_new] = expected.try_emplace(key, static_cast<float>(i));
    CHECK(added == is_new);
    if (added) {
      CHECK(row[1] == 0.0f);  // new rows are zeroed
      row[0] = it->second;
    }
  }
  CHECK(store.size() == expected.size());
  for (auto [key, value] : expected) {
    const float* row = store.find(key);
    REQUIRE(row != nullptr);
    CHECK(row[0] == value);
  }
  for (size_t r = 0; r < store.size(); ++r) CHECK(store.find(store.key_at(r)) == store.at(r));
}

TEST_CASE("row store: erasing every row frees the arena down to one chunk; clear empties it") {
  RowStore store(5);
  bool added = false;
  for (uint64_t k = 0; k < 20000; ++k) store.insert(k * 977, added);
  const uint64_t full = store.arena_bytes();
  const uint64_t raw = 20000 * (8 + 5 * 4);
  CHECK(full >= raw);
  CHECK(full <= raw + RowStore::kChunkRows * 28 + 4096);  // at most one chunk of slack
  while (store.size() > 0) store.erase(store.size() / 2);
  CHECK(store.arena_bytes() <= RowStore::kChunkRows * 28 + 4096);
  CHECK(store.find(500 * 977) == nullptr);
  for (uint64_t k = 0; k < 100; ++k) store.insert(k, added);
  store.clear();
  CHECK(store.size() == 0);
  for (uint64_t k = 0; k < 100; ++k) CHECK(store.find(k) == nullptr);
  store.insert(42, added)[4] = 3;
  CHECK(store.find(42)[4] == 3);
}

TEST_CASE("row store: a big store's slabs and index ask for huge pages, and give them back as it empties") {
  RowStore store(1);  // 12-byte rows: 512 chunks are 3 MiB
  const size_t rows = (RowStore::kHugePageChunks + 200) * RowStore::kChunkRows;
  bool added = false;
  for (uint64_t k = 0; k < rows; ++k) store.insert(k * 0x9E3779B97F4A7C15ULL, added)[0] = static_cast<float>(k);
  CHECK(store.index_bytes() >= RowStore::kHugeIndexBytes);
  CHECK(store.arena_bytes() >= rows * 12);
  CHECK(store.arena_bytes() <= rows * 12 + MappedMemory::kHugePage + 64 * 1024);  // at most a slab of slack
  for (uint64_t k = 0; k < rows; k += 997) CHECK(store.find(k * 0x9E3779B97F4A7C15ULL)[0] == static_cast<float>(k));
  while (store.size() > 1000) store.erase(0);
  CHECK(store.arena_bytes() <= 32 * 1024);  // chunk 0, the last chunk's pages, the chunk list
  for (size_t r = 0; r < store.size(); ++r) CHECK(store.find(store.key_at(r)) == store.at(r));
}
