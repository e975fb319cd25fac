#include "runtime/models/recommender.h"

#include <fmt/format.h>

#include <stdexcept>

#include "common/error.h"
#include "runtime/nn/tanh.h"

namespace paddle::runtime {
namespace {

constexpr int kUserFields = 4;  // user id, gender, age bucket, occupation: columns 0..3
constexpr int64_t kMovieColumn = 4;
constexpr int64_t kGenreColumn = 5;

// Columns [start, start+count) of a host [N,F] tensor.
Tensor columns(const Tensor& x, int64_t start, int64_t count) {
  const int64_t n = x.dim(0), width = x.dim(1);
  Tensor out({n, count});
  for (int64_t i = 0; i < n; ++i) std::copy_n(x.ptr() + i * width + start, count, out.ptr() + i * count);
  return out;
}

Tensor concat_columns(const std::vector<Tensor>& parts) {
  const int64_t n = parts.at(0).dim(0);
  int64_t width = 0;
  for (const Tensor& p : parts) width += p.dim(1);
  Tensor out({n, width});
  int64_t offset = 0;
  for (const Tensor& p : parts) {
    const int64_t w = p.dim(1);
    for (int64_t i = 0; i < n; ++i) std::copy_n(p.ptr() + i * w, w, out.ptr() + i * width + offset);
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
  if (execution.device().is_cuda())
    throw common::ConfigError("BagOfEmbeddings has no CUDA kernel yet; use device=cpu");
  table_.place(execution);
  execution_ = &execution;
}

Tensor BagOfEmbeddings::forward(const Tensor& ids, bool training) {
  const int64_t n = ids.dim(0);
  slots_ = ids.dim(1);
  weights_.assign(static_cast<size_t>(n * slots_), 0.0f);
  for (int64_t i = 0; i < n; ++i) {
    int count = 0;
    for (int64_t s = 0; s < slots_; ++s) count += ids.ptr()[i * slots_ + s] != 0.0f;
    for (int64_t s = 0; s < slots_; ++s)
      if (ids.ptr()[i * slots_ + s] != 0.0f) weights_[static_cast<size_t>(i * slots_ + s)] = 1.0f / static_cast<float>(count);
  }
  const Tensor embedded = table_.forward(ids, training);  // [N, S*dim]
  Tensor out({n, dim_});
  for (int64_t i = 0; i < n; ++i)
    for (int64_t s = 0; s < slots_; ++s) {
      const float w = weights_[static_cast<size_t>(i * slots_ + s)];
      if (w == 0.0f) continue;
      const float* e = embedded.ptr() + (i * slots_ + s) * dim_;
      for (int64_t d = 0; d < dim_; ++d) out.ptr()[i * dim_ + d] += w * e[d];
    }
  return out;
}

Tensor BagOfEmbeddings::backward(const Tensor& dy) {
  const int64_t n = dy.dim(0);
  Tensor grad({n, slots_ * dim_});
  for (int64_t i = 0; i < n; ++i)
    for (int64_t s = 0; s < slots_; ++s) {
      const float w = weights_[static_cast<size_t>(i * slots_ + s)];
      for (int64_t d = 0; d < dim_; ++d) grad.ptr()[(i * slots_ + s) * dim_ + d] = w * dy.ptr()[i * dim_ + d];
    }
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
  for (int f = 0; f < kUserFields; ++f) user.push_back(user_fields_[f].forward(columns(x, f, 1), training));
  const int64_t g = config_.vocabulary.genre_slots, t = config_.vocabulary.title_slots;
  std::vector<Tensor> movie{movie_id_.forward(columns(x, kMovieColumn, 1), training),
                            genres_.forward(columns(x, kGenreColumn, g), training),
                            titles_.forward(columns(x, kGenreColumn + g, t), training)};
  return cosine_.forward(user_head_.forward(concat_columns(user), training),
                         movie_head_.forward(concat_columns(movie), training));
}

Tensor Recommender::backward(const Tensor& dy) {
  auto [d_user, d_movie] = cosine_.backward(dy);
  const Tensor du = user_head_.backward(d_user);
  int64_t offset = 0;
  for (int f = 0; f < kUserFields; ++f) {
    const int64_t width = f == 0 ? config_.id_dim : config_.category_dim;
    user_fields_[f].backward(columns(du, offset, width));
    offset += width;
  }
  const Tensor dm = movie_head_.backward(d_movie);
  movie_id_.backward(columns(dm, 0, config_.id_dim));
  genres_.backward(columns(dm, config_.id_dim, config_.bag_dim));
  titles_.backward(columns(dm, config_.id_dim + config_.bag_dim, config_.bag_dim));
  return Tensor(input_shape_);  // ids have no gradient
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
  if (execution.device().is_cuda())
    throw common::ConfigError(fmt::format("Recommender cannot run on {}: Tanh, the bag means and the cosine have no "
                                         "CUDA kernels yet; use device=cpu", execution.device().to_string()));
  for (Sequential& field : user_fields_) field.place(execution);
  for (Layer* layer : std::initializer_list<Layer*>{&user_head_, &movie_id_, &genres_, &titles_, &movie_head_})
    layer->place(execution);
  execution_ = &execution;
}

std::string Recommender::describe() const {
  const auto& v = config_.vocabulary;
  return fmt::format("Recommender(users {}, movies {}, genres {}x{}, title words {}x{}, id_dim {}, category_dim {}, "
                     "bag_dim {}, hidden {}, {} x cosine)",
                     v.users, v.movies, v.genres, v.genre_slots, v.words, v.title_slots, config_.id_dim,
                     config_.category_dim, config_.bag_dim, config_.hidden, config_.scale);
}

}  // namespace paddle::runtime
