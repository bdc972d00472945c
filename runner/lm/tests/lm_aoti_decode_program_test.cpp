// The check that lets an AOTInductor package's static T = 1 decode program stand in for its model
// program (docs/OWN_MODEL_AOTI.md, "The decode program"): the same step through both must give
// the same logits, up to what two compilations of the same math make in that dtype.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "common/errors.h"
#include "runner/lm/aoti_model.h"
#include "runner/lm/artifact.h"

namespace pg::lm {
namespace {

at::Tensor logits(at::ScalarType dtype) {
  return at::linspace(-8, 8, 2 * 32, at::kFloat).reshape({2, 1, 32}).to(dtype);
}

TEST(AotiDecodeProgram, AgreesWithinRoundingOfItsDtype) {
  const at::Tensor a = logits(at::kFloat);
  EXPECT_EQ(decode_program_disagreement(a, a.clone()), std::nullopt);
  EXPECT_EQ(decode_program_disagreement(a, a + 1e-4), std::nullopt);  // 8 * 1e-3 allowed
  const at::Tensor h = logits(at::kBFloat16);
  EXPECT_EQ(decode_program_disagreement(h, (h.to(at::kFloat) + 0.2).to(at::kBFloat16)),
            std::nullopt);  // 8 * 5e-2 allowed: bf16 keeps 8 bits of mantissa
}

// What a decode program on a cache the prefill never filled looks like: other logits of the
// same size. It must be caught, and the reason must say what it means.
TEST(AotiDecodeProgram, OtherLogitsAreADisagreementThatSaysWhy) {
  const at::Tensor a = logits(at::kFloat);
  auto why = decode_program_disagreement(a, a.flip(-1));
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("does not run on the model program's weights and KV cache"),
            std::string::npos)
      << *why;
  EXPECT_TRUE(decode_program_disagreement(a, a + 0.1).has_value()) << "0.1 > 8 * 1e-3 in fp32";
  const at::Tensor h = logits(at::kBFloat16);
  EXPECT_TRUE(decode_program_disagreement(h, (h.to(at::kFloat) + 1).to(at::kBFloat16)));
}

TEST(AotiDecodeProgram, NonFiniteOrMisshapenLogitsDisagree) {
  const at::Tensor a = logits(at::kFloat);
  at::Tensor nan = a.clone();
  nan[0][0][3] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(decode_program_disagreement(a, nan).has_value());
  auto why = decode_program_disagreement(a, a.reshape({1, 2, 32}));
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("shape"), std::string::npos) << *why;
}

TEST(AotiDecodeProgram, TheSidecarNamesItOrLeavesItOut) {
  const std::string path = ::testing::TempDir() + "/decode_program_sidecar.json";
  auto facts_of = [&](const std::string& text) {
    std::ofstream(path) << text;
    return read_model_facts(path);
  };
  EXPECT_EQ(facts_of(R"({"decode_program": "decode"})").decode_program, "decode");
  EXPECT_EQ(facts_of(R"({"name": "m"})").decode_program, std::nullopt);
  try {
    facts_of(R"({"decode_program": ""})");
    ADD_FAILURE() << "an empty program name was accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("'decode_program' is empty"), std::string::npos)
        << e.what();
  }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace pg::lm
