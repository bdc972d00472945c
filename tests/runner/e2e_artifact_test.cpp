// Model artifacts resolve against the checkout being measured (--repo), not the current
// directory, and their SHA-256 is part of the run's fingerprint. The real perfgate binary, real
// git checkouts with different weights at the same path, run from a third directory.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "e2e_process.h"
#include "runner/lm/artifact.h"
#include "runner/lm/tests/lm_test_util.h"

namespace {

using nlohmann::json;
using pgtest::TempDir;

const std::string kPerfgate = PERFGATE_BIN;

// A repository whose two commits hold different GPT-2 weights at model/model.safetensors (2 and
// then 3 layers): `base_` is a second checkout of the first commit, `repo_` the second.
class ArtifactPaths : public ::testing::Test {
 protected:
  void SetUp() override {
    pgtest::git(repo_.path(), {"init", "-q"});
    commit_weights(2, "Two layers");
    base_sha_ = pgtest::trim(pgtest::git(repo_.path(), {"rev-parse", "HEAD"}).out);
    commit_weights(3, "Three layers: slower");
    head_sha_ = pgtest::trim(pgtest::git(repo_.path(), {"rev-parse", "HEAD"}).out);
    base_dir_ = parent_.path() / "base";
    pgtest::git(repo_.path(), {"worktree", "add", "-q", "--detach", base_dir_.string(), base_sha_});
  }
  void commit_weights(int64_t layers, const std::string& subject) {
    auto cfg = pg::lm::test::small_gpt2();
    cfg.n_layer = layers;
    std::filesystem::create_directories(repo_.path() / "model");
    pg::lm::write_safetensors((repo_.path() / "model" / "model.safetensors").string(),
                              pg::lm::test::gpt2_blobs(cfg));
    pgtest::git(repo_.path(), {"add", "model"});
    pgtest::git(repo_.path(), {"commit", "-q", "-m", subject});
  }
  // `perfgate run` of the checkout `repo`, started in `cwd`.
  pgtest::Result run_model(const std::string& repo, const std::string& cwd) {
    return pgtest::run({kPerfgate,    "run", "--model",       "file:model/model.safetensors",
                        "--device",   "cpu", "--batch-sizes", "1",
                        "--seq-lens", "4",   "--gen-tokens",  "2",
                        "--warmup",   "0",   "--reps",        "2",
                        "--db",       db(),  "--repo",        repo,
                        "--quiet"},
                       {cwd, {}, "/dev/null"});
  }
  std::string db() const { return (work_.path() / "runs.db").string(); }
  json runs() {
    auto r = pgtest::run({kPerfgate, "export", "--db", db(), "--format", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out)["runs"];
  }
  std::string sha256sum(const std::filesystem::path& p) {
    auto r = pgtest::run({"sha256sum", p.string()});
    return r.out.substr(0, 64);
  }

  TempDir repo_, parent_, work_;
  std::filesystem::path base_dir_;
  std::string base_sha_, head_sha_;
};

TEST_F(ArtifactPaths, EachCheckoutLoadsItsOwnWeightsWhateverTheCurrentDirectory) {
  // The base round runs inside the head's checkout, as a CI job that checks out the head does.
  auto base = run_model(base_dir_.string(), repo_.str());
  ASSERT_EQ(base.exit_code, 0) << base.err;
  auto head = run_model(repo_.str(), work_.str());
  ASSERT_EQ(head.exit_code, 0) << head.err;

  const json all = runs();
  ASSERT_EQ(all.size(), 2u);
  std::map<std::string, json> by_commit;
  for (const auto& r : all) by_commit[r["git"]["commit"].get<std::string>()] = r;
  ASSERT_TRUE(by_commit.count(base_sha_) && by_commit.count(head_sha_));
  const auto weight_bytes = [](const json& run) {
    return run["cells"][0]["metrics"]["weight_bytes"].get<double>();
  };
  EXPECT_LT(weight_bytes(by_commit[base_sha_]), weight_bytes(by_commit[head_sha_]))
      << "the base round must measure the base's 2-layer weights";
  const std::string key = "file:model/model.safetensors=";
  EXPECT_EQ(by_commit[base_sha_]["env"]["weights_sha256"],
            key + sha256sum(base_dir_ / "model" / "model.safetensors"));
  EXPECT_EQ(by_commit[head_sha_]["env"]["weights_sha256"],
            key + sha256sum(repo_.path() / "model" / "model.safetensors"));

  // Other weights are another model: the gate says inconclusive and names the field.
  auto cmp = pgtest::run({kPerfgate, "compare", "--db", db(), "--repo", repo_.str(), "--base",
                          base_sha_, "--head", head_sha_});
  EXPECT_EQ(cmp.exit_code, 3) << cmp.out << cmp.err;
  EXPECT_NE((cmp.out + cmp.err).find("weights_sha256"), std::string::npos) << cmp.out << cmp.err;
}

TEST_F(ArtifactPaths, MissingFileNamesTheCheckoutItWasLookedFor) {
  auto r = run_model(work_.str(), repo_.str());  // the work dir holds no model/
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--model"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("resolve against --repo"), std::string::npos) << r.err;
}

// An AOTInductor package whose sidecar says another torch release exported it is refused before
// it is loaded (it would fail to load, or crash): exit 2, both versions named, nothing stored.
// The .pt2 here is not a package at all, so any attempt to load it would show as an error cell.
TEST(ExportedPackages, AnotherTorchReleaseIsRefusedNamingBothVersions) {
  TempDir repo, work;
  pgtest::git(repo.path(), {"init", "-q"});
  pgtest::write_file(repo.path() / "old.pt2", "not a package: never loaded");
  pgtest::write_file(repo.path() / "old.json",
                     R"({"name": "old", "batch_size": 1, "exporter": {"torch": "2.10.0"}})");
  const std::string db = (work.path() / "runs.db").string();
  auto r = pgtest::run({kPerfgate, "run", "--model", "aoti:old.pt2", "--device", "cpu",
                        "--batch-sizes", "1", "--seq-lens", "4", "--gen-tokens", "2", "--reps", "2",
                        "--db", db, "--repo", repo.str(), "--quiet"},
                       {work.str(), {}, "/dev/null"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  // Both versions: the package's, and the LibTorch this runner was built with (and loads).
  EXPECT_TRUE(std::regex_search(
      r.err,
      std::regex(R"(exported by torch 2\.10\.0 and this perfgate runs LibTorch (\d+\.\d+)[^:]*: )"
                 R"(.*\(2\.10 is not \1\); export it again with torch \1\b)")))
      << r.err;
  EXPECT_NE(r.err.find("old.json"), std::string::npos) << "names the sidecar it read: " << r.err;
  EXPECT_FALSE(std::filesystem::exists(db)) << "refused before anything is stored";
}

TEST(ExportedPackages, TorchReleasesCompareByMajorAndMinor) {
  using pg::lm::torch_release_mismatch;
  EXPECT_FALSE(torch_release_mismatch("2.11.0", "2.11.0+cu130"));
  EXPECT_FALSE(torch_release_mismatch("2.11.1+cpu", "2.11.0")) << "a patch release loads it";
  EXPECT_FALSE(torch_release_mismatch("a nightly", "2.11.0")) << "no version: nothing to compare";
  const auto why = torch_release_mismatch("2.12.0.dev20260101", "2.11.0");
  ASSERT_TRUE(why);
  EXPECT_NE(why->find("2.12 is not 2.11"), std::string::npos) << *why;
  EXPECT_TRUE(torch_release_mismatch("2.1.0", "2.11.0")) << "2.1 is not 2.11";
}

}  // namespace
