#pragma once
// ScratchDir: the one folder a fuzz target may write to, made under $TMPDIR (or /tmp) on first use
// and removed when the process exits, so that inputs fed to readers that take paths never touch
// anything else.

#include <string>
#include <string_view>

namespace paddle::fuzz {

class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  // Replaces DIR/NAME with `bytes`; returns its path. Throws std::runtime_error when it cannot.
  std::string write(const std::string& name, std::string_view bytes) const;
  // Removes everything inside, keeping the folder.
  void clear() const;

 private:
  std::string path_;
};

}  // namespace paddle::fuzz
