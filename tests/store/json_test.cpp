// The export document: shape, round trip through the parser, validation messages, CSV.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "common/errors.h"
#include "store/run_csv.h"
#include "store/run_json.h"
#include "store/run_report.h"
#include "store/store.h"
#include "test_util.h"

namespace pg {
namespace {

using nlohmann::json;

pg::Run stored_run(int variant = 0) {
  pg::Run r = test::sample_run(variant);
  r.id = 7;
  return r;
}

TEST(RunJson, HasTheSpecExportShape) {
  const json doc = json::parse(store::runs_to_json({stored_run()}, true));
  ASSERT_TRUE(doc.at("runs").is_array());
  const json& r = doc["runs"][0];
  EXPECT_EQ(r.at("id"), 7);
  EXPECT_EQ(r.at("status"), "complete");
  EXPECT_EQ(r.at("git").at("commit"), "0123456789abcdef0123456789abcdef01234567");
  EXPECT_EQ(r["git"].at("branch"), "main");
  EXPECT_EQ(r["git"].at("dirty"), false);
  EXPECT_EQ(r["git"].at("subject"), test::sample_git().subject.value());
  EXPECT_EQ(r["git"].at("time"), "2024-05-01T10:00:00Z");
  EXPECT_EQ(r["git"].at("state"), "ok");
  EXPECT_EQ(r["git"].at("repo_path"), "/src/repo");
  EXPECT_EQ(r.at("env").at("torch"), "2.11.0");
  EXPECT_EQ(r.at("started_at"), "2024-05-01T10:05:00Z");
  EXPECT_EQ(r.at("config").at("reps"), 3);
  const json& c = r.at("cells")[0];
  EXPECT_EQ(c.at("key"), json::parse(R"({"model": "tiny", "dtype": "fp32", "batch_size": 1,
      "seq_len": 16, "gen_tokens": 5, "kv_cache": true, "attention": "math",
      "cuda_graphs": false, "device": "cpu"})"));
  EXPECT_EQ(c.at("status"), "ok");
  EXPECT_TRUE(c.at("reason").is_null());
  EXPECT_EQ(c.at("metrics").at("tpot_ms"), 0.15);
  EXPECT_EQ(c.at("samples").at("prefill_ms").size(), 3u);
  EXPECT_EQ(c.at("samples").at("decode_ms")[0].size(), 4u);
  EXPECT_EQ(r["cells"][1].at("status"), "oom");
  EXPECT_EQ(r["cells"][1].at("reason"), "CUDA out of memory, tried to allocate 2.00 GiB");

  const json light = store::run_to_json(stored_run(), false);
  EXPECT_FALSE(light["cells"][0].contains("samples"));
  EXPECT_TRUE(light["cells"][0].contains("metrics"));
}

TEST(RunJson, NullCommitAndInvalidUtf8AreWrittenSafely) {
  pg::Run r = stored_run();
  r.git = GitInfo{};
  r.git.state = "no-commit";
  r.git.subject = std::string("caf\xe9 latin-1");
  r.finished_at.clear();
  const json j = json::parse(store::runs_to_json({r}, false));
  EXPECT_TRUE(j["runs"][0]["git"]["commit"].is_null());
  EXPECT_TRUE(j["runs"][0]["finished_at"].is_null());
  EXPECT_EQ(j["runs"][0]["git"]["subject"], "caf\xEF\xBF\xBD latin-1");
}

TEST(RunJson, RoundTripsThroughTheParserExactly) {
  const std::vector<pg::Run> in = {stored_run(0), stored_run(1)};
  const auto out = store::runs_from_json(store::runs_to_json(in, true), "doc");
  ASSERT_EQ(out.size(), 2u);
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_EQ(out[i].status, in[i].status);
    EXPECT_EQ(out[i].started_at, in[i].started_at);
    EXPECT_EQ(out[i].finished_at, in[i].finished_at);
    EXPECT_EQ(out[i].git.commit, in[i].git.commit);
    EXPECT_EQ(out[i].git.branch, in[i].git.branch);
    EXPECT_EQ(out[i].git.subject, in[i].git.subject);
    EXPECT_EQ(out[i].git.time, in[i].git.time);
    EXPECT_EQ(out[i].git.dirty, in[i].git.dirty);
    EXPECT_EQ(out[i].git.state, in[i].git.state);
    EXPECT_EQ(out[i].git.repo_path, in[i].git.repo_path);
    EXPECT_EQ(out[i].env, in[i].env);
    EXPECT_EQ(json::parse(out[i].config_json), json::parse(in[i].config_json));
    ASSERT_EQ(out[i].cells.size(), in[i].cells.size());
    for (size_t c = 0; c < in[i].cells.size(); ++c) {
      EXPECT_EQ(out[i].cells[c].key, in[i].cells[c].key);
      EXPECT_EQ(out[i].cells[c].status, in[i].cells[c].status);
      EXPECT_EQ(out[i].cells[c].reason, in[i].cells[c].reason);
      EXPECT_EQ(out[i].cells[c].metrics, in[i].cells[c].metrics);
      EXPECT_EQ(out[i].cells[c].samples.prefill_ms, in[i].cells[c].samples.prefill_ms);
      EXPECT_EQ(out[i].cells[c].samples.decode_ms, in[i].cells[c].samples.decode_ms);
    }
  }
}

TEST(RunJson, AcceptsTheMinimalSpecDocument) {
  // Only the fields docs/FORMATS.md requires; everything else takes its default.
  const auto runs = store::runs_from_json(R"({"runs": [{"id": 1, "status": "incomplete",
      "git": {"commit": null, "branch": null, "dirty": false, "subject": null, "time": null},
      "env": {"device": "cpu", "threads": 4},
      "cells": [{"key": {"model": "tiny", "dtype": "fp32", "batch_size": 1, "seq_len": 16,
                         "gen_tokens": 3, "kv_cache": true, "attention": "math",
                         "cuda_graphs": false, "device": "cpu"},
                 "status": "ok", "reason": null, "metrics": {"tpot_ms": 0.3},
                 "samples": {"prefill_ms": [0.8, 0.9], "decode_ms": [[0.3, 0.31], [0.29, 0.3]]}}]}]})",
                                          "min.json");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].status, RunStatus::incomplete);
  EXPECT_FALSE(runs[0].git.commit);
  EXPECT_EQ(runs[0].git.state, "unknown");
  EXPECT_EQ(runs[0].env.at("threads"), "4");
  EXPECT_EQ(runs[0].config_json, "{}");
  EXPECT_EQ(runs[0].cells[0].samples.decode_ms[1][0], 0.29);
}

