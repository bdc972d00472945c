// `--model aoti:PATH.pt2` end to end on the CPU: the package made by python/export_module.py
// (fixture runner.aoti_export_tiny_packages) is measured by the real perfgate binary in a real git
// checkout, through the same harness as the built-in models.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "e2e_process.h"

namespace {

using nlohmann::json;
using pgtest::TempDir;
namespace fs = std::filesystem;

const std::string kPerfgate = PERFGATE_BIN;
const fs::path kPackages = AOTI_PACKAGE_DIR;

class AotiE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    pgtest::git(repo_.path(), {"init", "-q"});
    fs::create_directories(repo_.path() / "out");
    for (const char* f : {"tiny-b1.pt2", "tiny-b1.json"})
      fs::copy_file(kPackages / f, repo_.path() / "out" / f);
    pgtest::write_file(repo_.path() / ".gitignore", "out/\n");
    pgtest::git(repo_.path(), {"add", ".gitignore"});
    pgtest::git(repo_.path(), {"commit", "-q", "-m", "Model"});
  }
  pgtest::Result perfgate_run(const std::string& model, std::vector<std::string> extra = {},
                              const std::string& seq_lens = "8,16") {
    std::vector<std::string> argv = {
        kPerfgate, "run",          "--model", model,       "--device", "cpu",    "--seq-lens",
        seq_lens,  "--gen-tokens", "5",       "--warmup",  "1",        "--reps", "3",
        "--db",    db(),           "--repo",  repo_.str(), "--quiet"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return pgtest::run(argv, {work_.str(), {}, "/dev/null"}, std::chrono::seconds(240));
  }
  std::string db() const { return (work_.path() / "runs.db").string(); }
  json last_run() {
    auto r = pgtest::run({kPerfgate, "export", "--db", db(), "--format", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out)["runs"].back();
  }
  json sidecar() { return json::parse(pgtest::read_file(kPackages / "tiny-b1.json")); }

  TempDir repo_, work_;
};

TEST_F(AotiE2E, MeasuredLikeABuiltInModelAndFingerprinted) {
  auto r = perfgate_run("aoti:out/tiny-b{batch}.pt2", {"--batch-sizes", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json run = last_run();
  ASSERT_EQ(run["cells"].size(), 2u);
  for (const auto& cell : run["cells"]) {
    EXPECT_EQ(cell["key"]["model"], "aoti:tiny") << "the series key is the sidecar's name";
    ASSERT_EQ(cell["status"], "ok") << cell.dump();
    EXPECT_EQ(cell["samples"]["prefill_ms"].size(), 3u);
    ASSERT_EQ(cell["samples"]["decode_ms"].size(), 3u);
    EXPECT_EQ(cell["samples"]["decode_ms"][0].size(), 4u);  // gen-tokens 5: 4 decode steps
    const auto& m = cell["metrics"];
    EXPECT_DOUBLE_EQ(m["weight_bytes"].get<double>(), sidecar()["param_bytes"].get<double>());
    EXPECT_GT(m["tpot_ms"].get<double>(), 0);
    EXPECT_TRUE(m.contains("achieved_bw_gbps"));
    EXPECT_TRUE(m.contains("peak_rss_growth_bytes"));
  }
  const auto sha = pgtest::run({"sha256sum", (repo_.path() / "out" / "tiny-b1.pt2").string()});
  EXPECT_EQ(run["env"]["artifact_sha256"], "aoti:tiny b1=" + sha.out.substr(0, 64));
  EXPECT_EQ(run["env"]["aoti_weights_sha256"],
            "aoti:tiny b1=" + sidecar()["weights_sha256"].get<std::string>());
  EXPECT_EQ(run["env"]["exporter_torch"], sidecar()["exporter"]["torch"]);
  // The exporter's --inductor-config options made the kernels: recorded and shown with the run.
  EXPECT_EQ(sidecar()["exporter"]["inductor_configs"], "coordinate_descent_tuning=true");
  EXPECT_EQ(run["env"]["exporter_inductor_configs"], "coordinate_descent_tuning=true");
  // Decode steps ran through the package's T = 1 program, and the cells are ok: its logits
  // matched the model program's on the same step, so it ran on the prefill's cache.
  EXPECT_EQ(sidecar()["decode_program"], "decode");
  EXPECT_EQ(run["env"]["aoti_decode_program"], "aoti:tiny b1=decode");
}

TEST_F(AotiE2E, ADecodeProgramThePackageLacksIsAnErrorCellNamingIt) {
  json facts = sidecar();
  facts["decode_program"] = "nope";
  pgtest::write_file(repo_.path() / "out" / "tiny-b1.json", facts.dump());
  auto r = perfgate_run("aoti:out/tiny-b1.pt2", {"--batch-sizes", "1"}, "8");
  EXPECT_EQ(r.exit_code, 0) << "a failed cell is stored, and the sweep goes on: " << r.err;
  const json cell = last_run()["cells"][0];
  EXPECT_EQ(cell["status"], "error") << cell.dump();
  EXPECT_NE(cell.value("reason", "").find("its decode program 'nope' cannot be loaded"),
            std::string::npos)
      << cell.dump();
}

TEST_F(AotiE2E, WithoutSidecarTheCostMetricsAreAbsentNotGuessed) {
  fs::copy_file(repo_.path() / "out" / "tiny-b1.pt2", repo_.path() / "bare.pt2");
  auto r = perfgate_run("aoti:bare.pt2", {"--batch-sizes", "1"}, "8");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json cell = last_run()["cells"][0];
  EXPECT_EQ(cell["key"]["model"], "aoti:bare.pt2");
  ASSERT_EQ(cell["status"], "ok") << cell.dump();
  for (const char* m : {"weight_bytes", "kv_bytes", "achieved_bw_gbps", "mbu", "prefill_mfu"})
    EXPECT_FALSE(cell["metrics"].contains(m)) << m;
  EXPECT_TRUE(cell["metrics"].contains("tpot_ms"));
}

TEST_F(AotiE2E, RefusesWhatThePackageWasNotExportedFor) {
  auto batch = perfgate_run("aoti:out/tiny-b1.pt2", {"--batch-sizes", "2"});
  EXPECT_EQ(batch.exit_code, 2);
  EXPECT_NE(batch.err.find("exported for batch size 1"), std::string::npos) << batch.err;
  auto dtype = perfgate_run("aoti:out/tiny-b1.pt2", {"--batch-sizes", "1", "--dtype", "bf16"});
  EXPECT_EQ(dtype.exit_code, 2);
  EXPECT_NE(dtype.err.find("was exported in fp32"), std::string::npos) << dtype.err;
  auto context = perfgate_run("aoti:out/tiny-b1.pt2", {"--batch-sizes", "1"}, "62");
  EXPECT_EQ(context.exit_code, 2);
  EXPECT_NE(context.err.find("exceeds the context"), std::string::npos) << context.err;
  auto missing = perfgate_run("aoti:out/none.pt2", {"--batch-sizes", "1"});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("does not exist"), std::string::npos) << missing.err;
}

// transformers' static-cache wrapper, exported by python/export_hf.py, through the same harness.
TEST_F(AotiE2E, HuggingFaceExportRunsThroughTheSameHarness) {
  for (const char* f : {"hf-b1.pt2", "hf-b1.json"})
    fs::copy_file(kPackages / f, repo_.path() / "out" / f);
  auto r = perfgate_run("aoti:out/hf-b{batch}.pt2", {"--batch-sizes", "1"}, "8");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json cell = last_run()["cells"][0];
  EXPECT_EQ(cell["key"]["model"], "aoti:llama-tiny");
  ASSERT_EQ(cell["status"], "ok") << cell.dump();  // its decode program agreed with the model's
  EXPECT_EQ(last_run()["env"]["aoti_decode_program"], "aoti:llama-tiny b1=decode");
  EXPECT_GT(cell["metrics"]["kv_bytes"].get<double>(), 0);
}

}  // namespace
