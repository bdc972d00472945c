// An AOTI package's sidecar (PATH.json) is written by the repository being measured: its `name`
// becomes the series key, so it is held to the rule of --exec model names (core/model_name.h),
// and a refusal names the sidecar file and the field.
#include <gtest/gtest.h>

#include "common/errors.h"
#include "e2e_process.h"
#include "runner/lm/artifact.h"

namespace pg::lm {
namespace {

using pgtest::TempDir;

// read_model_facts on a sidecar holding `json`; the UsageError's message, or "" if it was read.
std::string sidecar_error(const TempDir& dir, const std::string& json) {
  const std::string path = (dir / "m-b1.json").string();
  pgtest::write_file(path, json);
  try {
    read_model_facts(path);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(AotiSidecar, ANameIsHeldToTheRuleOfExecModelNames) {
  TempDir dir;
  const std::string path = (dir / "m-b1.json").string();
  for (const std::string& name :
       {std::string("m\\n::error::pwned"), std::string("m\\u001b[31m"), std::string(300, 'm'),
        std::string("my model"), std::string("-m"), std::string("a/b"), std::string(65, 'm')}) {
    const std::string err = sidecar_error(dir, R"({"name": ")" + name + R"("})");
    EXPECT_EQ(err.rfind("model sidecar '" + path + "': field 'name' ", 0), 0u)
        << name << ": " << err;
    EXPECT_NE(err.find("1-64 letters, digits, '.', '_' or '-'"), std::string::npos) << err;
    // The refused value is shown inert: the message itself is one line.
    EXPECT_EQ(err.find('\n'), std::string::npos) << err;
    EXPECT_EQ(err.find('\x1b'), std::string::npos) << err;
    EXPECT_LT(err.size(), 400u) << err;
  }
  for (const std::string& name : {std::string("m"), std::string("my-llama_1b.v2"),
                                  std::string("TinyLlama-1.1B-Chat-v1.0"), std::string(64, 'm')})
    EXPECT_EQ(sidecar_error(dir, R"({"name": ")" + name + R"("})"), "") << name;
  EXPECT_EQ(sidecar_error(dir, "{}"), "");  // no name: the path as typed is the key
}

// The "export" object (what decides a package's speed besides the code) is written by measured code
// too: a digest must be a SHA-256 and a count a count, or the sidecar is refused naming the field.
TEST(AotiSidecar, ItsExportFactsAreDigestsAndCountsOrTheSidecarIsRefused) {
  TempDir dir;
  const std::string sha(64, 'a');
  const std::string path = (dir / "m-b1.json").string();
  pgtest::write_file(path, R"({"export": {"graph_sha256": ")" + sha + R"(", "kernels_sha256": ")" +
                               sha + R"(", "tuning_sha256": ")" + sha +
                               R"(", "tuned_options": true, "tuned_kernels": 13,
                               "replayed_kernels": 12, "retuned_kernels": 1, "replayed_from": ")" +
                               sha + R"("}})");
  const ModelFacts f = read_model_facts(path);
  ASSERT_TRUE(f.export_facts);
  EXPECT_EQ(f.export_facts->graph_sha256, sha);
  EXPECT_TRUE(f.export_facts->tuned_options);
  EXPECT_EQ(f.export_facts->tuned_kernels, 13);
  EXPECT_EQ(f.export_facts->retuned_kernels, 1);
  EXPECT_EQ(f.export_facts->replayed_from, sha);
  pgtest::write_file(path, "{}");
  EXPECT_FALSE(read_model_facts(path).export_facts);  // another exporter: nothing to judge

  EXPECT_EQ(sidecar_error(dir, R"({"export": {"graph_sha256": "x\n::error::y"}})"),
            "model sidecar '" + path +
                "': field 'export.graph_sha256' is not a SHA-256 (64 lowercase hex digits)");
  EXPECT_EQ(sidecar_error(dir, R"({"export": {"tuned_kernels": -1}})"),
            "model sidecar '" + path + "': field 'export.tuned_kernels' must not be negative");
  EXPECT_EQ(sidecar_error(dir, R"({"export": [1]})"),
            "model sidecar '" + path + "': field 'export' is not an object");
  EXPECT_NE(sidecar_error(dir, R"({"export": {"tuned_options": "yes"}})").find("wrong type"),
            std::string::npos);
}

}  // namespace
}  // namespace pg::lm
