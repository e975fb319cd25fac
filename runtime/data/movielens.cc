#include "runtime/data/movielens.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <random>

#include "common/error.h"
#include "runtime/data/text_lines.h"

namespace paddle::runtime {
namespace {

struct User {
  bool known = false;
  int gender = 0, age_bucket = 0, occupation = 0;
};

struct Movie {
  bool known = false;
  std::vector<int> genres;  // 1-based
  std::vector<int> words;   // 1-based
};

struct Rating {
  int user = 0, movie = 0;
  float rating = 0;
};

struct Tables {
  std::vector<User> users;    // by id
  std::vector<Movie> movies;  // by id
  std::vector<Rating> ratings;
  std::map<std::string, int> words;
  int64_t genres = 0;  // without padding
  int64_t occupations = 0;
};

// The fields of `line`, exactly `expected` of them.
std::vector<std::string> fields_of(const TextLines& lines, const std::string& line, std::string_view separator,
                                   size_t expected) {
  auto fields = split_fields(line, separator);
  if (fields.size() != expected) lines.fail(fmt::format("{} fields, expected {}", fields.size(), expected));
  return fields;
}

constexpr long kMaxId = 10'000'000;

template <typename T>
T& slot(std::vector<T>& by_id, long id) {
  if (by_id.size() <= static_cast<size_t>(id)) by_id.resize(static_cast<size_t>(id) + 1);
  return by_id[static_cast<size_t>(id)];
}

int gender_of(const TextLines& lines, const std::string& text) {
  if (text == "M") return 0;
  if (text == "F") return 1;
  lines.fail(fmt::format("gender '{}' is not M or F", text));
}

int age_bucket_of_years(long years) {
  int bucket = 0;
  for (int b = 0; b < kMovieLensAgeBuckets; ++b)
    if (years >= kMovieLensAges[b]) bucket = b;
  return bucket;
}

std::vector<int> word_ids(const std::string& title, std::map<std::string, int>& vocabulary) {
  std::vector<int> ids;
  for (const auto& word : movielens_title_words(title)) {
    auto [it, added] = vocabulary.emplace(word, static_cast<int>(vocabulary.size()) + 1);
    ids.push_back(it->second);
  }
  return ids;
}

void read_ratings(const std::string& path, const std::string& separator, Tables& t) {
  TextLines lines(path);
  std::string line;
  while (lines.next(line)) {
    const auto f = fields_of(lines, line, separator, 4);
    Rating r;
    r.user = static_cast<int>(lines.integer(f[0], 1, kMaxId));
    r.movie = static_cast<int>(lines.integer(f[1], 1, kMaxId));
    r.rating = static_cast<float>(lines.integer(f[2], 1, 5));
    lines.integer(f[3], 0, std::numeric_limits<long>::max());
    if (static_cast<size_t>(r.user) >= t.users.size() || !t.users[r.user].known)
      lines.fail(fmt::format("user {} is not in the users file", r.user));
    if (static_cast<size_t>(r.movie) >= t.movies.size() || !t.movies[r.movie].known)
      lines.fail(fmt::format("movie {} is not in the movies file", r.movie));
    t.ratings.push_back(r);
  }
  if (t.ratings.empty()) throw common::DataError(fmt::format("{}: no ratings", path));
}

void read_100k_users(const std::string& dir, Tables& t) {
  std::map<std::string, int> occupations;
  TextLines names(dir + "/u.occupation");
  std::string line;
  while (names.next(line)) occupations.emplace(line, static_cast<int>(occupations.size()));
  t.occupations = static_cast<int64_t>(occupations.size());
  TextLines lines(dir + "/u.user");
  while (lines.next(line)) {
    const auto f = fields_of(lines, line, "|", 5);
    User& u = slot(t.users, lines.integer(f[0], 1, kMaxId));
    u.age_bucket = age_bucket_of_years(lines.integer(f[1], 0, 200));
    u.gender = gender_of(lines, f[2]);
    const auto it = occupations.find(f[3]);
    if (it == occupations.end()) lines.fail(fmt::format("occupation '{}' is not in u.occupation", f[3]));
    u.occupation = it->second;
    u.known = true;
  }
}

void read_100k_movies(const std::string& dir, Tables& t) {
  constexpr int kGenres = 19;
  t.genres = kGenres;
  TextLines lines(dir + "/u.item");
  std::string line;
  while (lines.next(line)) {
    const auto f = fields_of(lines, line, "|", 5 + kGenres);
    Movie& m = slot(t.movies, lines.integer(f[0], 1, kMaxId));
    for (int g = 0; g < kGenres; ++g)
      if (lines.integer(f[5 + g], 0, 1) == 1) m.genres.push_back(g + 1);
    m.words = word_ids(f[1], t.words);
    m.known = true;
  }
}

void read_1m_users(const std::string& dir, Tables& t) {
  TextLines lines(dir + "/users.dat");
  std::string line;
  t.occupations = 21;
  while (lines.next(line)) {
    const auto f = fields_of(lines, line, "::", 5);
    User& u = slot(t.users, lines.integer(f[0], 1, kMaxId));
    u.gender = gender_of(lines, f[1]);
    const long age = lines.integer(f[2], 1, 56);
    const auto bucket = std::find(kMovieLensAges.begin(), kMovieLensAges.end(), age);
    if (bucket == kMovieLensAges.end()) lines.fail(fmt::format("age {} is not one of 1, 18, 25, 35, 45, 50, 56", age));
    u.age_bucket = static_cast<int>(bucket - kMovieLensAges.begin());
    u.occupation = static_cast<int>(lines.integer(f[3], 0, t.occupations - 1));
    u.known = true;
  }
}

void read_1m_movies(const std::string& dir, Tables& t) {
  t.genres = static_cast<int64_t>(kMovieLens1MGenres.size());
  TextLines lines(dir + "/movies.dat");
  std::string line;
  while (lines.next(line)) {
    const auto f = fields_of(lines, line, "::", 3);
    Movie& m = slot(t.movies, lines.integer(f[0], 1, kMaxId));
    size_t start = 0;
    while (start <= f[2].size()) {
      const size_t bar = std::min(f[2].find('|', start), f[2].size());
      const std::string name = f[2].substr(start, bar - start);
      const auto it = std::find(kMovieLens1MGenres.begin(), kMovieLens1MGenres.end(), name);
      if (it == kMovieLens1MGenres.end()) lines.fail(fmt::format("genre '{}' is not a MovieLens 1M genre", name));
      m.genres.push_back(static_cast<int>(it - kMovieLens1MGenres.begin()) + 1);
      start = bar + 1;
    }
    m.words = word_ids(f[1], t.words);
    m.known = true;
  }
}

MovieLensVocabulary vocabulary_of(const Tables& t) {
  MovieLensVocabulary v;
  v.users = static_cast<int64_t>(t.users.size());
  v.occupations = t.occupations;
  v.movies = static_cast<int64_t>(t.movies.size());
  v.genres = t.genres + 1;
  v.words = static_cast<int64_t>(t.words.size()) + 1;
  for (const Movie& m : t.movies) {
    v.genre_slots = std::max(v.genre_slots, static_cast<int64_t>(m.genres.size()));
    v.title_slots = std::max(v.title_slots, static_cast<int64_t>(m.words.size()));
  }
  v.genre_slots = std::max<int64_t>(v.genre_slots, 1);
  v.title_slots = std::max<int64_t>(v.title_slots, 1);
  return v;
}

void append_sample(const Tables& t, const MovieLensVocabulary& v, const Rating& r, Dataset& d) {
  const User& u = t.users[r.user];
  const Movie& m = t.movies[r.movie];
  const size_t start = d.features.size();
  d.features.resize(start + static_cast<size_t>(v.features()), 0.0f);
  float* out = d.features.data() + start;
  out[0] = static_cast<float>(r.user);
  out[1] = static_cast<float>(u.gender);
  out[2] = static_cast<float>(u.age_bucket);
  out[3] = static_cast<float>(u.occupation);
  out[4] = static_cast<float>(r.movie);
  std::copy(m.genres.begin(), m.genres.end(), out + 5);
  std::copy(m.words.begin(), m.words.end(), out + 5 + v.genre_slots);
  d.targets.push_back(r.rating);
}

}  // namespace

std::vector<std::string> movielens_title_words(const std::string& title) {
  std::string text = title;
  const size_t open = text.rfind('(');
  if (open != std::string::npos && text.size() - open == 6 && text.back() == ')' &&
      std::all_of(text.begin() + static_cast<long>(open) + 1, text.end() - 1, [](char c) { return c >= '0' && c <= '9'; }))
    text.erase(open);
  std::vector<std::string> words;
  std::string word;
  for (char c : text + " ") {
    const auto byte = static_cast<unsigned char>(c);
    const bool ascii_alnum = (byte >= '0' && byte <= '9') || (byte >= 'a' && byte <= 'z') || (byte >= 'A' && byte <= 'Z');
    const bool latin1_letter = byte >= 0xC0 && byte != 0xD7 && byte != 0xF7;
    if (ascii_alnum || latin1_letter) {
      const bool upper = (byte >= 'A' && byte <= 'Z') || (byte >= 0xC0 && byte <= 0xDE);
      word.push_back(static_cast<char>(upper ? byte + 0x20 : byte));
    } else if (!word.empty()) {
      words.push_back(word);
      word.clear();
    }
  }
  return words;
}

namespace {

// DATA_DIR's users and movies, and its ratings when `with_ratings` (they do not change the
// vocabulary: a rating of a user or movie not in those files is an error).
Tables read_tables(const std::string& data_dir, bool with_ratings) {
  Tables t;
  namespace fs = std::filesystem;
  if (fs::exists(data_dir + "/u.data")) {
    read_100k_users(data_dir, t);
    read_100k_movies(data_dir, t);
    if (with_ratings) read_ratings(data_dir + "/u.data", "\t", t);
  } else if (fs::exists(data_dir + "/ratings.dat")) {
    read_1m_users(data_dir, t);
    read_1m_movies(data_dir, t);
    if (with_ratings) read_ratings(data_dir + "/ratings.dat", "::", t);
  } else {
    throw common::DataError(fmt::format("{}: has neither u.data (MovieLens 100K) nor ratings.dat (MovieLens 1M)",
                                        data_dir));
  }
  return t;
}

}  // namespace

MovieLensVocabulary movielens_vocabulary(const std::string& data_dir) {
  return vocabulary_of(read_tables(data_dir, /*with_ratings=*/false));
}

MovieLensData load_movielens(const std::string& data_dir, uint32_t seed) {
  const Tables t = read_tables(data_dir, /*with_ratings=*/true);
  MovieLensData out;
  out.vocabulary = vocabulary_of(t);
  std::vector<size_t> order(t.ratings.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::mt19937 rng(seed);
  std::shuffle(order.begin(), order.end(), rng);
  const size_t train_count = order.size() - order.size() / 10;
  for (Dataset* d : {&out.split.train, &out.split.test}) d->sample_shape = {out.vocabulary.features()};
  for (size_t i = 0; i < order.size(); ++i)
    append_sample(t, out.vocabulary, t.ratings[order[i]], i < train_count ? out.split.train : out.split.test);
  return out;
}

}  // namespace paddle::runtime
