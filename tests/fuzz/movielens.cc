// Fuzz target: the MovieLens readers (runtime/data/movielens.h load_movielens). The input's first
// byte picks the layout, 100K (even) or 1M (odd); the rest is cut at NUL bytes into its files in
// order (100K: u.data, u.item, u.user, u.occupation; 1M: ratings.dat, movies.dat, users.dat),
// missing ones empty. Anything wrong must be a common::DataError naming file and line; what
// loads must have every id inside its vocabulary (the recommender's embeddings index by them).

#include <array>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/error.h"
#include "runtime/data/movielens.h"
#include "tests/fuzz/scratch_dir.h"

namespace {

constexpr std::array<const char*, 4> k100K = {"u.data", "u.item", "u.user", "u.occupation"};
constexpr std::array<const char*, 3> k1M = {"ratings.dat", "movies.dat", "users.dat"};

void check(const paddle::runtime::Dataset& d, const paddle::runtime::MovieLensVocabulary& v) {
  const auto width = static_cast<size_t>(v.features());
  if (d.features.size() != d.targets.size() * width) std::abort();
  for (size_t at = 0; at < d.features.size(); at += width) {
    const float* f = d.features.data() + at;
    const int64_t fixed[5] = {v.users, v.genders, v.ages, v.occupations, v.movies};
    for (size_t i = 0; i < width; ++i) {
      const int64_t limit = i < 5 ? fixed[i] : i < 5 + static_cast<size_t>(v.genre_slots) ? v.genres : v.words;
      if (!(f[i] >= 0 && f[i] < static_cast<float>(limit))) std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const paddle::fuzz::ScratchDir scratch;
  if (size == 0) return 0;
  const bool one_million = data[0] & 1;
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::vector<const char*> files = one_million ? std::vector<const char*>(k1M.begin(), k1M.end())
                                                     : std::vector<const char*>(k100K.begin(), k100K.end());
  scratch.clear();
  for (const char* name : files) {
    const size_t nul = rest.find('\0');
    scratch.write(name, rest.substr(0, nul));
    rest = nul == std::string_view::npos ? std::string_view() : rest.substr(nul + 1);
  }
  try {
    const auto data = paddle::runtime::load_movielens(scratch.path(), 1);
    check(data.split.train, data.vocabulary);
    check(data.split.test, data.vocabulary);
  } catch (const paddle::common::DataError&) {
  }
  return 0;
}
