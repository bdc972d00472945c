// The merge gate as a use case: every stored run of two commits, judged under the user's settings.
// `perfgate compare` and the web's compare page and API both call compare(), so their verdicts
// and JSON agree for the same store and settings.
#pragma once
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/gate_settings.h"
#include "gate/explanation.h"
#include "gate/gate.h"
#include "store/store.h"

namespace pg::app {

// Which of the stored runs take part.
struct CompareScope {
  std::optional<std::string> device;  // only runs measured on this device (environment "device")
  // A store of trusted runs (written only by jobs that ran no pull request's code) whose
  // replicated runs of other commits give the t test a run variance with more degrees of freedom
  // (app/trusted_history.h); `history_name` names it in the notes. None: the gate's runs alone.
  store::Store* history = nullptr;
  std::string history_name;
  // Accepted slowdowns (app/acceptance.h): those of `ref` in this list that are in force give
  // their cells the ratio they are tested against. None: every cell against the base.
  const std::vector<store::Store::Acceptance>* acceptances = nullptr;
  std::string ref;
};

struct Comparison {
  gate::GateResult result;
  // What the reader should know beside the verdict: the device filter, runs measured on a dirty
  // work tree. A front end adds its own (the revisions it resolved, the user's notes) before these.
  std::vector<std::string> notes;
  std::vector<Run> base_runs, head_runs;            // the runs judged
  std::vector<gate::CellExplanation> explanations;  // per compared cell, from the profiles
};

// The head has no stored run in the scope: nothing can be judged. Each front end says so in its
// own terms (a usage error naming --head; a 404).
struct NoHeadRuns : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// base_sha / head_sha: full commit SHAs as stored. Validates the settings first (SettingError);
// min_effect 'auto' is computed from the store's history of the head's cells. The result's
// warnings and notes name settings as `spell` writes them (common/errors.h): the CLI passes its
// flags; as they are (the web's query parameters) by default.
Comparison compare(store::Store& store, const std::string& base_sha, const std::string& head_sha,
                   const GateSettings& settings, const CompareScope& scope = {},
                   const SettingSpelling& spell = SettingError::as_is);

}  // namespace pg::app
