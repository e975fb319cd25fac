#pragma once
// DType in the runtime: the kernels' element types (kernels/dtype.h), and the parsing of a
// floating-point type's name from a config.

#include <string>

#include "kernels/dtype.h"

namespace paddle::runtime {

using kernels::DType;
using kernels::dtype_name;
using kernels::element_size;
using kernels::is_half;

// A floating-point DType by Paddle's name; throws common::ConfigError naming `key` and the
// names it accepts for anything else.
DType parse_float_dtype(const std::string& name, const std::string& key);

}  // namespace paddle::runtime
