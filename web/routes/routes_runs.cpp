// Runs: the export documents (read) and POST /api/v1/runs (ingest from remote runners).
#include <algorithm>
#include <cstdio>

#include "common/errors.h"
#include "common/inert_text.h"
#include "store/run_json.h"
#include "web/http/json_limits.h"
#include "web/pages/html.h"
#include "web/pages/pages.h"
#include "web/routes/auth.h"
#include "web/routes/http_util.h"
#include "web/routes/routes.h"
#include "web/views/models.h"

namespace pg::web {

namespace {

using Req = httplib::Request;
using Res = httplib::Response;

constexpr int64_t kRunsPageMax = 1000;

// The stored commit before the run's: the next older one in history order on the run's branch
// (any branch when the run names none).
std::string parent_commit(App& app, const Run& run) {
  if (!run.git.commit) return "";
  auto catalog = commit_catalog(app, app.generation());
  const std::string branch = run.git.branch.value_or("");
  bool seen = false;
  for (const auto& c : catalog->commits) {  // newest first
    if (c.sha == *run.git.commit) {
      seen = true;
      continue;
    }
    if (seen && (branch.empty() || branch == "detached" || c.branch == branch)) return c.sha;
  }
  return "";
}

}  // namespace

// The database refused the write for lack of space or an I/O error: the client can retry later
// or elsewhere, and must learn that nothing was stored (507 Insufficient Storage, 503).
void throw_storage_error(const std::exception& e) {
  const std::string what = e.what();
  std::fprintf(stderr, "perfgate serve: ingest not stored: %s\n",
               inert_text(what, kInertMessageChars).c_str());
  if (what.find("database or disk is full") != std::string::npos)
    throw HttpError(
        507, "the server's disk is full: what was sent is not stored; retry once space is freed");
  if (what.find("disk I/O error") != std::string::npos ||
      what.find("attempt to write a readonly database") != std::string::npos)
    throw HttpError(
        503, "the server could not write its database (" + what + "): what was sent is not stored");
  throw;
}

std::string read_authorized_body(App& app, const Req& req, Res& res,
                                 const httplib::ContentReader& read) {
  require(app, req, res, Permission::ingest);
  const size_t max_body = app.options().max_body_bytes;
  std::string body;
  bool too_large = false;
  const bool complete = read([&](const char* data, size_t len) {
    if (len > max_body - body.size()) return !(too_large = true);
    body.append(data, len);
    return true;
  });
  if (too_large || res.status == 413) throw HttpError(413, "request body too large");
  if (!complete) throw HttpError(400, "the request body could not be read to its end");
  if (auto at = json_too_deep_at(body))
    throw HttpError(400, "request body: JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
                             " levels (at byte " + std::to_string(*at) + ")");
  return body;
}

namespace {

// A run as the JSON API shows it: a stored config too deep or too large to embed safely is
// replaced by a note (web/http/json_limits.h).
Run capped(Run run) {
  run.config_json = config_for_api(run.config_json);
  return run;
}

}  // namespace

void register_run_routes(httplib::Server& http, App& app) {
  // Paginated: ?limit=N (1..1000, default 1000) runs with ids after ?after=ID (the cursor, 0 by
  // default), oldest first, in the export shape without samples, plus "next": the cursor of the
  // next page, null on the last one. A store of fewer than 1,000 runs answers in one page, as
  // before pagination existed.
  http.Get("/api/v1/runs", guarded([&app](const Req& req, Res& res) {
             const PageParams page = page_params(req, kRunsPageMax, kRunsPageMax);
             const int64_t after = page.after, limit = page.limit;
             const uint64_t gen = app.generation();
             const std::string key = "runs/" + std::to_string(after) + "/" + std::to_string(limit);
             auto body = app.body_cache().get(key, gen, [&] {
               // One more than asked tells whether a next page exists.
               auto runs = app.store().list_runs_page(after, limit + 1, {true, false});
               for (Run& r : runs) r = capped(std::move(r));
               nlohmann::json next = nullptr;
               if (static_cast<int64_t>(runs.size()) > limit) {
                 runs.pop_back();
                 next = runs.back().id;
               }
               nlohmann::json arr = nlohmann::json::array();
               for (const auto& r : runs)
                 arr.push_back(store::run_to_json(r, /*with_samples=*/false));
               return std::make_shared<const CachedBody>(
                   nlohmann::json{{"runs", std::move(arr)}, {"next", next}}.dump(), kJsonType);
             });
             send_cached(req, res, *body);
           }));

  http.Get(R"(/api/v1/runs/([^/]+))", guarded([&app](const Req& req, Res& res) {
             const int64_t id = id_param(req, "run");
             auto run = app.store().load_run(id, {true, true});
             if (!run) throw HttpError(404, "no run with id " + std::to_string(id));
             send_json(req, res, 200,
                       store::run_to_json(capped(std::move(*run)), /*with_samples=*/true));
           }));

  http.Get("/runs", guarded([&app](const Req& req, Res& res) {
             const uint64_t gen = app.generation();
             auto body = app.body_cache().get("runs-page", gen, [&] {
               return std::make_shared<const CachedBody>(
                   render_runs_page(app.store().list_runs({false, false})), kHtmlType);
             });
             send_cached(req, res, *body);
           }));

  http.Get(R"(/runs/([^/]+))", guarded([&app](const Req& req, Res& res) {
             const int64_t id = id_param(req, "run");
             store::Store& s = app.store();
             auto run = s.load_run(id, {true, true});
             if (!run) throw HttpError(404, "no run with id " + std::to_string(id));
             std::vector<int64_t> series;
             for (const auto& c : run->cells)
               series.push_back(s.find_series(c.key, run->env).value_or(0));
             send_text(req, res, 200,
                       render_run_page(*run, series, parent_commit(app, *run),
                                       app.repo_url(app.generation())),
                       kHtmlType);
           }));

  // A content-reader handler: cpp-httplib's own body reading (which would cap a body sent as form
  // data at 8 KiB) is bypassed. The credential was already checked before the body was read
  // (server.cpp admits the body only then); it is checked here again for the answer's sake: a
  // refused request arrives without its body.
  http.Post("/api/v1/runs", [&app](const Req& req, Res& res, const httplib::ContentReader& read) {
    run_guarded(req, res, [&] {
      const std::string body = read_authorized_body(app, req, res, read);
      // Malformed JSON and schema violations: UsageError with the validator's reason (400).
      std::vector<Run> runs = store::runs_from_json(body, "request body");
      if (runs.empty()) throw HttpError(400, "the document holds no runs");
      std::vector<store::Store::Imported> imported;
      try {
        imported = app.store().import_runs(runs);  // all or nothing
      } catch (const RuntimeFailure& e) {
        throw_storage_error(e);
      }
      app.note_write();
      nlohmann::json out = nlohmann::json::array();
      size_t inserted = 0;
      for (const auto& i : imported) {
        out.push_back({{"id", i.id}, {"inserted", i.inserted}});
        inserted += i.inserted ? 1 : 0;
      }
      send_json(
          req, res, inserted ? 201 : 200,
          {{"runs", out}, {"inserted", inserted}, {"duplicates", imported.size() - inserted}});
    });
  });
}

}  // namespace pg::web
