#include "runtime/data/text_lines.h"

#include <fmt/format.h>

#include "common/error.h"
#include "common/parse.h"

namespace paddle::runtime {

TextLines::TextLines(std::string path) : path_(std::move(path)), in_(path_, std::ios::binary) {
  if (!in_) throw common::DataError(fmt::format("{}: cannot open (is the data_dir right?)", path_));
}

bool TextLines::next(std::string& line) {
  while (std::getline(in_, line)) {
    ++number_;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.empty()) return true;
  }
  return false;
}

void TextLines::fail(std::string_view what) const {
  throw common::DataError(fmt::format("{}:{}: {}", path_, number_, what));
}

int64_t TextLines::integer(std::string_view text, int64_t lo, int64_t hi) const {
  const auto value = common::to_int(text);
  if (!value) fail(fmt::format("'{}' is not a number", text));
  if (*value < lo || *value > hi) fail(fmt::format("{} is outside {}..{}", *value, lo, hi));
  return *value;
}

std::vector<std::string> split_fields(const std::string& line, std::string_view separator) {
  std::vector<std::string> fields;
  size_t start = 0;
  for (size_t at; (at = line.find(separator, start)) != std::string::npos; start = at + separator.size())
    fields.push_back(line.substr(start, at - start));
  fields.push_back(line.substr(start));
  return fields;
}

}  // namespace paddle::runtime
