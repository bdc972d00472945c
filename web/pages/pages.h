// Server-rendered HTML. Each page is one function from the data its JSON twin also shows.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "web/pages/page_frame.h"
#include "web/views/models.h"

namespace pg::web {

std::string render_overview_page(const OverviewModel& m, const std::string& query);
std::string render_trend_page(const TrendModel& m);
std::string render_compare_form(const CommitCatalog& catalog, const std::string& base,
                                const std::string& head, const std::string& device,
                                const std::string& error);
// `from_series`: the series the reader came from (?series=ID), its rows highlighted; 0 for none.
std::string render_compare_page(const CompareView& v, const CommitCatalog& catalog,
                                const std::string& device, int64_t from_series = 0);
// The compare page of a pair this server holds no runs for but a stored gate of
// (web/pages/page_stored_gate.cpp): the gate's verdict, settings and cells as stored; `reason` says
// why the pair cannot be judged here.
std::string render_stored_gate_page(const store::Store::GateRecord& g, const std::string& reason,
                                    const std::string& repo_url,
                                    const std::vector<store::Store::Acceptance>& of_ref);
// The compare page's "Why cells changed" card: one collapsed section per explained cell
// (web/pages/page_compare_explain.cpp); empty when no cell has one worth showing.
std::string render_compare_explanations(const CompareView& v);
// parent: the stored commit before the run's on its branch (empty: none), for the compare link.
std::string render_run_page(const Run& run, const std::vector<int64_t>& series_ids,
                            const std::string& parent, const std::string& repo_url);
std::string render_runs_page(const std::vector<Run>& runs);

struct RegressionsModel;
std::string render_regressions_page(const RegressionsModel& m, const std::string& repo_url);
// Who triages from this page: the token field and the name the server takes it for (triage.js
// reads it), on every page with triage buttons (web/pages/page_regressions.cpp).
std::string triage_auth_form();
// Two table cells: an alert's state badge with its latest event (author, time, reason), and the
// triage buttons that state allows (triage.js posts them for the row's data-series/data-commit,
// data-gate or data-group).
std::string state_and_triage(AlertState state, const std::string& author, const std::string& at,
                             const std::string& reason);
// The compare page's regressed cells: each one's trend around base and head and its alert's
// triage (web/pages/page_compare_triage.cpp); `with_auth_form` when the page has no triage form
// yet.
std::string render_regressed_cells(const CompareView& v, bool with_auth_form);
// A stored gate's accepted slowdowns (web/pages/page_accept.cpp): those of its ref, each with a
// revoke button while in force, and for a gate of a ref that regressed the form that accepts its
// regressions (POST /api/v1/acceptances). Empty for a gate without a ref.
std::string accept_box(const store::Store::GateRecord& g,
                       const std::vector<store::Store::Acceptance>& of_ref);

// A short SHA in monospace; with a repository URL (serve --repo-url) also a link to the commit
// page there. Empty SHA: "(no commit)".
std::string commit_html(const std::string& sha, const std::string& repo_url, size_t len = 10);
// The compare page of head against base, on the series' device (so a commit measured on several
// machines compares like with like).
std::string compare_href(const std::string& base, const std::string& head,
                         const store::SeriesInfo& s);

// A gate setting for people: 0.05 -> "5%" (percent) or "0.05".
std::string pct_setting(double v, bool percent = true);

// A stored gate's settings (app/gate_record.h's settings object) for people: "alpha 1% · min
// effect 5% (fixed) · holm correction · power 95% · look 1 of 1" (web/pages/stored_gate.cpp).
std::string gate_settings_text(const nlohmann::json& settings);
// Each setting in which a stored gate differs from `page` (the options a page decided under):
// "min effect: 2% (stored gate, auto) vs 5% (this page, fixed)". Empty when they agree.
std::vector<std::string> gate_settings_differences(const nlohmann::json& stored,
                                                   const gate::GateOptions& page);

// While views are still computed: a card "Computing N series" with `why` (HTML) and a link to
// each series' own page (which computes it at once), in a page that reloads itself every 2 s.
std::string computing_card(const std::vector<store::SeriesInfo>& series, const std::string& why);

// Inline SVG sparkline of the last points' medians, dot coloured by status.
std::string sparkline_svg(const SeriesView& v, size_t max_points = 40);
// The same for any values: each mark a dot of its CSS class at its index (the compare page marks
// base and head); `label` is what a screen reader says.
struct SparkMark {
  size_t index;
  std::string css_class;
};
std::string sparkline_svg(const std::vector<double>& values, const std::vector<SparkMark>& marks,
                          const std::string& label);

}  // namespace pg::web

namespace pg::web {
// Numbers for people: 3 significant digits in the display range, bytes in KiB/MiB/GiB.
std::string fmt_num(double v);
// A relative change (after / before - 1) as every page writes it: "+30.0%".
std::string fmt_change(double relative);
std::string fmt_metric(double v, const std::string& unit);
}  // namespace pg::web
