// Text from measured code in every report (docs/FORMATS.md, "Text from measured code"): a cell
// name, a reason or an environment value comes from the benchmark or the package being measured,
// and no report may turn it into a workflow command, a terminal control or a second line.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "gate/report.h"
#include "report_fixtures.h"

namespace pg {
namespace {

using namespace report_fixtures;  // NOLINT: the suite's synthetic result

// ---- text from measured code (docs/FORMATS.md, "Text from measured code") -------------------
// A cell name, a reason or an environment value comes from the benchmark or the package being
// measured. On GitHub the runner reads every line of stdout for workflow commands: "::cmd"
// after leading blanks, and the legacy "##[cmd]" anywhere in a line. None may be produced.

// GitHub's runner trims leading white space (.NET's TrimStart) before it looks for "::".
bool starts_a_command(const std::string& line) {
  size_t i = 0;
  while (i < line.size()) {
    if (line[i] == ' ' || line[i] == '\t' || line[i] == '\v' || line[i] == '\f') {
      ++i;
    } else if (line.compare(i, 2, "\xC2\xA0") == 0) {  // U+00A0
      i += 2;
    } else if (line.compare(i, 3, "\xE2\x80\x83") == 0 || line.compare(i, 3, "\xE3\x80\x80") == 0) {
      i += 3;  // U+2003, U+3000
    } else {
      break;
    }
  }
  return line.compare(i, 2, "::") == 0;
}

// Every line of `out` is inert for a log: no line a workflow command, no legacy command, no
// terminal control, no carriage return.
void expect_inert_log(const std::string& out, bool commands_allowed = false) {
  EXPECT_EQ(out.find('\r'), std::string::npos) << out;
  EXPECT_EQ(out.find('\x1b'), std::string::npos) << out;
  EXPECT_EQ(out.find("\xC2\x9B"), std::string::npos) << out;  // U+009B, the 8-bit CSI
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    if (commands_allowed && (line.rfind("::error title=perfgate", 0) == 0 ||
                             line.rfind("::warning title=perfgate", 0) == 0 ||
                             line.rfind("::notice title=perfgate", 0) == 0)) {
      // perfgate's own command: the untrusted part is its data, escaped.
      EXPECT_EQ(line.find('\n'), std::string::npos);
      continue;
    }
    EXPECT_FALSE(starts_a_command(line)) << "a line that is a workflow command: " << line;
    EXPECT_EQ(line.find("##["), std::string::npos) << "a legacy workflow command: " << line;
  }
}

// Everything measured code can name in a gate result, all at once.
gate::GateResult hostile_result() {
  const std::string evil = "x\n::error::pwned\r  ::warning::cr\x1b[2J##[set-output name=a]b";
  gate::GateResult r = regression_result();
  r.verdict = gate::GateVerdict::inconclusive;
  r.cells[0].key.model = "::error::first";  // a line that begins with the name
  r.cells[0].note =
      "\xC2\xA0::notice::nbsp \xC2\x9B"
      "31m";
  r.cells[3].key.model = evil;
  r.cells[3].note = evil;
  r.cells[4].verdict = gate::CellVerdict::incomparable;
  r.cells[4].note = "head has no ok samples: error (" + evil + ")";
  r.base_env["engine.lib"] = "1.0";
  r.head_env["engine.lib"] = "##[error]" + evil;
  r.warnings = {evil, "environments differ (engine.lib: base '1.0' vs head '" + evil + "')"};
  return r;
}

TEST(TableReport, TextFromMeasuredCodeStartsNoCommandAndStaysOnItsLine) {
  const gate::GateResult r = hostile_result();
  const gate::ReportInfo info{"main\n::error::spelled", "HEAD", "git", "git",
                              {"note\r::error::x"},     {}};
  for (bool color : {false, true}) {
    std::string out = render(gate::GateTableReporter{color}, r, info);
    if (color) {  // perfgate's own colours are the only escape sequences
      for (const char* c : {"\033[31m", "\033[32m", "\033[33m", "\033[1m", "\033[0m"}) {
        for (size_t at = out.find(c); at != std::string::npos; at = out.find(c))
          out.erase(at, std::string(c).size());
      }
    }
    expect_inert_log(out);
  }
}

TEST(MarkdownReport, TextFromMeasuredCodeStartsNoCommandAndStaysOnItsLine) {
  const gate::ReportInfo info{"main\n::error::spelled", "HEAD", "git", "git",
                              {"note\r::error::x"},     {}};
  expect_inert_log(render(gate::GateMarkdownReporter{}, hostile_result(), info));
}

TEST(GithubCommands, TextFromMeasuredCodeIsOnlyEverTheDataOfPerfgatesOwnCommands) {
  gate::GateResult r = hostile_result();
  r.verdict = gate::GateVerdict::regression;
  r.cells[3].verdict = gate::CellVerdict::regression;
  expect_inert_log(render(gate::GateGithubReporter{}, r), /*commands_allowed=*/true);
}

TEST(GateReports, ALongNameIsCutToTwoHundredCharactersWithAnEllipsis) {
  gate::GateResult r = regression_result();
  r.cells[3].key.model = std::string(300, 'm');
  for (const std::string& out :
       {render(gate::GateTableReporter{false}, r), render(gate::GateMarkdownReporter{}, r),
        render(gate::GateGithubReporter{}, r)}) {
    EXPECT_EQ(out.find(std::string(200, 'm')), std::string::npos) << out;
    EXPECT_NE(out.find(std::string(199, 'm') + "\u2026"), std::string::npos) << out;
  }
}

}  // namespace
}  // namespace pg
