#include <doctest/doctest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <numeric>

#include "runtime/data/movielens.h"

using namespace paddle::runtime;
namespace fs = std::filesystem;

namespace {

// The features of the sample rating `movie` by `user`, from either half of the split.
std::vector<float> sample_of(const MovieLensData& d, float user, float movie, float* rating = nullptr) {
  const size_t width = static_cast<size_t>(d.vocabulary.features());
  for (const Dataset* set : {&d.split.train, &d.split.test})
    for (size_t i = 0; i < set->size(); ++i) {
      const float* row = set->features.data() + i * width;
      if (row[0] == user && row[4] == movie) {
        if (rating != nullptr) *rating = set->targets[i];
        return {row, row + width};
      }
    }
  return {};
}

fs::path scratch_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void write(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

// A tiny MovieLens 1M directory: 2 users, 3 movies, 20 ratings.
fs::path tiny_1m() {
  const fs::path dir = scratch_dir("ml-1m");
  write(dir / "users.dat", "1::F::1::10::48067\n2::M::56::16::70072\n");
  write(dir / "movies.dat",
        "1::Toy Story (1995)::Animation|Children's|Comedy\n2::Jumanji (1995)::Adventure|Children's|Fantasy\n"
        "5::Father of the Bride Part II (1995)::Comedy\n");
  std::string ratings;
  const int movies[] = {1, 2, 5};
  for (int i = 0; i < 20; ++i)
    ratings += std::to_string(i % 2 + 1) + "::" + std::to_string(movies[i % 3]) + "::" + std::to_string(i % 5 + 1) +
               "::97830" + std::to_string(i % 10) + "\n";
  write(dir / "ratings.dat", ratings);
  return dir;
}

// A tiny MovieLens 100K directory: 1 user, 1 movie, 2 ratings.
fs::path tiny_100k() {
  const fs::path dir = scratch_dir("ml-100k");
  write(dir / "u.occupation", "artist\nwriter\n");
  write(dir / "u.user", "1|17|F|writer|05201\n");
  write(dir / "u.item", "1|Toy Story (1995)|01-Jan-1995||http://x|0|0|0|1|1|1|0|0|0|0|0|0|0|0|0|0|0|0|0\n");
  write(dir / "u.data", "1\t1\t5\t881250949\n1\t1\t4\t881250950\n");
  return dir;
}

}  // namespace

TEST_CASE("MovieLens 100K: counts, vocabulary and one sample's features") {
  const std::string dir = std::string(PADDLE_SHARED_DATA) + "/ml-100k";
  REQUIRE_MESSAGE(fs::exists(dir + "/u.data"), "no " << dir << ": the shared data sets belong beside the checkout");
  const MovieLensData d = load_movielens(dir, 1);
  CHECK(d.split.train.size() == 90000);
  CHECK(d.split.test.size() == 10000);
  const auto& v = d.vocabulary;
  CHECK(v.users == 944);
  CHECK(v.movies == 1683);
  CHECK(v.genres == 20);
  CHECK(v.occupations == 21);
  CHECK(v.ages == 7);
  CHECK(v.genre_slots == 6);
  CHECK(v.title_slots >= 5);
  CHECK(v.words > 2000);
  CHECK(d.split.train.sample_shape == std::vector<int64_t>{v.features()});
  CHECK(d.split.train.labels.empty());
  const double sum = std::accumulate(d.split.train.targets.begin(), d.split.train.targets.end(), 0.0) +
                     std::accumulate(d.split.test.targets.begin(), d.split.test.targets.end(), 0.0);
  CHECK(sum == 352986.0);  // 1 x 6110 + 2 x 11370 + 3 x 27145 + 4 x 34174 + 5 x 21201

  float rating = 0;
  const auto kolya = sample_of(d, 196, 242, &rating);  // u.data line 1; user 196 is a 49-year-old male writer
  REQUIRE(kolya.size() == static_cast<size_t>(v.features()));
  CHECK(rating == 3.0f);
  CHECK(kolya[1] == 0.0f);   // M
  CHECK(kolya[2] == 4.0f);   // 49 -> bucket 45
  CHECK(kolya[3] == 20.0f);  // writer, the last of u.occupation
  CHECK(kolya[5] == 6.0f);   // Comedy (u.genre 5) + 1
  CHECK(kolya[6] == 0.0f);
  CHECK(kolya[5 + v.genre_slots] > 0.0f);  // "kolya"
  CHECK(kolya[6 + v.genre_slots] == 0.0f);
  const auto toy_story = sample_of(d, 1, 1);  // user 1 rated movie 1
  REQUIRE(toy_story.size() == static_cast<size_t>(v.features()));
  CHECK(std::vector<float>(toy_story.begin() + 5, toy_story.begin() + 9) == std::vector<float>{4, 5, 6, 0});
  CHECK(toy_story[5 + v.genre_slots] == 1.0f);  // "toy", the first word of u.item
  CHECK(toy_story[6 + v.genre_slots] == 2.0f);  // "story"
}

TEST_CASE("MovieLens split: 90/10, deterministic for a seed, different for another") {
  const std::string dir = std::string(PADDLE_SHARED_DATA) + "/ml-100k";
  REQUIRE_MESSAGE(fs::exists(dir + "/u.data"), "no " << dir << ": the shared data sets belong beside the checkout");
  const MovieLensData a = load_movielens(dir, 7), b = load_movielens(dir, 7), c = load_movielens(dir, 8);
  CHECK(a.split.train.features == b.split.train.features);
  CHECK(a.split.test.targets == b.split.test.targets);
  CHECK(a.split.train.features != c.split.train.features);
  CHECK(a.split.test.size() == c.split.test.size());
}

TEST_CASE("title words: lower-cased, split on non-alphanumerics, the year dropped") {
  CHECK(movielens_title_words("Toy Story (1995)") == std::vector<std::string>{"toy", "story"});
  CHECK(movielens_title_words("Se7en (1995)") == std::vector<std::string>{"se7en"});
  CHECK(movielens_title_words("Shanghai Triad (Yao a yao) (1995)") ==
        std::vector<std::string>{"shanghai", "triad", "yao", "a", "yao"});
  CHECK(movielens_title_words("Mis\xC9rables, Les (1995)") == std::vector<std::string>{"mis\xE9rables", "les"});
  CHECK(movielens_title_words("unknown") == std::vector<std::string>{"unknown"});
  CHECK(movielens_title_words("1900 (Novecento) (1976)") == std::vector<std::string>{"1900", "novecento"});
}

TEST_CASE("MovieLens 1M from a tiny file set") {
  const fs::path dir = tiny_1m();
  const MovieLensData d = load_movielens(dir.string(), 3);
  CHECK(d.split.train.size() == 18);
  CHECK(d.split.test.size() == 2);
  const auto& v = d.vocabulary;
  CHECK(v.users == 3);
  CHECK(v.movies == 6);
  CHECK(v.genres == 19);
  CHECK(v.occupations == 21);
  CHECK(v.words == 10);  // toy story jumanji father of the bride part ii, + padding
  CHECK(v.genre_slots == 3);
  CHECK(v.title_slots == 6);
  const auto s = sample_of(d, 1, 1);
  REQUIRE(s.size() == 14);
  CHECK(s == std::vector<float>{1, 1, 0, 10, 1, 3, 4, 5, 1, 2, 0, 0, 0, 0});
  const auto father = sample_of(d, 2, 5);
  REQUIRE(father.size() == 14);
  CHECK(father == std::vector<float>{2, 0, 6, 16, 5, 5, 0, 0, 4, 5, 6, 7, 8, 9});
  fs::remove_all(dir);
}

TEST_CASE("a 100K user's age maps to the 1M bucket below it") {
  const fs::path dir = tiny_100k();
  const MovieLensData d = load_movielens(dir.string(), 1);
  CHECK(d.split.train.size() + d.split.test.size() == 2);
  const auto s = sample_of(d, 1, 1);
  REQUIRE(s.size() == static_cast<size_t>(d.vocabulary.features()));
  CHECK(s[1] == 1.0f);  // F
  CHECK(s[2] == 0.0f);  // 17 -> bucket 1
  CHECK(s[3] == 1.0f);  // writer
  fs::remove_all(dir);
}

TEST_CASE("malformed MovieLens files are named with file:line") {
  using paddle::common::DataError;
  fs::path dir = tiny_100k();
  write(dir / "u.data", "1\t1\t5\t881250949\n1\tx\t4\t881250950\n");
  CHECK_THROWS_WITH_AS(load_movielens(dir.string(), 1), doctest::Contains("u.data:2: 'x' is not a number"), DataError);
  write(dir / "u.data", "1\t1\t5\t881250949\n\n1\t2\t4\t881250950\n");
  CHECK_THROWS_WITH_AS(load_movielens(dir.string(), 1), doctest::Contains("u.data:3: movie 2 is not in the movies file"),
                       DataError);
  write(dir / "u.data", "1\t1\t9\t881250949\n");
  CHECK_THROWS_WITH_AS(load_movielens(dir.string(), 1), doctest::Contains("u.data:1: 9 is outside 1..5"), DataError);
  write(dir / "u.data", "1\t1\t5\n");
  CHECK_THROWS_WITH_AS(load_movielens(dir.string(), 1), doctest::Contains("u.data:1: 3 fields, expected 4"), DataError);
  write(dir / "u.user", "1|17|X|writer|05201\n");
  CHECK_THROWS_WITH_AS(load_movielens(dir.string(), 1), doctest::Contains("u.user:1: gender 'X' is not M or F"), DataError);
  write(dir / "u.user", "1|17|F|pilot|05201\n");
  CHECK_THROWS_WITH_AS(load_movielens(dir.string(), 1), doctest::Contains("u.user:1: occupation 'pilot' is not in u.occupation"),
                       DataError);
  write(dir / "u.user", "1|17|F|writer|05201\n");
  fs::remove(dir / "u.item");
  CHECK_THROWS_WITH_AS(load_movielens(dir.string(), 1), doctest::Contains("u.item: cannot open"), DataError);
  fs::remove_all(dir);

  dir = tiny_1m();
  write(dir / "users.dat", "1::F::1::10::48067\n2::M::30::16::70072\n");
  CHECK_THROWS_WITH_AS(load_movielens(dir.string(), 1), doctest::Contains("users.dat:2: age 30 is not one of"), DataError);
  fs::remove_all(dir);
  dir = tiny_1m();
  write(dir / "movies.dat", "1::Toy Story (1995)::Animation|Cartoon\n");
  CHECK_THROWS_WITH_AS(load_movielens(dir.string(), 1),
                       doctest::Contains("movies.dat:1: genre 'Cartoon' is not a MovieLens 1M genre"), DataError);
  fs::remove_all(dir);
  CHECK_THROWS_WITH_AS(load_movielens(dir.string(), 1), doctest::Contains("has neither u.data"), DataError);
}
