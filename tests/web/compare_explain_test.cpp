// The compare page beside the gate's reports, on a real store with profiles and a live server on
// loopback: each explained cell's collapsed "why" (the ops and kernels that grew, appeared or
// disappeared, the exact counters that changed; names from the model escaped), a cell's trend by
// its key (/series?KEY, the link the reports write), and a pair this server has no runs of but a
// stored gate of (a pull request's gate, submitted from a runner).
#include <gtest/gtest.h>

#include <sstream>

#include "app/compare.h"
#include "app/gate_record.h"
#include "common/escape.h"
#include "core/cell_key_query.h"
#include "gate/report.h"
#include "store/store.h"
#include "tests/common/profiled_runs.h"
#include "web_fixture.h"

namespace pg::webtest {
namespace {

namespace profiled = pg::testing::profiled;

const std::string kBase(40, 'b'), kHead(40, 'd');
// An op name from the user's model that would run as HTML if it were not escaped.
const std::string kHostileOp = "aten::<img src=x onerror=alert(1)>";

class CompareExplain : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.file("explain.db");
    store::Store s(db_);
    for (uint32_t i = 0; i < 3; ++i) {
      s.import_run(profiled::run(kBase, false, i, kHostileOp));
      s.import_run(profiled::run(kHead, true, 10 + i, kHostileOp));
    }
    web::ServeOptions opt;
    opt.db_path = db_;
    server_ = std::make_unique<LiveServer>(opt);
  }
  std::string page(const std::string& target) { return get_page(*server_, target); }
  TempDir dir_;
  std::string db_;
  std::unique_ptr<LiveServer> server_;
};

TEST_F(CompareExplain, EachExplainedCellHasACollapsedWhyWithEveryNameEscaped) {
  const std::string h = page("/compare?base=" + kBase + "&head=" + kHead);
  ASSERT_NE(h.find("id=\"explanations\""), std::string::npos) << h;
  // The regressed cell (batch 1, prompt 16): collapsed, the new op grew and appeared, its
  // counters changed.
  const size_t silu = h.find("<details class=\"explain\" id=\"explain-0\"><summary>Why <b>");
  ASSERT_NE(silu, std::string::npos) << h;
  const size_t sync = h.find("<details class=\"explain\" id=\"explain-", silu + 1);
  ASSERT_NE(sync, std::string::npos) << h;
  const std::string first = h.substr(silu, sync - silu), second = h.substr(sync);
  EXPECT_NE(first.find("whose time per decode step grew most"), std::string::npos) << first;
  EXPECT_NE(first.find("<td class=\"mono op-name\">aten::&lt;img src=x onerror=alert(1)&gt;</td>"),
            std::string::npos)
      << first;
  EXPECT_NE(first.find("Appeared and disappeared"), std::string::npos);
  EXPECT_NE(first.find("decode step: appeared aten::&lt;img src=x onerror=alert(1)&gt; x12"),
            std::string::npos)
      << first;
  EXPECT_NE(first.find("decode step: 108 -&gt; 132 ops (+24: "), std::string::npos) << first;
  // The other cell: counters only, its timing verdict said, no growth table.
  EXPECT_NE(second.find("exact counters changed; timing verdict unchanged"), std::string::npos)
      << second;
  EXPECT_NE(second.find("decode step: 0 -&gt; 1 host-device sync (aten::_local_scalar_dense)"),
            std::string::npos)
      << second;
  EXPECT_EQ(second.substr(0, second.find("</details>")).find("grew most"), std::string::npos);
  // Nowhere raw.
  EXPECT_EQ(h.find("<img"), std::string::npos);
}

