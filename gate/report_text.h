// Wording and number formatting shared by the human-readable reporters (table, markdown, github),
// so a cell or a verdict reads the same in a terminal, a job summary and an annotation.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/cell_label.h"
#include "gate/gate.h"

namespace pg::gate::report_text {

// A report prints text it did not write (a model name, a note, a warning, an environment value)
// only through these, as one inert line (common/inert_text.h, docs/FORMATS.md): the cell's label
// at the name cap, anything else at the message cap.
std::string label(const CellKey& key);
std::string inert_message(const std::string& s);

std::string short_sha(const std::string& sha);  // first 7 characters, or "(none)"

std::string fmt_ms(const std::optional<double>& v);  // "12.35", "0.3123", "-"
// A cell's value in its metric's unit: fmt_ms for times, "1.50 GiB" for bytes.
std::string fmt_value(const std::optional<double>& v, const std::string& metric);
// "decode latency (tpot_ms)", "prefill (prefill_ms)", "peak memory (peak_alloc_bytes)".
std::string metric_phrase(const std::string& metric);
// The cell's label (label()), with its metric named unless it is decode latency (tpot_ms).
std::string cell_name(const CellComparison& c);
std::string fmt_ratio(const std::optional<double>& v);       // "1.065", "-"
std::string fmt_change(const std::optional<double>& ratio);  // "+6.5%", "-3.0%", "-"
std::string fmt_ci(const CellComparison& c);                 // "[1.040, 1.090]", "-"
std::string fmt_p(const std::optional<double>& v);           // "0.0002", "3.1e-07", "-"
std::string fmt_pooled(int runs, int reps);                  // "2 runs / 20 reps"

// Cells ordered worst first: highest ratio first, cells without a ratio last, then by key.
std::vector<const CellComparison*> worst_first(const std::vector<CellComparison>& cells);

std::map<CellVerdict, int> count_verdicts(const GateResult& r);

// Plural helper: plural(2, "regression") == "2 regressions".
std::string plural(int n, const std::string& noun);

// The one-line verdict without decoration, e.g. "2 regressions in decode latency (tpot_ms)",
// "no regression in decode latency (tpot_ms) across 12 cells", "inconclusive: 12 cells have no
// baseline".
std::string headline(const GateResult& r);

// Why an inconclusive verdict is inconclusive, one line per cause (empty for a clean pass).
std::vector<std::string> inconclusive_causes(const GateResult& r);

// A minimum detectable effect: "+1.25%", or "none" when no slowdown can be detected.
std::string fmt_effect(const std::optional<double>& effect);

// The gate's power and cost in one line: the minimum detectable effect of one cell and of every
// cell, the min effect and where it came from, whether drift was estimated, the sequential look,
// and the seconds measured.
std::string power_line(const GateResult& r);

// Environment fields whose values differ between base and head: field -> (base, head).
std::map<std::string, std::pair<std::string, std::string>> env_differences(const GateResult& r);

}  // namespace pg::gate::report_text
