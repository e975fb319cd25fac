#include "runtime/models/recommender.h"

#include <fmt/format.h>

#include <stdexcept>

#include "kernels/elementwise.h"
#include "kernels/embedding.h"
#include "runtime/nn/tanh.h"

namespace paddle::runtime {
namespace {

// The embedding tables' parameters, in embedding_inputs()' order: the user fields, the movie id,
// the genre and title bags.
constexpr const char* kEmbeddingTables[] = {"user_id.emb.table",    "gender.emb.table", "age.emb.table",
                                            "occupation.emb.table", "movie_id.emb.table", "genres.emb.table",
                                            "title.emb.table"};

constexpr int kUserFields = 4;  // user id, gender, age bucket, occupation: columns 0..3
constexpr int64_t kMovieColumn = 4;
constexpr int64_t kGenreColumn = 5;

// Columns [start, start+count) of an [N,F] tensor, on its device.
Tensor columns(const kernels::Context& ctx, const Tensor& x, int64_t start, int64_t count) {
  const int64_t n = x.dim(0), width = x.dim(1);
  Tensor out({n, count}, DType::kFloat32, x.device());
  kernels::copy_columns(ctx, out.ptr(), static_cast<size_t>(count), x.ptr() + start, static_cast<size_t>(width),
                        static_cast<size_t>(n), static_cast<size_t>(count));
  return out;
}

Tensor concat_columns(const kernels::Context& ctx, const std::vector<Tensor>& parts) {
  const int64_t n = parts.at(0).dim(0);
  int64_t width = 0;
  for (const Tensor& p : parts) width += p.dim(1);
  Tensor out({n, width}, DType::kFloat32, parts.at(0).device());
  int64_t offset = 0;
  for (const Tensor& p : parts) {
    const int64_t w = p.dim(1);
    kernels::copy_columns(ctx, out.ptr() + offset, static_cast<size_t>(width), p.ptr(), static_cast<size_t>(w),
                          static_cast<size_t>(n), static_cast<size_t>(w));
    offset += w;
  }
  return out;
}

Sequential embedded_field(int64_t vocabulary, int64_t dim, std::mt19937& rng, const std::string& name) {
  Sequential s;
  s.add(std::make_unique<Embedding>(vocabulary, dim, rng, name + ".emb")).add(std::make_unique<Linear>(dim, dim, rng, name + ".fc"));
  return s;
}

Sequential tower_head(int64_t in, int64_t hidden, std::mt19937& rng, const std::string& name) {
  Sequential s;
  s.add(std::make_unique<Linear>(in, hidden, rng, name)).add(std::make_unique<Tanh>());
  return s;
}

}  // namespace

void BagOfEmbeddings::place(Execution& execution) {
  table_.place(execution);
  execution_ = &execution;
}

Tensor BagOfEmbeddings::forward(const Tensor& ids, bool training) {
  const Tensor embedded = table_.forward(ids, training);  // [N, S*dim]
  const int64_t n = ids.dim(0);
  slots_ = ids.dim(1);
  weights_ = Tensor({n, slots_}, DType::kFloat32, device());
  Tensor out({n, dim_}, DType::kFloat32, device());
  kernels::bag_mean_forward(context(), table_.ids().id_ptr(), embedded.ptr(), static_cast<size_t>(n), as_int(slots_),
                            as_int(dim_), weights_.ptr(), out.ptr());
  return out;
}

Tensor BagOfEmbeddings::backward(const Tensor& dy) {
  const int64_t n = dy.dim(0);
  Tensor grad({n, slots_ * dim_}, DType::kFloat32, device());
  kernels::bag_mean_backward(context(), weights_.ptr(), dy.ptr(), static_cast<size_t>(n), as_int(slots_), as_int(dim_),
                             grad.ptr());
  return table_.backward(grad);
}

Recommender::Recommender(const RecommenderConfig& config, std::mt19937& rng)
    : config_(config),
      movie_id_(embedded_field(config.vocabulary.movies, config.id_dim, rng, "movie_id")),
      genres_(config.vocabulary.genres, config.bag_dim, rng, "genres.emb"),
      titles_(config.vocabulary.words, config.bag_dim, rng, "title.emb"),
      cosine_(config.scale) {
  const auto& v = config.vocabulary;
  user_fields_.reserve(kUserFields);
  user_fields_.push_back(embedded_field(v.users, config.id_dim, rng, "user_id"));
  user_fields_.push_back(embedded_field(v.genders, config.category_dim, rng, "gender"));
  user_fields_.push_back(embedded_field(v.ages, config.category_dim, rng, "age"));
  user_fields_.push_back(embedded_field(v.occupations, config.category_dim, rng, "occupation"));
  user_head_ = tower_head(config.id_dim + 3 * config.category_dim, config.hidden, rng, "user.fc");
  movie_head_ = tower_head(config.id_dim + 2 * config.bag_dim, config.hidden, rng, "movie.fc");
}

Tensor Recommender::forward(const Tensor& x, bool training) {
  const int64_t features = config_.vocabulary.features();
  if (x.shape.size() != 2 || x.dim(1) != features)
    throw std::invalid_argument(fmt::format("Recommender: input {} is not [N,{}]", x.shape_string(), features));
  require_device(x, "Recommender");
  input_shape_ = x.shape;
  std::vector<Tensor> user;
  const kernels::Context& ctx = context();
  for (int f = 0; f < kUserFields; ++f) user.push_back(user_fields_[f].forward(columns(ctx, x, f, 1), training));
  const int64_t g = config_.vocabulary.genre_slots, t = config_.vocabulary.title_slots;
  std::vector<Tensor> movie{movie_id_.forward(columns(ctx, x, kMovieColumn, 1), training),
                            genres_.forward(columns(ctx, x, kGenreColumn, g), training),
                            titles_.forward(columns(ctx, x, kGenreColumn + g, t), training)};
  return cosine_.forward(user_head_.forward(concat_columns(ctx, user), training),
                         movie_head_.forward(concat_columns(ctx, movie), training));
}

Tensor Recommender::backward(const Tensor& dy) {
  const kernels::Context& ctx = context();
  auto [d_user, d_movie] = cosine_.backward(dy);
  const Tensor du = user_head_.backward(d_user);
  int64_t offset = 0;
  for (int f = 0; f < kUserFields; ++f) {
    const int64_t width = f == 0 ? config_.id_dim : config_.category_dim;
    user_fields_[f].backward(columns(ctx, du, offset, width));
    offset += width;
  }
  const Tensor dm = movie_head_.backward(d_movie);
  movie_id_.backward(columns(ctx, dm, 0, config_.id_dim));
  genres_.backward(columns(ctx, dm, config_.id_dim, config_.bag_dim));
  titles_.backward(columns(ctx, dm, config_.id_dim + config_.bag_dim, config_.bag_dim));
  return Tensor(input_shape_, DType::kFloat32, device());  // ids have no gradient
}

std::vector<Parameter*> Recommender::parameters() {
  std::vector<Parameter*> all;
  auto take = [&all](Layer& layer) {
    for (Parameter* p : layer.parameters()) all.push_back(p);
  };
  for (Sequential& field : user_fields_) take(field);
  take(user_head_);
  take(movie_id_);
  take(genres_);
  take(titles_);
  take(movie_head_);
  return all;
}

void Recommender::place(Execution& execution) {
  for (Sequential& field : user_fields_) field.place(execution);
  for (Layer* layer : std::initializer_list<Layer*>{&user_head_, &movie_id_, &genres_, &titles_, &movie_head_})
    layer->place(execution);
  cosine_.place(execution);
  execution_ = &execution;
}

std::vector<EmbeddingInput> Recommender::embedding_inputs() const {
  const int64_t genre_slots = config_.vocabulary.genre_slots, title_slots = config_.vocabulary.title_slots;
  return {{kEmbeddingTables[0], 0, 1, false},
          {kEmbeddingTables[1], 1, 1, false},
          {kEmbeddingTables[2], 2, 1, false},
          {kEmbeddingTables[3], 3, 1, false},
          {kEmbeddingTables[4], kMovieColumn, 1, false},
          {kEmbeddingTables[5], kGenreColumn, genre_slots, true},
          {kEmbeddingTables[6], kGenreColumn + genre_slots, title_slots, true}};
}

ModelTableShapes Recommender::table_shapes(const RecommenderShape& shape) {
  const int64_t id = shape.id_dim, category = shape.category_dim, bag = shape.bag_dim, hidden = shape.hidden;
  const auto linear = &Linear::parameter_count;
  ModelTableShapes tables;
  // Each embedded field's Linear(dim, dim), then the user and movie heads.
  tables.dense = linear(id, id) + 3 * linear(category, category) + linear(id + 3 * category, hidden) + linear(id, id) +
                 linear(id + 2 * bag, hidden);
  const int64_t dims[] = {id, category, category, category, id, bag, bag};
  for (size_t t = 0; t < std::size(kEmbeddingTables); ++t)
    tables.sparse.push_back({kEmbeddingTables[t], static_cast<size_t>(dims[t])});
  return tables;
}

std::string Recommender::describe() const {
  const auto& v = config_.vocabulary;
  return fmt::format("Recommender(users {}, movies {}, genres {}x{}, title words {}x{}, id_dim {}, category_dim {}, "
                     "bag_dim {}, hidden {}, {} x cosine)",
                     v.users, v.movies, v.genres, v.genre_slots, v.words, v.title_slots, config_.id_dim,
                     config_.category_dim, config_.bag_dim, config_.hidden, config_.scale);
}

}  // namespace paddle::runtime
