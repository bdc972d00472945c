// The rule of user-given model names (--exec models and AOTI sidecar names).
#include "core/model_name.h"

#include <gtest/gtest.h>

#include <string>

namespace pg {
namespace {

TEST(ModelName, LettersDigitsDotsUnderscoresAndDashesUpTo64) {
  for (const std::string& ok :
       {std::string("m"), std::string("my-llama_1b.v2"), std::string("7b"), std::string(64, 'x')})
    EXPECT_TRUE(is_model_name(ok)) << ok;
  for (const std::string& bad :
       {std::string(), std::string(65, 'x'), std::string("-m"), std::string(".m"),
        std::string("_m"), std::string("a/b"), std::string("my model"), std::string("m\n"),
        std::string("m\x1b[31m"), std::string("caf\xC3\xA9"), std::string("a:b"),
        std::string("m\0x", 3)})
    EXPECT_FALSE(is_model_name(bad)) << bad;
}

}  // namespace
}  // namespace pg
