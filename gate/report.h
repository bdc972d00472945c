// Output formats of the merge gate: one interface, one small class per format (the way Google
// Benchmark's reporters work). The same GateResult feeds all of them. The classes carry the Gate
// prefix because runner/ has a pg::TableReporter of its own (two classes of one name would be an
// ODR violation the linker resolves silently).
#pragma once
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "gate/explanation.h"
#include "gate/gate.h"

namespace pg::gate {

// What the gate knows beyond the statistics: how the revisions were spelled, where the baseline
// came from. Shown by the human formats; the JSON keeps docs/FORMATS.md's shape plus these.
struct ReportInfo {
  std::string base_spelled, head_spelled;  // "merge-base", "main", "HEAD~1", ...
  std::string base_source, head_source;    // "database" | "git" | "merge-base" | "sha"
  std::vector<std::string> notes;          // e.g. "baseline reused from the persistent store"
  // Why cells changed, from their profiles (app/explain.h); one per compared cell, any order.
  std::vector<CellExplanation> explanations;
  // The setting dashboard_url: a perfgate dashboard the reports link to (gate/report_links.h);
  // empty: no links.
  std::string dashboard_url = {};
};

class GateReporter {
 public:
  virtual ~GateReporter() = default;
  virtual void report(const GateResult& result, const ReportInfo& info,
                      std::ostream& out) const = 0;
};

// Aligned columns for a terminal; ANSI colours only when asked (see stdout_wants_color).
class GateTableReporter : public GateReporter {
 public:
  explicit GateTableReporter(bool color) : color_(color) {}
  void report(const GateResult& result, const ReportInfo& info, std::ostream& out) const override;

 private:
  bool color_;
};

// For a GitHub job summary: one-line verdict, worst cells first, unchanged cells collapsed.
class GateMarkdownReporter : public GateReporter {
 public:
  void report(const GateResult& result, const ReportInfo& info, std::ostream& out) const override;
};

// docs/FORMATS.md's compare JSON (see gate_json.h), pretty-printed.
class GateJsonReporter : public GateReporter {
 public:
  void report(const GateResult& result, const ReportInfo& info, std::ostream& out) const override;
};

// One row per compared cell (docs/FORMATS.md, "Compare CSV"): the key's columns, the verdict and
// the numbers of the compare JSON's cells; the gate's overall verdict is the exit code.
class GateCsvReporter : public GateReporter {
 public:
  void report(const GateResult& result, const ReportInfo& info, std::ostream& out) const override;
};

// GitHub workflow commands: ::error per regression, ::warning per improvement and per cause of
// an inconclusive verdict. Printed in addition to one of the formats above (--github).
class GateGithubReporter : public GateReporter {
 public:
  void report(const GateResult& result, const ReportInfo& info, std::ostream& out) const override;
};

// "table" | "markdown" | "json" | "csv"; anything else throws SettingError naming `format`.
std::unique_ptr<GateReporter> make_reporter(const std::string& format, bool color);

// stdout is a terminal and NO_COLOR (https://no-color.org) is unset or empty.
bool stdout_wants_color();

// Workflow-command escaping (actions/toolkit command.ts): data escapes % CR LF; property values
// (title=...) also escape ':' and ','.
std::string escape_command_data(const std::string& s);
std::string escape_command_property(const std::string& s);

}  // namespace pg::gate
