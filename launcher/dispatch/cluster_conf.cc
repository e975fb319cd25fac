#include "launcher/dispatch/cluster_conf.h"

#include <fmt/format.h>

#include <cctype>
#include <fstream>
#include <sstream>
#include <variant>

#include "common/error.h"
#include "common/parse.h"

namespace paddle::launcher {
namespace {

using Value = std::variant<std::string, long long, std::vector<std::string>>;

// A cursor over the whole file that knows its line, for the errors.
class Reader {
 public:
  Reader(std::string text, std::string path) : text_(std::move(text)), path_(std::move(path)) {}

  bool done() { return skip_blank(true), pos_ >= text_.size(); }
  int line() const { return line_; }
  std::string where() const { return fmt::format("{}:{}", path_, line_); }

  [[noreturn]] void fail(const std::string& what) const {
    throw common::UsageError(fmt::format("{}: {} (only NAME = \"text\", NAME = 123 and NAME = [\"a\", ...] are read)",
                                         where(), what));
  }

  // Spaces, tabs and comments; newlines too when `newlines` (inside brackets, between statements).
  void skip_blank(bool newlines) {
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
      } else if (c == ' ' || c == '\t' || c == '\r' || (newlines && c == '\n')) {
        if (c == '\n') ++line_;
        ++pos_;
      } else {
        return;
      }
    }
  }

  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool starts(const std::string& s) const { return text_.compare(pos_, s.size(), s) == 0; }

  std::string name() {
    const size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) ++pos_;
    if (start == pos_ || std::isdigit(static_cast<unsigned char>(text_[start]))) fail("expected a NAME = value assignment");
    return text_.substr(start, pos_ - start);
  }

  void expect(char c, const std::string& what) {
    skip_blank(false);
    if (peek() != c) fail(fmt::format("expected {}", what));
    ++pos_;
  }

  std::string string_literal() {
    const bool triple = starts("'''") || starts("\"\"\"");
    const std::string quote = triple ? text_.substr(pos_, 3) : std::string(1, peek());
    pos_ += quote.size();
    std::string out;
    while (true) {
      if (pos_ >= text_.size()) fail("a string is not closed");
      if (starts(quote)) {
        pos_ += quote.size();
        return out;
      }
      char c = text_[pos_++];
      if (c == '\n') {
        if (!triple) fail("a string is not closed on its line");
        ++line_;
      }
      if (c == '\\') {
        if (pos_ >= text_.size()) fail("a string is not closed");
        c = text_[pos_++];
      }
      out += c;
    }
  }

  Value value() {
    skip_blank(false);
    const char c = peek();
    if (c == '"' || c == '\'') return string_literal();
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '-') {
      const size_t start = pos_++;
      while (std::isdigit(static_cast<unsigned char>(peek()))) ++pos_;
      return common::parse_int<common::UsageError>(text_.substr(start, pos_ - start), where());
    }
    if (c == '[') {
      ++pos_;
      std::vector<std::string> items;
      while (true) {
        skip_blank(true);
        if (peek() == ']') break;
        if (peek() != '"' && peek() != '\'') fail("a list holds only strings");
        items.push_back(string_literal());
        skip_blank(true);
        if (peek() == ',') ++pos_;
        else if (peek() != ']') fail("expected ',' or ']' in a list");
      }
      ++pos_;
      return items;
    }
    fail("a value must be a string, a whole number or a list of strings");
  }

  void end_of_statement() {
    skip_blank(false);
    if (pos_ < text_.size() && peek() != '\n') fail("unexpected text after the value");
  }

 private:
  std::string text_, path_;
  size_t pos_ = 0;
  int line_ = 1;
};

std::string as_string(const Value& v, const std::string& key, const std::string& where) {
  if (auto s = std::get_if<std::string>(&v)) return *s;
  throw common::UsageError(fmt::format("{}: {} must be a string", where, key));
}

int as_int(const Value& v, const std::string& key, const std::string& where) {
  if (auto i = std::get_if<long long>(&v)) return static_cast<int>(*i);
  // Old files wrote some numbers as strings.
  if (auto s = std::get_if<std::string>(&v)) return static_cast<int>(common::parse_int<common::UsageError>(*s, where + ": " + key));
  throw common::UsageError(fmt::format("{}: {} must be a whole number", where, key));
}

}  // namespace

ClusterConf read_cluster_conf(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw common::UsageError(fmt::format("--cluster_conf: cannot read {}", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  Reader r(buffer.str(), path);
  ClusterConf conf;
  bool have_hosts = false;
  while (!r.done()) {
    if (r.peek() == '"' || r.peek() == '\'') {  // a docstring: a string statement with no effect
      r.string_literal();
      r.end_of_statement();
      continue;
    }
    const std::string key = r.name();
    const std::string where = r.where();
    r.expect('=', "'=' after " + key);
    const Value v = r.value();
    r.end_of_statement();
    if (key == "HOSTS") {
      const auto* list = std::get_if<std::vector<std::string>>(&v);
      if (!list) throw common::UsageError(fmt::format("{}: HOSTS must be a list of \"user@host\" strings", where));
      conf.hosts.clear();
      for (const auto& item : *list) conf.hosts.push_back(parse_remote_host(item, where + ": HOSTS"));
      have_hosts = true;
    } else if (key == "ROOT_DIR") {
      conf.root_dir = as_string(v, key, where);
    } else if (key == "PADDLE_NIC") {
      conf.nic = as_string(v, key, where);
    } else if (key == "PADDLE_PORT") {
      conf.port = common::parse_port<common::UsageError>(std::to_string(as_int(v, key, where)), where + ": PADDLE_PORT");
    } else if (key == "PADDLE_PORTS_NUM") {
      conf.ports_num = as_int(v, key, where);
    } else if (key == "PADDLE_PORTS_NUM_FOR_SPARSE") {
      conf.ports_num_for_sparse = as_int(v, key, where);
    } else if (key == "LD_LIBRARY_PATH") {
      conf.ld_library_path = as_string(v, key, where);
    } else {
      conf.ignored.push_back(fmt::format("{} ({})", key, where));
    }
  }
  if (!have_hosts || conf.hosts.empty()) throw common::UsageError(fmt::format("--cluster_conf: {} sets no HOSTS", path));
  return conf;
}

}  // namespace paddle::launcher
