// One store file, every kind of user at once, all real processes: `perfgate serve` answering a
// loop of page and health requests and ingesting runs, two runners writing (the real
// `perfgate run --model tiny` and a store-writer process), an operator's `sqlite3 .backup`, and a
// SIGTERM of serve in the middle (then a fresh serve). Afterwards the file passes
// integrity_check and every acknowledged run is there, byte for byte. Bounded: every wait is on a
// condition with a deadline. The minutes-long version is bench/store_soak.sh.
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/stat.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "store/run_json.h"
#include "store/store.h"
#include "test_util.h"
#include "tests/runner/e2e_process.h"

namespace pg {
namespace {

using pgtest::Child;
using pgtest::eventually;
using namespace std::chrono_literals;

constexpr const char* kToken = "stress-token-0123456789abcdef";
constexpr int kIngests = 24;      // POSTs, one run each
constexpr int kWriterRuns = 4;    // store_writer processes, one after another
constexpr int kWriterCells = 6;   // cells per store_writer run
constexpr int kPerfgateRuns = 2;  // real `perfgate run --model tiny`, one after another

// `perfgate serve` as a child; port parsed from its "listening on" line.
struct Serve {
  std::unique_ptr<Child> proc;
  int port = -1;
  Serve(const std::string& db, const std::string& token_file) {
    proc = std::make_unique<Child>(std::vector<std::string>{
        PERFGATE_BIN, "serve", "--db", db, "--port", "0", "--token-file", token_file, "--quiet"});
    const std::regex re(R"(listening on http://[^ ]*:(\d+)/)");
    eventually(
        [&] {
          std::smatch m;
          const std::string err = proc->err();
          if (std::regex_search(err, m, re)) port = std::stoi(m[1]);
          return port > 0 || !proc->running();
        },
        30s);
  }
};

std::string sqlite3_cli(const std::string& db, const std::string& sql) {
  auto r = pgtest::run({SQLITE3_BIN, db, sql});
  return pgtest::trim(r.out) +
         (r.exit_code == 0 ? "" : " [exit " + std::to_string(r.exit_code) + ": " + r.err + "]");
}

TEST(MultiProcessStress, ServeRunnersIngestBackupAndSigtermShareOneFile) {
  test::TempDir dir;
  const std::string db = dir.file("pg.db");
  const std::string backup = dir.file("backup.db");
  const std::string token_file = dir.file("token");
  pgtest::write_file(token_file, kToken);
  chmod(token_file.c_str(), 0600);
  const std::string commits_file = dir.file("commits");
  {
    std::string lines;
    for (int k = 0; k < kWriterCells; ++k) lines += "commit\n";
    pgtest::write_file(commits_file, lines);
  }
  { store::Store create(db); }

  auto serve = std::make_unique<Serve>(db, token_file);
  ASSERT_GT(serve->port, 0) << serve->proc->err();
  std::atomic<int> port{serve->port};
  std::atomic<bool> stop{false};

  // --- readers: pages, lists and health, in a loop until the writers are done.
  std::atomic<int> reads{0}, server_errors{0};
  std::atomic<int64_t> acked_count{0};
  std::mutex mu;
  std::vector<std::string> failures;
  auto note = [&](const std::string& s) {
    std::lock_guard<std::mutex> l(mu);
    if (failures.size() < 20) failures.push_back(s);
  };
  std::thread reader([&] {
    const char* paths[] = {"/healthz", "/", "/runs", "/api/v1/runs", "/api/v1/series"};
    int64_t last_healthz = 0;
    for (int i = 0; !stop; ++i) {
      httplib::Client c("127.0.0.1", port);
      c.set_read_timeout(20, 0);
      const int64_t acked_before = acked_count;
      auto r = c.Get(paths[i % 5]);
      if (!r) {  // serve is restarting: back off instead of spinning on a refused connection
        std::this_thread::sleep_for(10ms);
        continue;
      }
      ++reads;
      if (r->status >= 500) {
        ++server_errors;
        note(std::string(paths[i % 5]) + " -> " + std::to_string(r->status) + ": " +
             r->body.substr(0, 200));
      }
      if (i % 5 == 0 && r->status == 200) {
        const int64_t runs = nlohmann::json::parse(r->body).value("runs", int64_t{-1});
        if (runs < last_healthz || runs < acked_before)
          note("/healthz says " + std::to_string(runs) + " runs after " +
               std::to_string(last_healthz) + " and " + std::to_string(acked_before) +
               " acknowledged");
        last_healthz = std::max(last_healthz, runs);
      }
    }
  });

  // --- ingest: distinct runs POSTed with the token; a failed connection is retried (each run
  // carries its uuid, so a retry of a run that did land is acknowledged with its old id).
  std::map<int, int64_t> ingested;  // variant -> acknowledged id
  std::thread ingester([&] {
    for (int v = 1; v <= kIngests; ++v) {
      pg::Run run = test::sample_run(v);
      char uuid[33];
      std::snprintf(uuid, sizeof uuid, "%032x", v);
      run.uuid = uuid;
      const std::string body = store::runs_to_json({run}, true);
      const auto deadline = std::chrono::steady_clock::now() + 60s;
      while (std::chrono::steady_clock::now() < deadline) {
        httplib::Client c("127.0.0.1", port);
        c.set_read_timeout(20, 0);
        auto r = c.Post("/api/v1/runs", {{"Authorization", std::string("Bearer ") + kToken}}, body,
                        "application/json");
        if (!r) {  // serve is restarting
          std::this_thread::sleep_for(10ms);
          continue;
        }
        if (r->status != 201 && r->status != 200) {
          note("POST -> " + std::to_string(r->status) + ": " + r->body.substr(0, 200));
          break;
        }
        std::lock_guard<std::mutex> l(mu);
        ingested[v] = nlohmann::json::parse(r->body)["runs"][0]["id"].get<int64_t>();
        ++acked_count;
        break;
      }
    }
  });

  // --- runner 1: store_writer processes, each a run of kWriterCells committed cells.
  std::vector<int64_t> writer_runs;
  std::thread writer([&] {
    for (int k = 0; k < kWriterRuns; ++k) {
      Child w({STORE_WRITER_BIN, db, std::to_string(kWriterCells)}, {"", {}, commits_file});
      const int st = w.wait(60s);
      const std::string out = w.out();
      if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || out.find("finished") == std::string::npos) {
        note("store_writer failed: " + out + w.err());
        continue;
      }
      std::lock_guard<std::mutex> l(mu);
      writer_runs.push_back(std::stoll(out.substr(4)));
      ++acked_count;
    }
  });

