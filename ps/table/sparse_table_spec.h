#pragma once
// SparseTableSpec: what a model says about one sparse table: its name, dim and init seed, the
// accessor that says what a row holds (plain: dim values under the TableSpecs-wide UpdateRule;
// CTR: ps/table/ctr_accessor.h), and when a new key earns a row (AdmissionSpec). A sparse table has no
// size: it grows as keys arrive and shrinks as CTR rows expire.

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/enum_names.h"
#include "ps/table/ctr_accessor.h"

namespace paddle::ps {

// Where a sparse table's rows live. kMemory: every row in memory. kSsd: at most memory_rows rows in
// memory (the hot ones, as ps/table/sparse_table.h's eviction policy chooses), the rest in a DiskTier
// (ps/table/disk_tier.h) in `dir`, the table's own directory.
struct StorageSpec {
  enum class Kind { kMemory, kSsd };
  static constexpr common::EnumNames<Kind, 2> kNames{{{{Kind::kMemory, "memory"}, {Kind::kSsd, "ssd"}}}};
  Kind kind = Kind::kMemory;
  std::string dir;           // kSsd
  uint64_t memory_rows = 0;  // kSsd: all shards together; at least one per shard
};

// Until admitted, a key reads as its initial values, no row is stored and its pushes are dropped.
struct AdmissionSpec {
  enum class Kind { kAlways, kCount, kProbability };
  static constexpr common::EnumNames<Kind, 3> kNames{
      {{{Kind::kAlways, "always"}, {Kind::kCount, "count"}, {Kind::kProbability, "probability"}}}};
  Kind kind = Kind::kAlways;
  uint32_t count = 0;        // kCount: a row is created on its count-th push (that push applied)
  float probability = 1.0f;  // kProbability: each push of an unadmitted key admits it with this
                             // probability (seeded by the table's seed; deterministic for a given push order)
};

struct SparseTableSpec {
  std::string name;
  size_t dim = 0;
  uint64_t seed = 0;
  enum class Accessor { kPlain, kCtr };
  static constexpr common::EnumNames<Accessor, 2> kAccessorNames{{{{Accessor::kPlain, "plain"}, {Accessor::kCtr, "ctr"}}}};
  Accessor accessor = Accessor::kPlain;
  CtrAccessorSpec ctr{};    // used when accessor == kCtr
  AdmissionSpec admission{};  // any accessor
  StorageSpec storage{};      // any accessor
};

// Floats per key of push_sparse / accumulate / add_sparse: dim for plain tables, 2 + dim for
// CTR tables (show, click, then the dim gradients). Pulls are always dim per key.
inline size_t push_width(const SparseTableSpec& spec) {
  return spec.accessor == SparseTableSpec::Accessor::kCtr ? 2 + spec.dim : spec.dim;
}

}  // namespace paddle::ps
