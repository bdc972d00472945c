// perfgate's own worker (`perfgate-runner worker`, docs/PROTOCOL.md "Worker mode") as the A/B
// driver runs it: a real process on pipes serving the tiny model on the CPU one repetition per
// request; its lines pass the protocol's own reader; refusals name the setting as `perfgate run`
// does; the end of stdin ends it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>

#include "runner/exec/exec_protocol.h"
#include "runner/lm/cost_model.h"
#include "runner/lm/presets.h"
#include "runner/lm/tests/lm_test_util.h"
#include "runner/worker/worker.h"
#include "worker_process.h"

namespace {

using nlohmann::json;
using pgtest::TempDir;
using pgtest::WorkerProcess;
using std::chrono::seconds;

const std::string kPerfgate = PERFGATE_BIN;

std::string runner_bin() {
  return std::filesystem::path(kPerfgate).parent_path().append("perfgate-runner").string();
}

// The cell as perfgate ab sends it (docs/PROTOCOL.md, "The cell", protocol 3 in worker mode).
json tiny_cell(const std::string& repo, int gen_tokens = 4, int reps = 3, bool profile = false) {
  return {
      {"protocol", 3},       {"worker", true},           {"model", "tiny"}, {"batch_size", 1},
      {"prompt_len", 8},     {"gen_tokens", gen_tokens}, {"warmup", 1},     {"reps", reps},
      {"device", "cpu"},     {"dtype", "fp32"},          {"seed", 0},       {"kv_cache", true},
      {"attention", "sdpa"}, {"cuda_graphs", false},     {"repo", repo},    {"profile", profile}};
}

// Every stdout line of one worker, and the same lines through the --exec protocol's reader:
// hello as a version 2 one (without worker mode's "cells"), ready left out.
class Transcript {
 public:
  Transcript(int reps, int gen_tokens, bool profile) : reader_(reps, gen_tokens, profile) {}
  json take(WorkerProcess& w, const std::string& type) {
    const auto line = w.read_line();
    if (!line) throw std::runtime_error("stdout ended, expected a " + type + " line: " + w.err());
    const json j = json::parse(*line);
    EXPECT_EQ(j.value("type", ""), type) << *line << "\n" << w.err();
    json as_v2 = j;
    if (j.value("type", "") == "hello") {
      EXPECT_EQ(j.value("cells", ""), "many");  // perfgate's worker takes cell after cell
      as_v2["protocol"] = 2;
      as_v2.erase("cells");
    }
    if (j.value("type", "") != "ready") reader_.feed(as_v2.dump());
    return j;
  }
  pg::exec::ProtocolReader& reader() { return reader_; }