std::string error_of(const std::string& doc) {
  try {
    store::runs_from_json(doc, "upload.json");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(accepted)";
}

// A valid one-run document, with `patch` (a JSON merge patch) applied to runs[0].
std::string doc_with(const std::string& patch) {
  json run = store::run_to_json(stored_run(), true);
  run.merge_patch(json::parse(patch));
  return json{{"runs", {run}}}.dump();
}

std::string doc_with_cell(const std::function<void(json&)>& edit) {
  json run = store::run_to_json(stored_run(), true);
  edit(run["cells"][0]);
  return json{{"runs", {run}}}.dump();
}

TEST(RunJson, RejectsMalformedDocumentsWithAPath) {
  struct Case {
    std::string doc;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {"{\"runs\": [", "upload.json: not valid JSON"},
      {"[1, 2]", "upload.json: /: expected an object, got array"},
      {"{}", "upload.json: /runs: required field is missing"},
      {R"({"runs": {}})", "upload.json: /runs: expected an array, got object"},
      {R"({"runs": [3]})", "upload.json: /runs/0: expected an object, got number"},
      {doc_with(R"({"status": "done"})"), "upload.json: /runs/0/status: unknown run status 'done'"},
      {doc_with(R"({"status": null})"), "/runs/0/status: required field is missing"},
      {doc_with(R"({"git": {"commit": "abc123"}})"),
       "/runs/0/git/commit: 'abc123' is not 40 hex digits or null"},
      {doc_with(R"({"git": {"commit": 12}})"), "/runs/0/git/commit: expected a string, got number"},
      {doc_with(R"({"git": {"dirty": "no"}})"), "/runs/0/git/dirty: expected true or false"},
      {doc_with(R"({"git": {"time": "yesterday"}})"),
       "/runs/0/git/time: 'yesterday' is not an ISO 8601 timestamp"},
      {doc_with(R"({"env": {"device": ["a"]}})"), "/runs/0/env/device: expected a string"},
      {doc_with(R"({"cells": {}})"), "/runs/0/cells: expected an array, got object"},
      {doc_with_cell([](json& c) { c["key"].erase("dtype"); }),
       "/runs/0/cells/0/key/dtype: required field is missing"},
      {doc_with_cell([](json& c) { c["key"]["batch_size"] = 1.5; }),
       "/runs/0/cells/0/key/batch_size: expected an integer, got number"},
      {doc_with_cell([](json& c) { c["key"]["batch_size"] = 0; }),
       "/runs/0/cells/0/key/batch_size: must be >= 1"},
      {doc_with_cell([](json& c) { c["key"]["dtype"] = "int4"; }),
       "/runs/0/cells/0/key/dtype: 'int4' is not one of fp32|fp16|bf16"},
      {doc_with_cell([](json& c) { c["status"] = "slow"; }),
       "/runs/0/cells/0/status: unknown cell status 'slow'"},
      {doc_with_cell([](json& c) { c["metrics"]["tpot_ms"] = "fast"; }),
       "/runs/0/cells/0/metrics/tpot_ms: expected a number, got string"},
      {R"({"runs": [{"status": "complete", "git": {"commit": null}, "env": {}, "cells": [
           {"key": {"model": "tiny", "dtype": "fp32", "batch_size": 1, "seq_len": 1,
            "gen_tokens": 2, "kv_cache": true, "attention": "math", "cuda_graphs": false,
            "device": "cpu"}, "status": "ok", "metrics": {"tpot_ms": 1e999}}]}]})",
       "upload.json: not valid JSON ([json.exception.out_of_range.406] number overflow"},
      {doc_with_cell([](json& c) { c["samples"]["decode_ms"][1].erase(0); }),
       "/runs/0/cells/0/samples/decode_ms/1: has 3 decode steps, but gen_tokens 5 means 4"},
      {doc_with_cell([](json& c) { c["samples"]["prefill_ms"].push_back(1.0); }),
       "/runs/0/cells/0/samples: 4 prefill samples but 3 decode lists"},
      {doc_with_cell([](json& c) { c["samples"]["decode_ms"][2][1] = -1.0; }),
       "/runs/0/cells/0/samples/decode_ms/2/1: must be a finite number >= 0"},
      {doc_with_cell([](json& c) { c["samples"]["decode_ms"][0] = 5; }),
       "/runs/0/cells/0/samples/decode_ms/0: expected an array, got number"},
      {doc_with_cell([](json& c) { c["samples"].erase("prefill_ms"); }),
       "/runs/0/cells/0/samples/prefill_ms: required field is missing"},
  };
  for (const auto& c : cases) {
    const std::string msg = error_of(c.doc);
    EXPECT_NE(msg.find(c.expect), std::string::npos)
        << "expected '" << c.expect << "' in '" << msg << "'";
    EXPECT_EQ(msg.rfind("upload.json: ", 0), 0u) << msg;
  }
}

