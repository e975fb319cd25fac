#include "common/enum_names.h"

#include <doctest/doctest.h>

namespace paddle::common {
namespace {

enum class Fruit { kApple, kPear, kFig };
constexpr EnumNames<Fruit, 2> kFruitNames{{{{Fruit::kApple, "apple"}, {Fruit::kPear, "pear"}}}};

}  // namespace

TEST_CASE("EnumNames parses, names and lists each value once") {
  static_assert(kFruitNames.find("pear") == Fruit::kPear);
  CHECK(kFruitNames.parse("apple", "fruit") == Fruit::kApple);
  CHECK(kFruitNames.name(Fruit::kPear) == "pear");
  CHECK(kFruitNames.choices() == std::vector<std::string>{"apple", "pear"});
  CHECK_FALSE(kFruitNames.find("Apple"));  // names are exact
  CHECK_THROWS_WITH_AS(kFruitNames.parse("plum", "--fruit"), "--fruit 'plum' is not one of apple, pear", ConfigError);
  CHECK_THROWS_AS(kFruitNames.name(Fruit::kFig), std::logic_error);  // a value the table leaves out
}

}  // namespace paddle::common