 private:
  pg::exec::ProtocolReader reader_;
};

TEST(Worker, ServesHelloReadyOneRepetitionPerRequestAndEnd) {
  TempDir repo;
  WorkerProcess w({runner_bin(), "worker"}, repo.str());
  w.send(tiny_cell(repo.str()).dump());
  Transcript t(3, 4, false);
  const json hello = t.take(w, "hello");
  EXPECT_EQ(hello["protocol"], 3);
  EXPECT_EQ(hello["engine"], "perfgate");
  EXPECT_FALSE(hello["versions"]["torch"].get<std::string>().empty());
  t.take(w, "ready");
  for (int i = 0; i < 3; ++i) {
    w.send(json{{"op", "rep"}, {"rep", i}}.dump());
    const json rep = t.take(w, "rep");
    EXPECT_EQ(rep["rep"], i);
    EXPECT_GT(rep["prefill_ms"].get<double>(), 0);
    ASSERT_EQ(rep["decode_ms"].size(), 3u);
    for (const auto& step : rep["decode_ms"]) EXPECT_GT(step.get<double>(), 0);
  }
  w.send(R"({"op":"end"})");
  w.close_stdin();  // no further cell: the worker exits after its end line
  const json end = t.take(w, "end");
  EXPECT_FALSE(end.contains("peak_alloc_bytes")) << "a CPU has no allocator peak to report";
  EXPECT_FALSE(w.read_line()) << "nothing after the end line";
  EXPECT_EQ(w.wait(), 0) << w.err();
  EXPECT_EQ(t.reader().state(), pg::exec::ProtocolReader::State::done);
  EXPECT_EQ(t.reader().samples().prefill_ms.size(), 3u);
}

TEST(Worker, TakesTheNextCellAfterAnEndLineUntilItsInputEnds) {
  TempDir repo;
  WorkerProcess w({runner_bin(), "worker"}, repo.str());
  for (int cell = 0; cell < 2; ++cell) {
    w.send(tiny_cell(repo.str(), 4, 1).dump());
    Transcript t(1, 4, false);
    t.take(w, "hello");
    t.take(w, "ready");
    w.send(json{{"op", "rep"}, {"rep", 0}}.dump());
    EXPECT_EQ(t.take(w, "rep")["rep"], 0);  // each cell numbers its repetitions from 0
    w.send(R"({"op":"end"})");
    t.take(w, "end");
  }
  w.close_stdin();
  EXPECT_FALSE(w.read_line());
  EXPECT_EQ(w.wait(), 0) << w.err();
}

TEST(Worker, ProfilesOneSequenceAfterTheTimedRepetitionsWhenAsked) {
  TempDir repo;
  WorkerProcess w({runner_bin(), "worker"}, repo.str());
  w.send(tiny_cell(repo.str(), 4, 2, true).dump());
  Transcript t(2, 4, true);
  t.take(w, "hello");
  t.take(w, "ready");
  for (int i = 0; i < 2; ++i) {
    w.send(json{{"op", "rep"}, {"rep", i}}.dump());
    t.take(w, "rep");
  }
  w.send(R"({"op":"end"})");
  w.close_stdin();  // no further cell: the worker exits after its end line
  const json profile = t.take(w, "profile");
  EXPECT_EQ(profile["steps"].size(), 4u) << "the prefill and the 3 decode steps";
  t.take(w, "end");
  EXPECT_EQ(w.wait(), 0) << w.err();
  ASSERT_TRUE(t.reader().profile());
  EXPECT_FALSE(t.reader().profile()->steps.at(0).ops_by_name.empty());
}

// The facts give the driver (runner/exec's derivation: weight_bytes = param_bytes, prefill
// FLOPs = flops_per_token x B x P, the cache from kv_bytes_per_token) perfgate run's cost.
TEST(Worker, HelloFactsReproduceTheCostModelOfTheCell) {
  TempDir repo;
  WorkerProcess w({runner_bin(), "worker"}, repo.str());
  json cell = tiny_cell(repo.str());
  cell["batch_size"] = 2;
  cell["prompt_len"] = 6;
  w.send(cell.dump());
  const json facts = json::parse(*w.read_line())["model"];
  const pg::CellKey key{"tiny", "fp32", 2, 6, 4, true, "sdpa", false, "cpu"};
  const auto cfg = *pg::lm::find_preset("tiny");
  const pg::lm::CellCost cost = pg::lm::cell_cost(cfg, key);
  const double B = 2, P = 6, G = 4;
  EXPECT_EQ(facts["param_bytes"].get<double>(), cost.weight_bytes);
  EXPECT_NEAR(facts["flops_per_token"].get<double>() * B * P, cost.prefill_flops,
              1e-12 * cost.prefill_flops);
  EXPECT_EQ(facts["kv_bytes_per_token"].get<double>() * B * (P + G), cost.kv_bytes);
  EXPECT_EQ(facts["kv_bytes_per_token"].get<double>() * B * (P + G / 2),
            cost.kv_read_bytes_per_step);
  EXPECT_EQ(facts["vocab"].get<double>(), cfg.vocab);
  EXPECT_EQ(facts["context"].get<double>(), cfg.context);
}

TEST(Worker, AnUnsupportedCellIsAnErrorWithPerfgateRunsMessage) {
  TempDir repo;
  WorkerProcess w({runner_bin(), "worker"}, repo.str());
  json cell = tiny_cell(repo.str());
  cell["cuda_graphs"] = true;
  w.send(cell.dump());
  const json hello = json::parse(*w.read_line());
  EXPECT_EQ(hello["type"], "hello");
  EXPECT_FALSE(hello.contains("model"));
  const json error = json::parse(*w.read_line());
  EXPECT_EQ(error["type"], "error");
  const std::string reason = error["reason"];
  EXPECT_EQ(reason, "--cuda-graphs on needs --device cuda (got --device cpu)");
  EXPECT_EQ(w.wait(), 2);

  // perfgate run refuses the same cell with the same words.
  TempDir work;
  const auto run =
      pgtest::run({kPerfgate, "run", "--model", "tiny", "--device", "cpu", "--cuda-graphs", "on",
                   "--db", (work.path() / "r.db").string(), "--quiet"});
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_NE(run.err.find(reason), std::string::npos) << run.err;
}

TEST(Worker, ABadCellLineOrRequestIsAnErrorNamingIt) {
  TempDir repo;
  {
    WorkerProcess w({runner_bin(), "worker"}, repo.str());
    json cell = tiny_cell(repo.str());
    cell["batch_size"] = "2";
    w.send(cell.dump());
    w.read_line();  // hello
    const json error = json::parse(*w.read_line());
    EXPECT_EQ(error["type"], "error");
    EXPECT_NE(error["reason"].get<std::string>().find("\"batch_size\" must be an integer"),
              std::string::npos)
        << error;
    EXPECT_EQ(w.wait(), 2);
  }
  WorkerProcess w({runner_bin(), "worker"}, repo.str());
  w.send(tiny_cell(repo.str(), 4, 1).dump());
  w.read_line();  // hello
  EXPECT_EQ(json::parse(*w.read_line())["type"], "ready");
  w.send(R"({"op":"rep","rep":0})");
  EXPECT_EQ(json::parse(*w.read_line())["type"], "rep");
  w.send(R"({"op":"rep","rep":1})");  // beyond the cell's one repetition
  const json error = json::parse(*w.read_line());
  EXPECT_EQ(error["type"], "error");
  EXPECT_EQ(error["reason"], "request line 3: repetition 1 is beyond the cell's 1 (its \"reps\")");
  EXPECT_EQ(w.wait(), 2);
}

// An artifact path resolves against the cell's repo, as perfgate run resolves it against
// --repo, whatever the worker's own directory; a path that is not there is refused naming it.
TEST(Worker, AFileModelResolvesAgainstTheCellsRepository) {
  TempDir repo, elsewhere;
  auto cfg = pg::lm::test::small_gpt2();
  std::filesystem::create_directories(repo.path() / "model");
  pg::lm::write_safetensors((repo.path() / "model" / "m.safetensors").string(),
                            pg::lm::test::gpt2_blobs(cfg));
  json cell = tiny_cell(repo.str(), 3, 1);
  cell["model"] = "file:model/m.safetensors";
  {
    WorkerProcess w({runner_bin(), "worker"}, elsewhere.str());
    w.send(cell.dump());
    const json hello = json::parse(*w.read_line());
    EXPECT_EQ(hello["model"]["param_bytes"].get<double>(),
              static_cast<double>(pg::lm::parameter_count(cfg)) * 4);
    EXPECT_EQ(json::parse(*w.read_line())["type"], "ready") << w.err();
    w.send(R"({"op":"rep","rep":0})");
    EXPECT_EQ(json::parse(*w.read_line())["decode_ms"].size(), 2u);
    w.send(R"({"op":"end"})");
    w.close_stdin();  // no further cell: the worker exits after its end line
    EXPECT_EQ(json::parse(*w.read_line())["type"], "end");
    EXPECT_EQ(w.wait(), 0) << w.err();
  }
  cell["model"] = "file:model/missing.safetensors";
  WorkerProcess w({runner_bin(), "worker"}, elsewhere.str());
  w.send(cell.dump());
  w.read_line();  // hello
  const json error = json::parse(*w.read_line());
  EXPECT_EQ(error["type"], "error");
  const std::string reason = error["reason"];
  EXPECT_NE(reason.find((repo.path() / "model" / "missing.safetensors").string()),
            std::string::npos)
      << reason;
  EXPECT_NE(reason.find("--repo " + repo.str()), std::string::npos) << reason;
}

TEST(Worker, TheEndOfStdinBeforeTheEndRequestEndsIt) {
  TempDir repo;
  {  // waiting for a request
    WorkerProcess w({runner_bin(), "worker"}, repo.str());
    w.send(tiny_cell(repo.str()).dump());
    w.read_line();  // hello
    EXPECT_EQ(json::parse(*w.read_line())["type"], "ready");
    w.close_stdin();
    EXPECT_FALSE(w.read_line(seconds(30)));
    EXPECT_EQ(w.wait(seconds(30)), 0);
  }
  // In a warm-up that would take hours: the worker does not finish it.
  WorkerProcess w({runner_bin(), "worker"}, repo.str());
  json cell = tiny_cell(repo.str());
  cell["warmup"] = 100000000;
  w.send(cell.dump());
  EXPECT_EQ(json::parse(*w.read_line())["type"], "hello");
  w.close_stdin();
  EXPECT_FALSE(w.read_line(seconds(30))) << "no ready line: the warm-up was cut short";
  EXPECT_EQ(w.wait(seconds(30)), 0);
}

// docs/AB.md, "Placement": every opening of a cell draws its own placement; a seed that is not
// an unsigned integer is refused by name before any cell (perfgate ab never sends one).
TEST(Worker, EachOpeningOfACellDrawsAPlacementSeedOfItsOwn) {
  std::set<uint64_t> seen;
  for (uint64_t worker = 0; worker < 8; ++worker)
    for (uint64_t opening = 0; opening < 64; ++opening)
      seen.insert(pg::worker::opening_placement_seed(worker, opening));
  EXPECT_EQ(seen.size(), 8u * 64u) << "two openings would repeat one placement";
  EXPECT_EQ(pg::worker::opening_placement_seed(3, 5), pg::worker::opening_placement_seed(3, 5));

  TempDir repo;
  {
    WorkerProcess w({runner_bin(), "worker"}, repo.str(), {"PERFGATE_PLACEMENT_SEED=17"});
    w.send(tiny_cell(repo.str(), 4, 1).dump());
    Transcript t(1, 4, false);
    t.take(w, "hello");
    t.take(w, "ready");
    w.send(json{{"op", "rep"}, {"rep", 0}}.dump());
    t.take(w, "rep");
    w.send(R"({"op":"end"})");
    w.close_stdin();
    t.take(w, "end");
    EXPECT_EQ(w.wait(), 0) << w.err();
  }
  WorkerProcess bad({runner_bin(), "worker"}, repo.str(), {"PERFGATE_PLACEMENT_SEED=-3"});
  bad.close_stdin();
  EXPECT_EQ(bad.wait(), 2);
  EXPECT_NE(bad.err().find("PERFGATE_PLACEMENT_SEED must be an unsigned decimal integer, got '-3'"),
            std::string::npos)
      << bad.err();
}

// `perfgate worker` hands over to the runner beside it, as `perfgate run` does.
TEST(Worker, PerfgateHandsTheWorkerToTheRunner) {
  TempDir repo;
  WorkerProcess w({kPerfgate, "worker"}, repo.str());
  w.send(tiny_cell(repo.str(), 2, 1).dump());
  EXPECT_EQ(json::parse(*w.read_line())["engine"], "perfgate");
  EXPECT_EQ(json::parse(*w.read_line())["type"], "ready");
  w.send(R"({"op":"rep","rep":0})");
  EXPECT_EQ(json::parse(*w.read_line())["decode_ms"].size(), 1u);
  w.send(R"({"op":"end"})");
  w.close_stdin();  // no further cell: the worker exits after its end line
  EXPECT_EQ(json::parse(*w.read_line())["type"], "end");
  EXPECT_EQ(w.wait(), 0) << w.err();
}

}  // namespace

