// The reporters on a synthetic GateResult: JSON keys exactly as docs/FORMATS.md, Markdown
// structure, table alignment, and GitHub workflow-command escaping.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "ci_fixtures.h"
#include "common/errors.h"
#include "gate/gate_json.h"
#include "gate/report.h"
#include "report_fixtures.h"

namespace pg {
namespace {

using namespace report_fixtures;  // NOLINT: the suite's synthetic result

std::set<std::string> keys_of(const nlohmann::json& j) {
  std::set<std::string> k;
  for (auto it = j.begin(); it != j.end(); ++it) k.insert(it.key());
  return k;
}

TEST(GateJson, TopLevelAndCellKeysAreSpecs) {
  gate::GateResult r = regression_result();
  r.cells.push_back(cell(6, gate::CellVerdict::no_baseline, std::nullopt));
  nlohmann::json j = nlohmann::json::parse(render(gate::GateJsonReporter{}, r));
  for (const char* k : {"base", "head", "verdict", "alpha", "min_effect", "correction", "cells"}) {
    EXPECT_TRUE(j.contains(k)) << k;
  }
  EXPECT_EQ(j["base"], kBase);
  EXPECT_EQ(j["head"], kHead);
  EXPECT_EQ(j["verdict"], "regression");
  EXPECT_DOUBLE_EQ(j["alpha"].get<double>(), 0.01);
  EXPECT_DOUBLE_EQ(j["min_effect"].get<double>(), 0.05);
  EXPECT_EQ(j["correction"], "holm");
  ASSERT_EQ(j["cells"].size(), 6u);
  const std::set<std::string> spec_cell = {"key",        "metric", "base_median", "head_median",
                                           "ratio",      "ci_low", "ci_high",     "p_value",
                                           "p_adjusted", "verdict"};
  const std::set<std::string> spec_key = {"model",     "dtype",       "batch_size",
                                          "seq_len",   "gen_tokens",  "kv_cache",
                                          "attention", "cuda_graphs", "device"};
  for (const auto& c : j["cells"]) {
    std::set<std::string> have = keys_of(c);
    for (const auto& k : spec_cell) EXPECT_TRUE(have.count(k)) << "cell lacks " << k;
    EXPECT_EQ(keys_of(c["key"]), spec_key);
    EXPECT_EQ(c["metric"], "tpot_ms");
  }
  // Types of the key's fields.
  const auto& k = j["cells"][0]["key"];
  EXPECT_TRUE(k["batch_size"].is_number_integer());
  EXPECT_TRUE(k["kv_cache"].is_boolean());
  EXPECT_TRUE(k["cuda_graphs"].is_boolean());
  EXPECT_EQ(k["device"], "cpu");
  // Absent numbers are null, not 0 and not missing.
  const auto& nb = j["cells"][5];
  EXPECT_EQ(nb["verdict"], "no-baseline");
  for (const char* f :
       {"base_median", "head_median", "ratio", "ci_low", "ci_high", "p_value", "p_adjusted"}) {
    EXPECT_TRUE(nb[f].is_null()) << f;
  }
  EXPECT_EQ(j["cells"][1]["verdict"], "regression");
  EXPECT_DOUBLE_EQ(j["cells"][1]["ratio"].get<double>(), 1.08);
  EXPECT_EQ(j["cells"][1]["base_n"], 20);
  EXPECT_EQ(j["cells"][1]["head_runs"], 3);
  EXPECT_EQ(j["counts"]["regression"], 2);
}

TEST(GateJson, VerdictSpellings) {
  gate::GateResult r = regression_result();
  r.cells.push_back(cell(7, gate::CellVerdict::incomparable, std::nullopt));
  r.verdict = gate::GateVerdict::inconclusive;
  nlohmann::json j = gate::gate_to_json(r);
  EXPECT_EQ(j["verdict"], "inconclusive");
  std::set<std::string> verdicts;
  for (const auto& c : j["cells"]) verdicts.insert(c["verdict"]);
  EXPECT_EQ(verdicts,
            (std::set<std::string>{"regression", "improvement", "unchanged", "incomparable"}));
  r.verdict = gate::GateVerdict::pass;
  EXPECT_EQ(gate::gate_to_json(r)["verdict"], "pass");
}

TEST(MarkdownReport, VerdictFirstWorstFirstUnchangedCollapsed) {
  gate::GateResult r = regression_result();
  gate::ReportInfo info{
      "merge-base", "HEAD", "merge-base", "git", {"baseline reused from the store"}, {}};
  std::string md = render(gate::GateMarkdownReporter{}, r, info);
  std::string first = md.substr(0, md.find('\n'));
  EXPECT_EQ(first.rfind("### ❌ perfgate: 2 regressions in decode latency (tpot", 0), 0u) << first;
  EXPECT_NE(first.find("+25.0%"), std::string::npos) << first;  // the worst one

  // Notable cells before <details>, worst ratio first; unchanged ones inside <details>.
  size_t details = md.find("<details><summary>2 unchanged cells</summary>");
  ASSERT_NE(details, std::string::npos) << md;
  size_t b4 = md.find("B=4 "), b2 = md.find("B=2 "), b3 = md.find("B=3 ");
  size_t b1 = md.find("B=1 "), b5 = md.find("B=5 ");
  EXPECT_LT(b4, b2);
  EXPECT_LT(b2, b3);
  EXPECT_LT(b3, details);
  EXPECT_GT(b1, details);
  EXPECT_GT(b5, details);
  EXPECT_LT(b1, b5);  // 1.01 before 0.99
  EXPECT_NE(md.find("</details>"), std::string::npos);
  // Short SHAs, ratio with interval, adjusted p, pooled counts, the environment, the note.
  EXPECT_NE(md.find("`1111111`"), std::string::npos);
  EXPECT_NE(md.find("`2222222`"), std::string::npos);
  EXPECT_NE(md.find("1.250 [1.240, 1.260]"), std::string::npos) << md;
  EXPECT_NE(md.find("0.0004"), std::string::npos);
  EXPECT_NE(md.find("| 2 / 20 | 3 / 30 |"), std::string::npos) << md;
  EXPECT_NE(md.find("#### Environment"), std::string::npos);
  EXPECT_NE(md.find("| torch | 2.11.0 | 2.11.0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("baseline reused from the store"), std::string::npos);
  EXPECT_NE(md.find("(merge-base)"), std::string::npos);
}

TEST(MarkdownReport, PassAndLoudWarnings) {
  gate::GateResult r = regression_result();
  r.cells = {cell(1, gate::CellVerdict::unchanged, 1.0)};
  r.verdict = gate::GateVerdict::pass;
  std::string md = render(gate::GateMarkdownReporter{}, r);
  EXPECT_EQ(md.rfind("### ✅ perfgate: no regression in decode latency", 0), 0u) << md;

  r.verdict = gate::GateVerdict::inconclusive;
  r.warnings = {"only 3 repetitions per side: the gate can never reach significance"};
  r.head_env["driver"] = "999.1";
  r.cells.push_back(cell(9, gate::CellVerdict::incomparable, std::nullopt));
  md = render(gate::GateMarkdownReporter{}, r);
  EXPECT_EQ(md.rfind("### ⚠️ perfgate: inconclusive", 0), 0u) << md;
  EXPECT_NE(md.find("> [!WARNING]\n> **only 3 repetitions"), std::string::npos) << md;
  EXPECT_NE(md.find("different environments"), std::string::npos) << md;
  EXPECT_NE(md.find("| **driver** (differs"), std::string::npos) << md;
}

TEST(MarkdownReport, TextFromOutsideCannotBreakTheTable) {
  gate::GateResult r = regression_result();
  r.cells[1].key.model = "file:/m|<script>.safetensors";
  std::string md = render(gate::GateMarkdownReporter{}, r);
  EXPECT_EQ(md.find("<script>"), std::string::npos);
  EXPECT_NE(md.find("file:/m\\|&lt;script&gt;.safetensors"), std::string::npos) << md;
}

TEST(TableReport, AlignedAndColouredOnlyWhenAsked) {
  gate::GateResult r = regression_result();
  std::string plain = render(gate::GateTableReporter{false}, r);
  EXPECT_EQ(plain.find('\033'), std::string::npos);
  EXPECT_NE(plain.find("REGRESSION: 2 regressions"), std::string::npos) << plain;
  // Every row of the cell table starts its "cell" column at the same offset.
  std::istringstream lines(plain);
  std::string line;
  std::vector<size_t> cell_col;
  while (std::getline(lines, line)) {
    size_t p = line.find("tiny fp32");
    if (p != std::string::npos) cell_col.push_back(p);
  }
  ASSERT_EQ(cell_col.size(), 5u) << plain;
  for (size_t c : cell_col) EXPECT_EQ(c, cell_col.front()) << plain;
  // Worst first.
  EXPECT_LT(plain.find("B=4 "), plain.find("B=2 "));

  std::string coloured = render(gate::GateTableReporter{true}, r);
  EXPECT_NE(coloured.find("\033[31m"), std::string::npos);
}

TEST(GithubCommands, ErrorPerRegressionWarningPerImprovementAndCause) {
  gate::GateResult r = regression_result();
  r.warnings = {"too few repetitions"};
  std::string out = render(gate::GateGithubReporter{}, r);
  size_t errors = 0, warnings = 0;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("::error title=", 0) == 0) ++errors;
    if (line.rfind("::warning title=", 0) == 0) ++warnings;
  }
  EXPECT_EQ(errors, 2u) << out;
  EXPECT_EQ(warnings, 2u) << out;  // one improvement, one warning
  // Worst first; the "%" of the title is escaped as the workflow-command rules demand.
  EXPECT_EQ(out.rfind("::error title=perfgate regression +25.0%25 tiny fp32 B=4", 0), 0u) << out;
}

TEST(GithubCommands, EscapingFollowsTheWorkflowCommandRules) {
  EXPECT_EQ(gate::escape_command_data("50% done\r\nnext"), "50%25 done%0D%0Anext");
  EXPECT_EQ(gate::escape_command_data("a:b,c"), "a:b,c");
  EXPECT_EQ(gate::escape_command_property("a:b,c%\n"), "a%3Ab%2Cc%25%0A");

  gate::GateResult r = regression_result();
  r.cells[3].key.model = "evil\n::error::injected,x:y";
  std::string out = render(gate::GateGithubReporter{}, r);
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    EXPECT_TRUE(line.rfind("::error title=", 0) == 0 || line.rfind("::warning title=", 0) == 0 ||
                line.rfind("::notice title=perfgate power::", 0) == 0)
        << "a line not starting a command: " << line;
  }
  // The line break is shown as "\\n" (one inert line), then the title is escaped.
  EXPECT_NE(out.find("evil\\n%3A%3Aerror%3A%3Ainjected%2Cx%3Ay"), std::string::npos) << out;
}

// Every stored string reaches the Markdown (and, on GitHub, the runner reading stdout for
// workflow commands): none may start a line, open HTML, or break the table.
TEST(MarkdownReport, EveryStoredStringIsEscapedEnvKeysIncluded) {
  const std::string evil = "x\n::notice::pwned|<script>`\r\n";
  gate::GateResult r = regression_result();
  r.verdict = gate::GateVerdict::inconclusive;
  r.base_env[evil] = evil;
  r.head_env[evil] = "other" + evil;
  r.cells[3].key.model = evil;
  r.cells[3].note = evil;
  r.warnings = {evil};
  gate::ReportInfo info{"main" + evil, "HEAD" + evil, "", "", {evil}, {}};
  const std::string out = render(gate::GateMarkdownReporter{}, r, info);
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) EXPECT_NE(line.rfind("::", 0), 0u) << line;
  EXPECT_EQ(out.find("<script>"), std::string::npos) << out;
  EXPECT_EQ(out.find("::notice::pwned|"), std::string::npos) << out;
  EXPECT_EQ(out.find('\r'), std::string::npos);
}

