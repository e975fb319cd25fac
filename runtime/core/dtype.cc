#include "runtime/core/dtype.h"

#include <fmt/format.h>

#include "common/error.h"

namespace paddle::runtime {

DType parse_float_dtype(const std::string& name, const std::string& key) {
  for (DType d : {DType::kFloat32, DType::kFloat16, DType::kBFloat16})
    if (name == dtype_name(d)) return d;
  throw common::ConfigError(fmt::format("{} '{}' is not float32, float16 or bfloat16", key, name));
}

}  // namespace paddle::runtime