TEST_F(CompareExplain, ATimingTestBlindToTheMinEffectIsLabelledUnderpowered) {
  // A head whose runs of the second cell spread by 15% around the base's time, with one sync
  // more per step: its counters changed, and its timing test cannot see a 5% slowdown.
  store::Store s(db_);
  const std::string spread(40, 'e');
  for (uint32_t i = 0; i < 3; ++i) {
    pg::Run r = profiled::run(spread, false, 20 + i);
    r.cells[1] = profiled::cell(32, 0.85 + 0.15 * i, 21 + i, false, true);
    s.import_run(r);
  }
  const std::string h = page("/compare?base=" + kBase + "&head=" + spread);
  const size_t sync = h.find("<details class=\"explain\" id=\"explain-1\">");
  ASSERT_NE(sync, std::string::npos) << h;
  const std::string summary = h.substr(sync, h.find("</summary>", sync) - sync);
  EXPECT_NE(summary.find("<span class=\"badge underpowered\""), std::string::npos) << summary;
  EXPECT_NE(summary.find("timing verdict unchanged (underpowered: the smallest slowdown it could "
                         "catch is"),
            std::string::npos)
      << summary;
  // The cell of the same head with steady runs is not.
  EXPECT_EQ(page("/compare?base=" + kBase + "&head=" + kHead).find("badge underpowered"),
            std::string::npos);
}

TEST_F(CompareExplain, NoProfilesNoSection) {
  store::Store s(db_);
  const std::string bare(40, 'f');
  for (uint32_t i = 0; i < 3; ++i) {
    pg::Run r = profiled::run(bare, false, 30 + i);
    for (auto& c : r.cells) c.profile.reset();
    s.import_run(r);
  }
  EXPECT_EQ(page("/compare?base=" + kBase + "&head=" + bare).find("id=\"explanations\""),
            std::string::npos);
}

TEST_F(CompareExplain, ACellsTrendByItsKeyIsItsSeriesHere) {
  auto cli = server_->client();
  const std::string q = cell_key_query(profiled::key(16));
  auto r = cli->Get("/series?" + q + "&metric=prefill_ms");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 303);
  const std::string to = r->get_header_value("Location");
  EXPECT_EQ(to.rfind("/series/", 0), 0u) << to;
  EXPECT_NE(to.find("?metric=prefill_ms"), std::string::npos) << to;
  EXPECT_NE(page(to).find("<h1"), std::string::npos);

  auto missing = cli->Get("/series?" + q.substr(0, q.find("&device=")));
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 400);
  EXPECT_NE(missing->body.find("device is missing"), std::string::npos) << missing->body;
  auto bad = cli->Get(
      "/series?model=tiny&dtype=fp32&batch_size=one&seq_len=16&gen_tokens=8"
      "&kv_cache=true&attention=sdpa&cuda_graphs=false&device=cpu");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
  EXPECT_NE(bad->body.find("batch_size must be an integer, got &#39;one&#39;"), std::string::npos)
      << bad->body;
  CellKey other = profiled::key(16);
  other.model = "gpt2 <b>";
  auto none = cli->Get("/series?" + cell_key_query(other));
  ASSERT_TRUE(none);
  EXPECT_EQ(none->status, 404);
}

TEST_F(CompareExplain, APairWithoutRunsHereShowsItsStoredGate) {
  // The gate of a pull request measured on a runner: its runs stay there, its result comes here.
  store::Store s(db_);
  const app::Comparison c = app::compare(s, kBase, kHead, {});
  std::ostringstream json;
  gate::GateJsonReporter{}.report(c.result, gate::ReportInfo{}, json);
  auto doc = nlohmann::json::parse(json.str());
  const std::string pr_base(40, '1'), pr_head(40, '2');
  doc["base"] = pr_base;
  doc["head"] = pr_head;
  s.add_gate_result(app::gate_record_from_json(doc, "test", "api", "refs/pull/9/merge", "octo"));

  const std::string h = page("/compare?base=" + pr_base + "&head=" + pr_head);
  EXPECT_NE(h.find("id=\"stored-gate\""), std::string::npos) << h;
  EXPECT_NE(h.find("id=\"stored-verdict\" class=\"badge big fail\">regression<"), std::string::npos)
      << h;
  EXPECT_NE(h.find("id=\"runs-elsewhere\""), std::string::npos);
  EXPECT_NE(h.find("<a href=\"/series?" + html_escape(cell_key_query(profiled::key(16))) +
                   "&amp;metric=tpot_ms\""),
            std::string::npos)
      << h;
  // Another pair without runs or gate: the form, with the reason.
  auto r = server_->client()->Get("/compare?base=" + pr_base + "&head=" + std::string(40, '3'));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 404);
}

}  // namespace
}  // namespace pg::webtest
