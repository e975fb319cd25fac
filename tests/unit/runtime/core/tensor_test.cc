#include <doctest/doctest.h>

#include <stdexcept>
#include <utility>
#include <vector>

#include "runtime/core/tensor.h"

using paddle::runtime::Tensor;

TEST_CASE("share() costs no copy, and a write to either side copies first, so both keep value semantics") {
  Tensor a = Tensor::from_values({2, 2}, {1, 2, 3, 4});
  const Tensor b = a.share();
  CHECK(std::as_const(a).ptr() == b.ptr());  // one block, nothing copied

  a.values()[0] = 10;  // a write through a non-const accessor detaches the writer
  CHECK(std::as_const(a).ptr() != b.ptr());
  CHECK(a.to_vector() == std::vector<float>{10, 2, 3, 4});
  CHECK(b.to_vector() == std::vector<float>{1, 2, 3, 4});

  Tensor c = b.share();
  c.zero();
  CHECK(b.to_vector() == std::vector<float>{1, 2, 3, 4});
  CHECK(c.to_vector() == std::vector<float>{0, 0, 0, 0});

  Tensor only = Tensor::from_values({2}, {5, 6});
  const float* before = std::as_const(only).ptr();
  CHECK(only.ptr() == before);  // a block nobody shares is written in place
  {
    const Tensor kept = only.share();
    (void)kept;
  }
  CHECK(only.ptr() == before);  // nor is it copied once the other side is gone
}

TEST_CASE("a tensor over memory it does not own is written in place, never freed, and copies leave it") {
  std::vector<float> memory{1, 2, 3, 4, 5, 6};
  {
    Tensor over = Tensor::over({2, 2}, memory.data() + 1);
    CHECK(std::as_const(over).ptr() == memory.data() + 1);
    over.zero();  // in place
    over.values()[3] = 9;
    CHECK(memory == std::vector<float>{1, 0, 0, 0, 9, 6});

    Tensor copy = over;  // owns its own elements
    CHECK(std::as_const(copy).ptr() != std::as_const(over).ptr());
    copy.values()[0] = 7;
    CHECK(memory[1] == 0);

    const Tensor kept = over.share();
    over.values()[0] = 8;  // a write after share() moves the writer to a block of its own
    CHECK(std::as_const(over).ptr() != memory.data() + 1);
    CHECK(memory[1] == 0);
    CHECK(kept.ptr() == memory.data() + 1);

    Tensor moved = Tensor::over({1}, memory.data());
    Tensor target = Tensor::from_values({1}, {0});
    target = std::move(moved);  // still over the memory, still not its owner
    target.values()[0] = 4;
    CHECK(memory[0] == 4);
  }
  CHECK(memory == std::vector<float>{4, 0, 0, 0, 9, 6});  // gone, and the memory untouched by their end
}

TEST_CASE("copying a tensor copies its elements") {
  const Tensor a = Tensor::from_values({3}, {1, 2, 3});
  Tensor b = a;
  CHECK(b.ptr() != a.ptr());
  b.values()[1] = 0;
  CHECK(a.to_vector() == std::vector<float>{1, 2, 3});
  Tensor moved = std::move(b);
  CHECK(moved.to_vector() == std::vector<float>{1, 0, 3});
  Tensor empty;
  Tensor empty_copy = empty;
  CHECK(empty_copy.numel() == 0);
  CHECK(empty.share().numel() == 0);
}
