// Every report of a gate decided by the paired test of A/B runs names that rule and its pairs
// (docs/FORMATS.md, docs/STATISTICS.md "Paired A/B runs").
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "gate/gate_json.h"
#include "report_fixtures.h"

namespace pg {
namespace {

using report_fixtures::render;

gate::GateResult paired_result() {
  gate::GateResult r = report_fixtures::regression_result();
  r.design = "paired";
  r.ab_runs = 1;
  r.blocks = 15;
  r.pairs = 30;
  r.rule = "paired t on the 15 ABBA blocks (30 pairs) a cell of 1 A/B run, df = blocks - 1";
  for (gate::CellComparison& c : r.cells) {
    c.test = "paired-t";
    c.ab_runs = 1;
    c.blocks = 15;
    c.pairs = 30;
    c.paired_unit = "block";
    c.paired_df = 14;
  }
  return r;
}

TEST(ReportPaired, JsonAndCsvCarryTheDesignAndThePairs) {
  const nlohmann::json j = gate::gate_to_json(paired_result());
  EXPECT_EQ(j["design"], "paired");
  EXPECT_EQ(j["pairs"], 30);
  EXPECT_EQ(j["blocks"], 15);
  EXPECT_EQ(j["ab_runs"], 1);
  EXPECT_NE(j["rule"].get<std::string>().find("15 ABBA blocks"), std::string::npos);
  EXPECT_EQ(j["cells"][0]["test"], "paired-t");
  EXPECT_EQ(j["cells"][0]["paired_unit"], "block");
  EXPECT_EQ(j["cells"][0]["paired_df"], 14.0);
  const nlohmann::json u = gate::gate_to_json(report_fixtures::regression_result());
  EXPECT_EQ(u["design"], "unpaired");
  EXPECT_TRUE(u["pairs"].is_null());
  EXPECT_TRUE(u["cells"][0]["blocks"].is_null());
  const std::string csv = render(gate::GateCsvReporter{}, paired_result());
  EXPECT_NE(csv.find("note,test,ab_runs,blocks,pairs"), std::string::npos) << csv;
  EXPECT_NE(csv.find("paired-t,1,15,30"), std::string::npos) << csv;
}

TEST(ReportPaired, TextMarkdownAndGithubNameTheRule) {
  const gate::GateResult r = paired_result();
  for (const std::string& out :
       {render(gate::GateTableReporter{false}, r), render(gate::GateMarkdownReporter{}, r)}) {
    EXPECT_NE(out.find("paired A/B runs"), std::string::npos) << out;
    EXPECT_NE(out.find("15 ABBA blocks (30 pairs) a cell of 1 A/B run"), std::string::npos) << out;
    EXPECT_NE(out.find("drift shared by base and head cancels"), std::string::npos) << out;
  }
  const std::string gh = render(gate::GateGithubReporter{}, r);
  EXPECT_NE(gh.find("paired t on 15 ABBA blocks (30 pairs) of 1 A/B run"), std::string::npos) << gh;
}

}  // namespace
}  // namespace pg