namespace {

// An AOTInductor package (the tiny reference package the aoti_packages fixture exports), resolved
// against the cell's repo with {batch}, through the same repetitions; the facts are its sidecar's.
TEST(WorkerAoti, ServesAPackageWithItsSidecarsFacts) {
  const std::string dir = AOTI_PACKAGE_DIR;
  const json sidecar = json::parse(pgtest::read_file(dir + "/tiny-b1.json"));
  TempDir elsewhere;
  WorkerProcess w({runner_bin(), "worker"}, elsewhere.str());
  json cell = tiny_cell(dir, 4, 2, true);
  cell["model"] = "aoti:tiny-b{batch}.pt2";
  w.send(cell.dump());
  Transcript t(2, 4, true);
  const json hello = t.take(w, "hello");
  EXPECT_EQ(hello["model"]["param_bytes"], sidecar["param_bytes"]);
  EXPECT_EQ(hello["model"]["kv_bytes_per_token"], sidecar["kv_bytes_per_token"]);
  EXPECT_EQ(hello["model"]["context"], sidecar["context"]);
  t.take(w, "ready");
  for (int i = 0; i < 2; ++i) {
    w.send(json{{"op", "rep"}, {"rep", i}}.dump());
    EXPECT_EQ(t.take(w, "rep")["decode_ms"].size(), 3u);
  }
  w.send(R"({"op":"end"})");
  w.close_stdin();  // no further cell: the worker exits after its end line
  t.take(w, "profile");
  t.take(w, "end");
  EXPECT_EQ(w.wait(), 0) << w.err();
}

}  // namespace
