#pragma once
// A recommender small enough to check by hand, and ids for it: shared by the unit test and the
// GPU-against-CPU test.

#include <vector>

#include "runtime/core/tensor.h"
#include "runtime/models/recommender.h"

namespace paddle::runtime::testing {

inline RecommenderConfig small_recommender_config() {
  RecommenderConfig c;
  c.vocabulary.users = 5;
  c.vocabulary.occupations = 3;
  c.vocabulary.movies = 6;
  c.vocabulary.genres = 4;
  c.vocabulary.words = 7;
  c.vocabulary.genre_slots = 2;
  c.vocabulary.title_slots = 3;
  c.id_dim = 4;
  c.category_dim = 3;
  c.bag_dim = 4;
  c.hidden = 5;
  return c;
}

// Rows [user, gender, age, occupation, movie, 2 genre slots, 3 title slots], with padding; row 3
// has no title.
inline Tensor recommender_ids() {
  return Tensor::from_values({4, 10}, std::vector<float>{1, 0, 2, 1, 1, 1, 2, 1, 2, 3,  //
                                                         2, 1, 0, 0, 3, 3, 0, 4, 0, 0,  //
                                                         3, 0, 6, 2, 5, 2, 3, 5, 6, 1,  //
                                                         4, 1, 4, 1, 2, 1, 0, 0, 0, 0});
}

}  // namespace paddle::runtime::testing