TEST(ReporterFactory, UnknownFormatIsAUsageError) {
  EXPECT_NE(gate::make_reporter("table", false), nullptr);
  EXPECT_NE(gate::make_reporter("markdown", false), nullptr);
  EXPECT_NE(gate::make_reporter("json", false), nullptr);
  EXPECT_NE(gate::make_reporter("csv", false), nullptr);
  try {
    gate::make_reporter("xml", false);
    ADD_FAILURE() << "xml was accepted";
  } catch (const SettingError& e) {  // names the setting; the CLI spells it --format
    EXPECT_EQ(e.spelled("--").rfind("--format: unknown format 'xml'", 0), 0u) << e.what();
  }
}

TEST(CsvReport, OneRowPerCellWithTheKeyColumnsAndTheJsonNumbers) {
  const gate::GateResult r = regression_result();
  const std::string csv = render(gate::GateCsvReporter{}, r);
  std::istringstream lines(csv);
  std::string header, line;
  ASSERT_TRUE(std::getline(lines, header));
  EXPECT_EQ(header.rfind("base,head,model,dtype,batch_size,seq_len,gen_tokens,kv_cache,attention,"
                         "cuda_graphs,device,metric,verdict,base_median,head_median,ratio,",
                         0),
            0u)
      << header;
  EXPECT_EQ(header.back(), '\r');  // RFC 4180 line ends, as the export's CSV
  const nlohmann::json j = gate::gate_to_json(r);
  size_t rows = 0;
  while (std::getline(lines, line)) {
    ASSERT_LT(rows, j["cells"].size());
    const auto& cell = j["cells"][rows];
    EXPECT_EQ(line.rfind(kBase + std::string(",") + kHead + "," +
                             cell["key"]["model"].get<std::string>() + ",",
                         0),
              0u)
        << line;
    EXPECT_NE(line.find("," + cell["verdict"].get<std::string>() + ","), std::string::npos);
    ++rows;
  }
  EXPECT_EQ(rows, r.cells.size());
}

}  // namespace
}  // namespace pg