TEST(RunCsv, QuotesFieldsThatNeedItAndKeepsAStableHeader) {
  EXPECT_EQ(store::csv_field("plain"), "plain");
  EXPECT_EQ(store::csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(store::csv_field("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(store::csv_field("two\nlines"), "\"two\nlines\"");
  EXPECT_EQ(store::csv_field(""), "");

  pg::Run r = stored_run();
  r.git.branch = "feat,\"quoted\"";
  r.cells[0].metrics["peak_rss_growth_bytes"] = 4096;
  const std::string csv = store::runs_to_csv({r});
  std::istringstream lines(csv);
  std::string header, row;
  std::getline(lines, header);
  EXPECT_EQ(header.rfind("run_id,run_status,started_at,commit,branch,dirty,model,dtype,batch_size,"
                         "seq_len,gen_tokens,kv_cache,attention,cuda_graphs,device,status,reason,"
                         "prefill_ms,tpot_ms,itl_p50_ms,itl_p99_ms,decode_tok_s,total_tok_s,"
                         "peak_alloc_bytes,weight_bytes,kv_bytes,achieved_bw_gbps,mbu,prefill_mfu,"
                         "cv,peak_rss_growth_bytes,env_device,",
                         0),
            0u)
      << header;
  std::getline(lines, row);
  EXPECT_NE(row.find(",\"feat,\"\"quoted\"\"\",false,tiny,fp32,1,16,5,true,math,false,cpu,ok,,"
                     "1.15,0.15,,,6666.666666666667,,123456789,"),
            std::string::npos)
      << row;
  EXPECT_NE(row.find(",0.0123,4096,NVIDIA H200,"), std::string::npos) << row;
  std::getline(lines, row);
  EXPECT_NE(row.find(",oom,\"CUDA out of memory, tried to allocate 2.00 GiB\","), std::string::npos)
      << row;
  // One line per cell plus the header, CRLF-terminated (RFC 4180).
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 4);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\r'), 4);
}

TEST(RunReporter, ChoosesByFormatAndRefusesUnknownOnes) {
  std::ostringstream json_out, csv_out;
  store::make_run_reporter("json")->report(json_out, {stored_run()});
  EXPECT_EQ(json::parse(json_out.str())["runs"][0]["id"], 7);
  store::make_run_reporter("csv")->report(csv_out, {stored_run()});
  EXPECT_EQ(csv_out.str().rfind("run_id,", 0), 0u);
  EXPECT_THROW(store::make_run_reporter("xml"), UsageError);
}

}  // namespace
}  // namespace pg