  // --- runner 2: the real runner, tiny sweeps, tagged by a repository path of their own.
  const std::string repo = dir.file("runner-repo");
  std::filesystem::create_directory(repo);
  int perfgate_ok = 0;
  std::thread runner([&] {
    for (int k = 0; k < kPerfgateRuns; ++k) {
      auto r = pgtest::run({PERFGATE_BIN,    "run", "--model",    "tiny",
                            "--device",      "cpu", "--dtype",    "fp32",
                            "--batch-sizes", "1",   "--seq-lens", "8",
                            "--gen-tokens",  "2",   "--warmup",   "0",
                            "--reps",        "2",   "--seed",     std::to_string(k),
                            "--repo",        repo,  "--db",       db,
                            "--quiet"},
                           {}, 120s);
      if (r.exit_code != 0) {
        note("perfgate run exit " + std::to_string(r.exit_code) + ": " + r.err);
        continue;
      }
      ++perfgate_ok;
      ++acked_count;
    }
  });

  // --- the operator, mid-load: a backup, then SIGTERM to serve and a fresh one.
  ASSERT_TRUE(eventually([&] { return acked_count >= 6; }, 90s)) << "writers made no progress";
  int64_t acked_at_backup = acked_count;
  const auto bk = pgtest::run({SQLITE3_BIN, db, ".backup '" + backup + "'"});
  EXPECT_EQ(bk.exit_code, 0) << bk.err;
  serve->proc->signal(SIGTERM);
  const int st = serve->proc->wait(10s);
  EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "serve did not stop cleanly: " << st;
  serve = std::make_unique<Serve>(db, token_file);
  ASSERT_GT(serve->port, 0) << serve->proc->err();
  port = serve->port;

  ingester.join();
  writer.join();
  runner.join();
  EXPECT_TRUE(eventually([&] { return reads >= 50; }, 30s));
  stop = true;
  reader.join();
  serve->proc->signal(SIGTERM);
  serve->proc->wait(10s);

  std::printf(
      "stress: %d reads, %d ingested, %zu writer runs, %d perfgate runs, %lld acknowledged before "
      "the backup\n",
      reads.load(), kIngests, writer_runs.size(), perfgate_ok,
      static_cast<long long>(acked_at_backup));
  for (const auto& f : failures) ADD_FAILURE() << f;
  EXPECT_EQ(server_errors, 0);
  EXPECT_GT(reads, 0);

  EXPECT_EQ(sqlite3_cli(db, "PRAGMA integrity_check"), "ok");
  EXPECT_EQ(sqlite3_cli(backup, "PRAGMA integrity_check"), "ok");
  const int64_t in_backup = std::stoll(sqlite3_cli(backup, "SELECT count(*) FROM runs"));
  EXPECT_GE(in_backup, acked_at_backup) << "the backup lost runs acknowledged before it began";

  store::Store s(db, /*read_only=*/true);
  ASSERT_EQ(static_cast<int>(ingested.size()), kIngests);
  for (const auto& [variant, id] : ingested) {
    auto run = s.load_run(id);
    ASSERT_TRUE(run) << "acknowledged ingest " << variant << " (id " << id << ") is missing";
    const pg::Run want = test::sample_run(variant);
    ASSERT_EQ(run->cells.size(), want.cells.size());
    for (size_t c = 0; c < want.cells.size(); ++c)
      EXPECT_EQ(run->cells[c].samples.decode_ms, want.cells[c].samples.decode_ms);
  }
  ASSERT_EQ(static_cast<int>(writer_runs.size()), kWriterRuns);
  for (int64_t id : writer_runs) {
    auto run = s.load_run(id);
    ASSERT_TRUE(run) << "acknowledged writer run " << id << " is missing";
    EXPECT_EQ(run->status, RunStatus::complete);
    EXPECT_EQ(static_cast<int>(run->cells.size()), kWriterCells);
  }
  EXPECT_EQ(perfgate_ok, kPerfgateRuns);
  int complete_runner_runs = 0;
  for (const auto& r : s.list_runs())
    if (r.git.repo_path == repo && r.status == RunStatus::complete) ++complete_runner_runs;
  EXPECT_EQ(complete_runner_runs, kPerfgateRuns);
  EXPECT_EQ(s.run_count(), kIngests + kWriterRuns + kPerfgateRuns);
}

}  // namespace
}  // namespace pg
