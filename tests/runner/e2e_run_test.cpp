// End to end: the real `perfgate` binary sweeps the tiny model on the CPU into a real SQLite file
// in a real temporary git repository, then `perfgate export` reads it back.
#include <gtest/gtest.h>
#include <httplib.h>
#include <sqlite3.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "e2e_process.h"

namespace {

using nlohmann::json;
using pgtest::TempDir;

const std::string kPerfgate = PERFGATE_BIN;

// A repository with one commit on main, plus the place where the tests put their databases.
class RunE2E : public ::testing::Test {
 protected:
  void SetUp() override {
    pgtest::git(repo_.path(), {"init", "-q"});
    pgtest::write_file(repo_ / "model.py", "print('hi')\n");
    pgtest::git(repo_.path(), {"add", "model.py"});
    pgtest::git(repo_.path(), {"commit", "-q", "-m", "Add the model\n\nWith a body."});
    sha_ = pgtest::trim(pgtest::git(repo_.path(), {"rev-parse", "HEAD"}).out);
  }

  // The real binary, run in the work directory.
  pgtest::Result perfgate(std::vector<std::string> args) {
    args.insert(args.begin(), kPerfgate);
    return pgtest::run(args, {work_.str(), {}, "/dev/null"});
  }
  // `perfgate run` of a small sweep of the tiny model (4 cells by default).
  std::vector<std::string> small_sweep(const std::string& db, std::string repo = "",
                                       const std::string& batches = "1,2",
                                       const std::string& seqs = "8,16") {
    if (repo.empty()) repo = repo_.str();
    return {"run",   "--model",    "tiny", "--device",     "cpu", "--batch-sizes",
            batches, "--seq-lens", seqs,   "--gen-tokens", "4",   "--warmup",
            "1",     "--reps",     "3",    "--db",         db,    "--repo",
            repo};
  }
  json export_json(const std::string& db) {
    auto r = perfgate({"export", "--db", db, "--format", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out);
  }

  TempDir repo_, work_;
  std::string sha_;
};

TEST_F(RunE2E, TinySweepThenExport) {
  auto args = small_sweep("tmp.db");
  args.insert(args.end(), {"--json", "run.json", "--csv", "run.csv"});
  const auto r = perfgate(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;

  // stdout: the table (header + one row per cell), where it was stored, and the dashboard hint.
  EXPECT_NE(r.out.find("Stored run 1 in tmp.db (complete, 4 of 4 cells)"), std::string::npos)
      << r.out;
  // The hint names the binary as it was started (here by its absolute path): it works as printed.
  EXPECT_NE(r.out.find("View: " + kPerfgate + " serve --db tmp.db  ->  http://127.0.0.1:8080/"),
            std::string::npos)
      << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\n\s*model\s+dtype\s+B\s+P\s+kv\s+attn)")))
      << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(\n\s*tiny\s+fp32\s+2\s+16\s+on\s+\w+\s+ok)")));
  // stderr is not a terminal here: one plain progress line per cell, no carriage returns.
  for (int i = 1; i <= 4; ++i)
    EXPECT_NE(r.err.find("[" + std::to_string(i) + "/4] tiny fp32"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\r'), std::string::npos);

  const json doc = export_json("tmp.db");
  ASSERT_EQ(doc["runs"].size(), 1u);
  const json& run = doc["runs"][0];
  EXPECT_EQ(run["id"], 1);
  EXPECT_EQ(run["status"], "complete");
  EXPECT_EQ(run["git"]["commit"], sha_);
  EXPECT_EQ(run["git"]["branch"], "main");
  EXPECT_EQ(run["git"]["dirty"], false);
  EXPECT_EQ(run["git"]["subject"], "Add the model");
  EXPECT_TRUE(std::regex_match(run["git"]["time"].get<std::string>(),
                               std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
  for (const char* k : {"device", "torch", "cpu", "hostname", "os", "compiler", "perfgate"})
    EXPECT_TRUE(run["env"].contains(k)) << k;
  ASSERT_EQ(run["cells"].size(), 4u);
  std::vector<std::pair<int, int>> seen;
  for (const json& cell : run["cells"]) {
    const json& key = cell["key"];
    EXPECT_EQ(key["model"], "tiny");
    EXPECT_EQ(key["dtype"], "fp32");
    EXPECT_EQ(key["device"], "cpu");
    EXPECT_EQ(key["gen_tokens"], 4);
    EXPECT_EQ(key["kv_cache"], true);
    EXPECT_EQ(key["cuda_graphs"], false);
    seen.emplace_back(key["batch_size"].get<int>(), key["seq_len"].get<int>());
    EXPECT_EQ(cell["status"], "ok") << cell.dump();
    EXPECT_TRUE(cell["reason"].is_null());
    EXPECT_GT(cell["metrics"]["tpot_ms"].get<double>(), 0);
    EXPECT_GT(cell["metrics"]["prefill_ms"].get<double>(), 0);
    // Raw samples: one prefill per repetition, gen_tokens - 1 decode steps per repetition.
    ASSERT_EQ(cell["samples"]["prefill_ms"].size(), 3u);
    ASSERT_EQ(cell["samples"]["decode_ms"].size(), 3u);
    for (const json& rep : cell["samples"]["decode_ms"]) EXPECT_EQ(rep.size(), 3u);
  }
  // Cells in the documented order: prompt length fastest, then batch size.
  EXPECT_EQ(seen, (std::vector<std::pair<int, int>>{{1, 8}, {1, 16}, {2, 8}, {2, 16}}));

  // --json wrote the same run as `perfgate export`; --csv one row per cell.
  const json file = json::parse(pgtest::read_file(work_ / "run.json"));
  EXPECT_EQ(file["runs"][0], run);
  const std::string csv = pgtest::read_file(work_ / "run.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 5) << csv;
  EXPECT_NE(csv.find(sha_), std::string::npos);

  // A second run appends; nothing stored is overwritten.
  ASSERT_EQ(perfgate(small_sweep("tmp.db")).exit_code, 0);
  const json two = export_json("tmp.db");
  ASSERT_EQ(two["runs"].size(), 2u);
  EXPECT_EQ(two["runs"][0], run);
}

// A benchmark perfgate has to kill (a hang past --exec-timeout, a line that breaks the protocol)
// failed its cell; perfgate itself was not interrupted: the sweep goes on, the run is complete,
// and nothing on stderr says it was stopped. (The supervisor of the benchmark's process group
// once kept perfgate's SIGTERM handler, and printed the interruption message when it was killed.)
TEST_F(RunE2E, KillingAMisbehavingExecBenchmarkIsNoInterruptionOfTheRun) {
  const std::string hello = R"({"type":"hello","protocol":1,"engine":"demo"})";
  const std::string rep = R"(,"prefill_ms":3,"decode_ms":[1.5,1.25]})";
  pgtest::write_file(repo_ / "bench.sh",
                     "echo '" + hello +
                         "'\n"
                         "case $PERFGATE_BATCH in\n"
                         "  1) sleep 60 ;;\n"                   // hangs: killed at --exec-timeout
                         "  2) echo 'not json'; sleep 60 ;;\n"  // breaks the protocol: stopped
                         "esac\n"
                         "echo '{\"type\":\"rep\",\"rep\":0" +
                         rep +
                         "'\n"
                         "echo '{\"type\":\"rep\",\"rep\":1" +
                         rep +
                         "'\n"
                         "echo '{\"type\":\"end\"}'\n");
  const std::string db = (work_ / "exec.db").string();
  const auto r = perfgate({"run",   "--exec",         "sh bench.sh", "--model",
                           "mine",  "--device",       "cpu",         "--batch-sizes",
                           "1,2,4", "--seq-lens",     "8",           "--gen-tokens",
                           "3",     "--warmup",       "0",           "--reps",
                           "2",     "--exec-timeout", "1",           "--db",
                           db,      "--repo",         repo_.str()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("stopping after the current cell"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("interrupted"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("(complete, 3 of 3 cells)"), std::string::npos) << r.out;
  const json run = export_json(db)["runs"][0];
  EXPECT_EQ(run["status"], "complete");
  ASSERT_EQ(run["cells"].size(), 3u);
  EXPECT_EQ(run["cells"][0]["status"], "error");
  EXPECT_NE(run["cells"][0]["reason"].get<std::string>().find("--exec-timeout 1 s"),
            std::string::npos);
  EXPECT_EQ(run["cells"][1]["status"], "error");
  EXPECT_NE(run["cells"][1]["reason"].get<std::string>().find("not valid JSON"), std::string::npos);
  EXPECT_EQ(run["cells"][2]["status"], "ok");
}

TEST_F(RunE2E, QuietPrintsOnlyWhereItStored) {
  auto args = small_sweep("q.db", "", "1", "8");
  args.push_back("--quiet");
  const auto r = perfgate(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(r.out, "Stored run 1 in q.db (complete, 1 of 1 cells)\n");
}

TEST_F(RunE2E, ConfigFileAndFlagsTogether) {
  pgtest::write_file(work_ / "sweep.toml",
                     "model = \"tiny\"\ndevice = \"cpu\"\nbatch-sizes = [1, 2, 3]\nseq-lens = 8\n"
                     "gen-tokens = 3\nwarmup = 0\nreps = 2\nquiet = true\n");
  const auto r = perfgate({"run", "--config", "sweep.toml", "--batch-sizes", "2", "--db", "c.db",
                           "--repo", repo_.str()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json run = export_json("c.db")["runs"][0];
  ASSERT_EQ(run["cells"].size(), 1u);  // the flag replaced the file's list
  EXPECT_EQ(run["cells"][0]["key"]["batch_size"], 2);
  EXPECT_EQ(run["cells"][0]["samples"]["decode_ms"][0].size(), 2u);
}

TEST_F(RunE2E, OutsideARepositoryTheCommitIsNull) {
  TempDir plain;
  if (pgtest::run({"git", "rev-parse"}, {plain.str(), {}, "/dev/null"}).exit_code == 0)
    GTEST_SKIP() << "temp directory is inside a repository";
  auto args = small_sweep("n.db", plain.str(), "1", "8");
  args.push_back("--quiet");
  const auto r = perfgate(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json git = export_json("n.db")["runs"][0]["git"];
  EXPECT_TRUE(git["commit"].is_null()) << git.dump();
  EXPECT_TRUE(git["branch"].is_null());
  EXPECT_TRUE(git["subject"].is_null());
}

TEST_F(RunE2E, BadUsageExitsTwoAndStoresNothing) {
  pgtest::write_file(work_ / "bad.toml", "reps = 3\nbatch-sizes = [1, -4]\n");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"run", "--batch-sizes", "0"}, "--batch-sizes: '0' is not a positive integer"},
      {{"run", "--dtype", "fp8"}, "--dtype: 'fp8' is not one of fp32, fp16, bf16"},
      {{"run", "--bogus"}, "--bogus"},
      {{"run", "--reps"}, "--reps"},
      {{"run", "--config", "bad.toml"}, "bad.toml:2: batch-sizes: '-4' is not a positive integer"},
      {{"run", "--config", "missing.toml"}, "--config: cannot read 'missing.toml'"},
      {{"run", "--device", "cpu", "--cuda-graphs", "on"}, "--cuda-graphs on needs --device cuda"},
      {{"run", "--model", "gpt2", "--seq-lens", "1000", "--device", "cpu"},
       "exceeds the context length 1024 of model 'gpt2'"},
      {{"run", "--submit", "http://127.0.0.1:1"}, "--submit: needs --token-file"},
  };
  for (auto [case_args, expected] : cases) {
    // The case's own flags last, so that a flag missing its value is the final word.
    std::vector<std::string> args = {"run", "--db", "never.db", "--repo", repo_.str()};
    args.insert(args.end(), case_args.begin() + 1, case_args.end());
    const auto r = perfgate(args);
    EXPECT_EQ(r.exit_code, 2) << case_args[1] << ": " << r.err;
    EXPECT_NE(r.err.find(expected), std::string::npos) << "stderr: " << r.err;
    EXPECT_FALSE(std::filesystem::exists(work_ / "never.db")) << case_args[1];
  }
}

TEST_F(RunE2E, CudaWithoutAGpuExitsTwo) {
  if (std::filesystem::exists("/dev/nvidia0")) GTEST_SKIP() << "this machine has a GPU";
  const auto r = perfgate({"run", "--device", "cuda", "--db", "never.db"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--device: 'cuda' asks for a GPU"), std::string::npos) << r.err;
}

TEST_F(RunE2E, ForeignDatabaseIsLeftByteForByteUntouched) {
  // A SQLite database of some other program, and a file that is not SQLite at all.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((work_ / "other.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE notes(x TEXT); INSERT INTO notes VALUES('keep me');",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  pgtest::write_file(work_ / "text.db", "these are my notes, not a database\n");
  for (const char* name : {"other.db", "text.db"}) {
    const std::string before = pgtest::read_file(work_ / name);
    const auto mtime = std::filesystem::last_write_time(work_ / name);
    const auto r = perfgate(small_sweep(name, "", "1", "8"));
    EXPECT_EQ(r.exit_code, 2) << name << ": " << r.err;
    EXPECT_NE(r.err.find(name), std::string::npos) << r.err;
    EXPECT_EQ(pgtest::read_file(work_ / name), before) << name;
    EXPECT_EQ(std::filesystem::last_write_time(work_ / name), mtime) << name;
    EXPECT_FALSE(std::filesystem::exists(work_ / (std::string(name) + "-wal")));
  }
}

// --submit against a real HTTP server on loopback that checks the bearer token.
TEST_F(RunE2E, SubmitPostsTheExportWithTheToken) {
  httplib::Server server;
  std::string received_body, received_auth;
  server.Post("/prefix/api/v1/runs", [&](const httplib::Request& req, httplib::Response& res) {
    received_auth = req.get_header_value("Authorization");
    if (received_auth != "Bearer s3cret") {
      res.status = 401;
      res.set_content(R"({"error": "bad token"})", "application/json");
      return;
    }
    received_body = req.body;
    res.status = 201;
    res.set_content(R"({"runs": [{"id": 1, "inserted": true}]})", "application/json");
  });
  const int port = server.bind_to_any_port("127.0.0.1");
  ASSERT_GT(port, 0);
  std::thread serving([&] { server.listen_after_bind(); });
  pgtest::write_file(work_ / "token", "s3cret\n");
  pgtest::write_file(work_ / "wrong", "nope\n");
  for (const char* f : {"token", "wrong"})  // token files are refused when others may read them
    std::filesystem::permissions(work_ / f, std::filesystem::perms::owner_read,
                                 std::filesystem::perm_options::replace);
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/prefix/";

  auto args = small_sweep("s.db", "", "1", "8");
  args.insert(args.end(), {"--submit", url, "--token-file", "token", "--quiet"});
  const auto ok = perfgate(args);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_EQ(received_auth, "Bearer s3cret");
  ASSERT_FALSE(received_body.empty());
  const json sent = json::parse(received_body);
  EXPECT_EQ(sent["runs"][0], export_json("s.db")["runs"][0]);  // exactly what export prints

  args = small_sweep("s.db", "", "1", "8");
  args.insert(args.end(), {"--submit", url, "--token-file", "wrong", "--quiet"});
  const auto refused = perfgate(args);
  EXPECT_EQ(refused.exit_code, 4);
  EXPECT_NE(refused.err.find("HTTP 401: bad token"), std::string::npos) << refused.err;
  EXPECT_EQ(export_json("s.db")["runs"].size(), 2u);  // the local store keeps the run anyway

  server.stop();
  serving.join();

  args = small_sweep("s.db", "", "1", "8");
  args.insert(args.end(), {"--submit", url, "--token-file", "token", "--quiet"});
  const auto unreachable = perfgate(args);
  EXPECT_EQ(unreachable.exit_code, 4);
  EXPECT_NE(unreachable.err.find("submit to"), std::string::npos) << unreachable.err;

  pgtest::write_file(work_ / "empty", "\n");
  std::filesystem::permissions(work_ / "empty", std::filesystem::perms::owner_read,
                               std::filesystem::perm_options::replace);
  args = small_sweep("s.db", "", "1", "8");
  args.insert(args.end(), {"--submit", url, "--token-file", "empty"});
  const auto empty = perfgate(args);
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_NE(empty.err.find("--token-file empty: the file is empty"), std::string::npos)
      << empty.err;
}

}  // namespace
