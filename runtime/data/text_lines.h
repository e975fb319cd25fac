#pragma once
// TextLines: a text data file read line by line, for every reader in data/, with the one error
// format they share: "FILE:LINE: what is wrong". Lines come without their end (LF or CRLF), and
// empty lines are skipped; what a blank line means beyond that is the format's business.

#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace paddle::runtime {

class TextLines {
 public:
  // Throws common::DataError "PATH: cannot open (is the data_dir right?)".
  explicit TextLines(std::string path);

  // The next non-empty line; false at the end of the file.
  bool next(std::string& line);

  const std::string& path() const { return path_; }
  int line_number() const { return number_; }
  // Throws common::DataError "PATH:LINE: what".
  [[noreturn]] void fail(std::string_view what) const;
  // The whole of `text` as an integer in lo..hi, or fail() saying why.
  int64_t integer(std::string_view text, int64_t lo, int64_t hi) const;

 private:
  std::string path_;
  std::ifstream in_;
  int number_ = 0;
};

// `line` cut at every `separator` (empty fields kept: "a||b" has three).
std::vector<std::string> split_fields(const std::string& line, std::string_view separator);

}  // namespace paddle::runtime
