#pragma once
// MovieLens readers (GroupLens 100K and 1M) for the recommender of Paddle's book: every rating
// becomes one sample of user and movie features, with the rating (1..5) as its regression target.
//
// Feature layout of one sample, all ids stored as whole floats, shape [5 + G + T]:
//   [0] user id        the id of the file (1..users); row 0 of its embedding is never used
//   [1] gender         0 = M, 1 = F
//   [2] age bucket     0..6 for the 1M buckets 1, 18, 25, 35, 45, 50, 56 (100K ages are mapped:
//                      under 18 -> 1, 18-24 -> 18, 25-34 -> 25, 35-44 -> 35, 45-49 -> 45,
//                      50-55 -> 50, 56 and over -> 56)
//   [3] occupation     0..20: 100K's line in u.occupation, 1M's number in users.dat
//   [4] movie id       the id of the file (1..movies); row 0 never used
//   [5 .. 5+G)         genre ids, 1-based (0 is padding): 100K's u.genre index + 1, 1M's index
//                      in kMovieLens1MGenres + 1; G = the most genres any movie has
//   [5+G .. 5+G+T)     title word ids, 1-based (0 is padding), T = the most words any title has
// Title words: the title without its trailing "(year)", lower-cased, split on every byte that is
// not an ASCII letter or digit or a Latin-1 letter (>= 0xC0); ids in order of first appearance
// in the movie file, so the vocabulary does not depend on the split.

#include <array>
#include <cstdint>
#include <string>

#include "runtime/data/data_sources.h"

namespace paddle::runtime {

inline constexpr int kMovieLensAgeBuckets = 7;
inline constexpr std::array<int, kMovieLensAgeBuckets> kMovieLensAges = {1, 18, 25, 35, 45, 50, 56};
inline constexpr std::array<const char*, 18> kMovieLens1MGenres = {
    "Action", "Adventure", "Animation", "Children's", "Comedy", "Crime", "Documentary", "Drama", "Fantasy",
    "Film-Noir", "Horror", "Musical", "Mystery", "Romance", "Sci-Fi", "Thriller", "War", "Western"};

// Sizes the recommender's embeddings need: each vocabulary is the largest id + 1.
struct MovieLensVocabulary {
  int64_t users = 0;        // largest user id + 1
  int64_t genders = 2;
  int64_t ages = kMovieLensAgeBuckets;
  int64_t occupations = 0;
  int64_t movies = 0;       // largest movie id + 1
  int64_t genres = 0;       // genre count + 1 (padding)
  int64_t words = 0;        // title words + 1 (padding)
  int64_t genre_slots = 0;  // G
  int64_t title_slots = 0;  // T
  int64_t features() const { return 5 + genre_slots + title_slots; }
};

struct MovieLensData {
  TrainTestSplit split;
  MovieLensVocabulary vocabulary;
};

// DATA_DIR holding ml-100k (u.data, u.item, u.user, u.occupation) or ml-1m (ratings.dat,
// movies.dat, users.dat), told apart by which files exist. The ratings are shuffled with `seed`
// and the first 90% train, the rest test. A missing or malformed file throws common::DataError
// naming file:line.
MovieLensData load_movielens(const std::string& data_dir, uint32_t seed);

// load_movielens' vocabulary, from DATA_DIR's users and movies alone (not its ratings).
MovieLensVocabulary movielens_vocabulary(const std::string& data_dir);

// The title words of `title` as described above (exposed for tests).
std::vector<std::string> movielens_title_words(const std::string& title);

}  // namespace paddle::runtime
