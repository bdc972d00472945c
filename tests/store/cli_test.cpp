// `perfgate export` and `perfgate runs` through the real binary.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "store/run_json.h"
#include "store/store.h"
#include "test_util.h"

namespace pg {
namespace {

using nlohmann::json;

struct Result {
  int rc = -1;
  std::string out, err;
};

std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

class Cli : public ::testing::Test {
 protected:
  // `shell` runs first in the same shell (a ulimit); `wrap` is put before the binary.
  Result perfgate(const std::string& args, const std::string& shell = "",
                  const std::string& wrap = "") {
    const std::string err_file = dir_.file("stderr.txt");
    const std::string cmd = "cd " + quote(dir_.path().string()) + " && " + shell + wrap +
                            PERFGATE_BIN + " " + args + " 2>" + quote(err_file);
    Result r;
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return r;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    const int status = pclose(p);
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.err = test::read_bytes(err_file);
    return r;
  }
  // Two runs: one complete with 3 cells (2 ok, 1 oom), one incomplete outside a repository.
  void make_db(const std::string& name) {
    store::Store s(dir_.file(name));
    const pg::Run full = test::sample_run();
    a_ = s.begin_run(full.git, full.env, full.config_json);
    for (const auto& c : full.cells) s.add_cell(a_, c);
    s.finish_run(a_, RunStatus::complete);
    GitInfo none;
    none.state = "not-a-repository";
    b_ = s.begin_run(none, test::sample_env("cpu"), "{}");
    s.add_cell(b_, full.cells[0]);
  }
  test::TempDir dir_;
  int64_t a_ = 0, b_ = 0;
};

TEST_F(Cli, ExportJsonPrintsEveryRunWithItsSamples) {
  make_db("perfgate.db");  // the default --db
  const Result r = perfgate("export --format json");
  ASSERT_EQ(r.rc, 0) << r.err;
  const json doc = json::parse(r.out);
  ASSERT_EQ(doc.at("runs").size(), 2u);
  store::Store s(dir_.file("perfgate.db"), true);
  EXPECT_EQ(doc, json::parse(store::runs_to_json(s.list_runs({true, true}), true)));
  EXPECT_EQ(doc["runs"][0]["id"], a_);
  EXPECT_EQ(doc["runs"][0]["cells"][0]["samples"]["decode_ms"],
            json(test::sample_run().cells[0].samples.decode_ms));
  EXPECT_EQ(doc["runs"][1]["status"], "incomplete");
  EXPECT_TRUE(doc["runs"][1]["git"]["commit"].is_null());
  // What export prints, ingest reads back.
  EXPECT_EQ(store::runs_from_json(r.out, "stdout").size(), 2u);
}

TEST_F(Cli, ExportOneRunAsJsonOrCsv) {
  make_db("x.db");
  const Result j = perfgate("export --db x.db --run " + std::to_string(b_) + " --format json");
  ASSERT_EQ(j.rc, 0) << j.err;
  const json doc = json::parse(j.out);
  ASSERT_EQ(doc["runs"].size(), 1u);
  EXPECT_EQ(doc["runs"][0]["id"], b_);

  const Result c = perfgate("export --db x.db --format csv");
  ASSERT_EQ(c.rc, 0) << c.err;
  EXPECT_EQ(c.out.rfind("run_id,run_status,started_at,commit,", 0), 0u);
  EXPECT_EQ(std::count(c.out.begin(), c.out.end(), '\n'), 1 + 3 + 1);  // header + cells
  EXPECT_NE(c.out.find("0123456789abcdef0123456789abcdef01234567,main,false,tiny,fp32,64,512"),
            std::string::npos)
      << c.out;
}

TEST_F(Cli, RunsPrintsAnAlignedTable) {
  make_db("x.db");
  const Result r = perfgate("runs --db x.db");
  ASSERT_EQ(r.rc, 0) << r.err;
  std::vector<std::string> lines;
  std::string line;
  for (std::istringstream in(r.out); std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_NE(lines[0].find("STATUS"), std::string::npos);
  EXPECT_NE(lines[1].find("complete"), std::string::npos);
  EXPECT_NE(lines[1].find("0123456789ab "), std::string::npos);  // short commit
  EXPECT_NE(lines[1].find("main"), std::string::npos);
  EXPECT_NE(lines[1].find("NVIDIA H200"), std::string::npos);
  EXPECT_NE(lines[1].find("2/3"), std::string::npos);
  EXPECT_NE(lines[2].find("incomplete"), std::string::npos);
  EXPECT_NE(lines[2].find("(not-a-repository)"), std::string::npos);
  EXPECT_NE(lines[2].find("1/1"), std::string::npos);
  // Columns line up: every row starts STATUS where the header does.
  const size_t col = lines[0].find("STATUS");
  EXPECT_EQ(lines[1].find("complete"), col);
  EXPECT_EQ(lines[2].find("incomplete"), col);
}

// A branch name or a device comes from the measured checkout or an ingested run: one inert line
// in the table (docs/FORMATS.md, "Text from measured code").
TEST_F(Cli, RunsPrintsStoredTextOnOneInertLine) {
  {
    store::Store s(dir_.file("x.db"));
    pg::Run run = test::sample_run();
    run.git.branch = "b\n::error::branch";
    run.env["device"] = "gpu\r::warning::dev \x1b[2J##[error]x";
    s.import_run(run);
  }
  const Result r = perfgate("runs --db x.db");
  ASSERT_EQ(r.rc, 0) << r.err;
  std::vector<std::string> lines;
  std::string line;
  for (std::istringstream in(r.out); std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 2u) << r.out;
  EXPECT_NE(lines[1].find("b\\n::error::branch"), std::string::npos) << r.out;
  EXPECT_NE(lines[1].find("gpu\\r::warning::dev \\x1B[2J##\\[error]x"), std::string::npos) << r.out;
}

TEST_F(Cli, NeverCreatesADatabase) {
  for (const char* args : {"runs", "export --format json", "runs --db other.db"}) {
    const Result r = perfgate(args);
    EXPECT_EQ(r.rc, 2) << args;
    EXPECT_NE(r.err.find(".db"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir_.file("perfgate.db")));
  EXPECT_FALSE(std::filesystem::exists(dir_.file("other.db")));
}

TEST_F(Cli, RefusesAForeignFileAndLeavesItAlone) {
  const std::string path = dir_.file("notes.db");
  test::write_bytes(path, "these are my notes\n");
  for (const char* args : {"runs --db notes.db", "export --db notes.db --format csv"}) {
    const Result r = perfgate(args);
    EXPECT_EQ(r.rc, 2) << args;
    EXPECT_NE(r.err.find("notes.db"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("not a perfgate database"), std::string::npos) << r.err;
  }
  EXPECT_EQ(test::read_bytes(path), "these are my notes\n");
}

TEST_F(Cli, BadFlagsAndUnknownRunsExitWithUsage) {
  make_db("x.db");
  const Result missing_format = perfgate("export --db x.db");
  EXPECT_EQ(missing_format.rc, 2);
  EXPECT_NE(missing_format.err.find("--format"), std::string::npos) << missing_format.err;
  const Result bad_format = perfgate("export --db x.db --format xml");
  EXPECT_EQ(bad_format.rc, 2);
  EXPECT_NE(bad_format.err.find("xml"), std::string::npos) << bad_format.err;
  EXPECT_EQ(perfgate("export --db x.db --format json --run abc").rc, 2);
  EXPECT_EQ(perfgate("runs --db x.db --bogus").rc, 2);
  const Result unknown = perfgate("export --db x.db --format json --run 999");
  EXPECT_EQ(unknown.rc, 2);
  EXPECT_NE(unknown.err.find("999"), std::string::npos) << unknown.err;
  EXPECT_TRUE(unknown.out.empty());
  EXPECT_EQ(perfgate("export --help").rc, 0);
}

// The disk refusing a write is a runtime failure (exit 4) with the reason, never a kill by
// SIGXFSZ and never a bare "disk I/O error".
const std::string kTinyRun = "run --model tiny --device cpu --seq-lens 8 --warmup 0 --quiet --db ";

// Bad numeric flags and refused output targets are exit 2 naming the flag, before any run row.
TEST_F(Cli, BadFlagsOfRunStoreNothing) {
  const std::string db = dir_.file("flags.db");
  { store::Store create(db); }
  for (const std::string& bad :
       {std::string("--peak-tflops 1e-320"), std::string("--peak-bw-gbps 1e308"),
        std::string("--json /dev/full"), "--csv " + dir_.str()}) {
    const Result r =
        perfgate(kTinyRun + quote(db) + " --batch-sizes 1 --reps 1 --gen-tokens 2 " + bad);
    EXPECT_EQ(r.rc, 2) << bad << ": " << r.err;
    EXPECT_NE(r.err.find(bad.substr(0, bad.find(' '))), std::string::npos) << r.err;
  }
  EXPECT_EQ(store::Store(db, true).run_count(), 0);
  EXPECT_TRUE(std::filesystem::is_character_file("/dev/full"));
}

TEST_F(Cli, RunJsonThroughASymlinkReplacesItsTargetAndKeepsTheLink) {
  std::filesystem::create_directory(dir_ / "exports");
  test::write_bytes(dir_.file("exports/run.json"), "old");
  std::filesystem::create_symlink("exports/run.json", dir_ / "latest.json");
  const Result r = perfgate(kTinyRun + quote(dir_.file("link.db")) +
                            " --batch-sizes 1 --reps 1 --gen-tokens 2 --json latest.json");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_TRUE(std::filesystem::is_symlink(dir_ / "latest.json"));
  const auto doc = json::parse(test::read_bytes(dir_.file("exports/run.json")));
  EXPECT_EQ(doc["runs"].size(), 1u);
}

TEST_F(Cli, FileSizeLimitIsExit4WithTheReason) {
  // dash counts `ulimit -f` in 512-byte blocks: 8 KiB, less than a fresh store's schema.
  const Result r = perfgate(
      kTinyRun + quote(dir_.file("limited.db")) + " --batch-sizes 1 --reps 1 --gen-tokens 2",
      "ulimit -f 16 && ");
  EXPECT_EQ(r.rc, 4) << r.err;
  EXPECT_NE(r.err.find("File too large"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("limited.db"), std::string::npos) << r.err;
}

TEST_F(Cli, FullDiskIsExit4WithTheReason) {
  // A 96 KiB tmpfs in a private mount namespace: room for the schema, not for the run.
  const std::string mnt = dir_.file("small");
  std::filesystem::create_directory(mnt);
  if (std::system("unshare -rm true 2>/dev/null") != 0)
    GTEST_SKIP() << "no mount namespace here (unshare refused)";
  const std::string wrap =
      "unshare -rm sh -c 'mount -t tmpfs -o size=96k none " + mnt + " && exec \"$0\" \"$@\"' ";
  const Result r = perfgate(kTinyRun + quote(mnt + "/full.db") +
                                " --batch-sizes 1,2,3,4,5,6,7,8 "
                                "--reps 20 --gen-tokens 8",
                            "", wrap);
  EXPECT_EQ(r.rc, 4) << r.err;
  EXPECT_TRUE(r.err.find("No space left on device") != std::string::npos ||
              r.err.find("disk is full") != std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace pg
