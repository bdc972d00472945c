// Whether base and head differ only in their export (docs/OWN_MODEL_AOTI.md, "Exports that do not
// decide the verdict"). Each AOTInductor package's run records what decides its speed besides the
// model's code (runner/lm/artifact.h, aoti_graph_sha256 ... aoti_retuned_kernels); this reads
// them on both sides and says what a reader of the verdict must know:
//   - the same exported graph and weights on both sides, but other kernels or tuning choices:
//     whatever the gate measured is the export's doing, not the code's (a warning);
//   - tuned Inductor options (coordinate descent, max-autotune) without the head replaying the
//     base's choices, or re-tuning choices it was given: two tuning results would decide the
//     verdict, so the gate refuses (inconclusive) unless `allow_unreplayed_tuning` is set.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "core/run.h"

namespace pg::app {

struct ExportCheck {
  std::vector<std::string> warnings;  // for the gate's warnings, in the order found
  bool refuse = false;                // a tuned gate the export could decide
};

// `allow_unreplayed_tuning` turns the refusal into a warning (the packages' tuning is then the
// user's to vouch for). Runs without export facts (another exporter) are not judged.
ExportCheck check_exports(const Environment& base, const Environment& head,
                          bool allow_unreplayed_tuning);

// "LABEL=VALUE, LABEL=VALUE" (an artifact fingerprint field) as LABEL -> VALUE.
std::map<std::string, std::string> per_package(const Environment& env, const std::string& field);

}  // namespace pg::app
