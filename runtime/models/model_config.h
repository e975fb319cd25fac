#pragma once
// ModelConfig: which model `train` builds and the shape settings of each (the "cnn", "resnet",
// "recommender" and "ctr" objects of a config). What a model learns from its data set
// (classes, vocabulary sizes) comes separately, as DataFacts (models.h).

#include <array>
#include <cstdint>
#include <vector>

#include "common/enum_names.h"

namespace paddle::runtime {

enum class ModelKind { kFitALine, kCnn, kResnet, kRecommender, kWideDeep };
inline constexpr common::EnumNames<ModelKind, 5> kModelNames{{{{ModelKind::kFitALine, "fit_a_line"},
                                                              {ModelKind::kCnn, "cnn"},
                                                              {ModelKind::kResnet, "resnet"},
                                                              {ModelKind::kRecommender, "recommender"},
                                                              {ModelKind::kWideDeep, "wide_deep"}}}};

struct CnnConfig {
  std::array<int64_t, 2> channels{16, 32};
  int64_t hidden = 128;
};

struct ResnetConfig {
  int depth = 50;  // 14, 26, 50, 101 or 152
  int64_t width = 64;
};

struct RecommenderShape {
  int64_t id_dim = 32, category_dim = 16, bag_dim = 32, hidden = 200;
  float scale = 5.0f;
};

struct WideDeepShape {
  int64_t embedding_dim = 9;
  std::vector<int64_t> hidden{512, 256, 128, 32};
};

struct ModelConfig {
  ModelKind kind = ModelKind::kCnn;
  CnnConfig cnn;
  ResnetConfig resnet;
  RecommenderShape recommender;
  WideDeepShape wide_deep;
};

}  // namespace paddle::runtime
