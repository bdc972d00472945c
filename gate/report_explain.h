// The explanation of a cell (gate/explanation.h) as lines of text, shared by the table and the
// markdown reports, and as the compare JSON's `explain` object (docs/FORMATS.md).
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gate/explanation.h"
#include "gate/gate.h"

namespace pg::gate::report_explain {

// Every op or kernel name a report prints goes through here: names come from the user's model.
// The one call site of the sanitiser for untrusted text (pg::inert_text once common/inert_text.h
// is in main; until then the same rule in short: one line, no control characters, 200 chars).
std::string shown_name(const std::string& raw);

// "decode step: 312 -> 336 ops (+24: aten::mul x12, aten::sigmoid x12)"; empty: none changed.
std::vector<std::string> counter_lines(const CellExplanation& e);
// "decode step: aten::mul 0.0000 -> 0.0310 ms (+0.0310 ms, 41% of the tpot change), 0 -> 12 calls"
// for a regressed cell's decode step only (profiled time is one noisy sequence).
std::vector<std::string> growth_lines(const CellExplanation& e);
// Where a regressed cell's decode step went, beside growth_lines: the rows not listed there
// ("the other 40 kernels -0.0003 ms"), the time between kernels in the timed runs and the part of
// its change that the added or removed kernels' launch gaps predict, and how much of the tpot
// change the kernels' time and those launch gaps add up to (gate/explanation.h, TimedGaps).
std::vector<std::string> accounting_lines(const CellExplanation& e);
// "decode step: appeared aten::sigmoid x12, aten::mul x12" / "... disappeared ..."
std::vector<std::string> appeared_lines(const CellExplanation& e);
// Why the counters are shown for a cell the timing test did not flag, or empty for a
// regression: "exact counters changed; timing verdict unchanged (underpowered: MDE +45.0%)".
std::string label(const CellExplanation& e, const CellComparison& c, double min_effect);

// True when the cell's explanation is worth a section: a regression with a profile on both
// sides, or any cell whose exact counters changed.
bool worth_showing(const CellExplanation& e);

// Every line of a cell's explanation in report order: counters, appeared/disappeared, growth.
std::vector<std::string> lines(const CellExplanation& e);

nlohmann::json to_json(const CellExplanation& e);

// The explanation of `key`, or null.
const CellExplanation* find(const std::vector<CellExplanation>& all, const CellKey& key);

}  // namespace pg::gate::report_explain
