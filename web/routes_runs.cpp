// Runs: the export documents (read) and POST /api/v1/runs (ingest from remote runners).
#include <algorithm>

#include "common/errors.h"
#include "store/run_json.h"
#include "web/http_util.h"
#include "web/models.h"
#include "web/pages.h"
#include "web/routes.h"

namespace pg::web {

namespace {

using Req = httplib::Request;
using Res = httplib::Response;

constexpr int64_t kRunsPageMax = 1000;

// Compares without an early exit, so the time taken does not tell how much of a guess was right.
bool constant_time_equal(const std::string& a, const std::string& b) {
  const size_t n = std::max(a.size(), b.size());
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= static_cast<unsigned char>(x ^ y);
  }
  return diff == 0;
}

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

void check_token(const App& app, const Req& req, Res& res) {
  if (!app.options().token)
    throw HttpError(403, "ingest is disabled: start perfgate serve with --token-file FILE");
  const std::string auth = req.get_header_value("Authorization");
  static const std::string kScheme = "Bearer ";
  if (auth.size() <= kScheme.size() ||
      !std::equal(kScheme.begin(), kScheme.end(), auth.begin(),
                  [](char a, char b) { return std::tolower(a) == std::tolower(b); })) {
    res.set_header("WWW-Authenticate", "Bearer realm=\"perfgate\"");
    throw HttpError(401, "missing bearer token (Authorization: Bearer <token>)");
  }
  if (!constant_time_equal(auth.substr(kScheme.size()), *app.options().token)) {
    res.set_header("WWW-Authenticate", "Bearer realm=\"perfgate\", error=\"invalid_token\"");
    throw HttpError(401, "invalid bearer token");
  }
}

void register_run_routes(httplib::Server& http, App& app) {
  // Paginated: ?limit=N (1..1000, default 1000) runs with ids after ?after=ID (the cursor, 0 by
  // default), oldest first, in the export shape without samples, plus "next": the cursor of the
  // next page, null on the last one. A store of fewer than 1,000 runs answers in one page, as
  // before pagination existed.
  http.Get("/api/v1/runs", guarded([&app](const Req& req, Res& res) {
             int64_t limit = kRunsPageMax, after = 0;
             if (auto v = query_param(req, "limit", 8)) {
               auto n = parse_id(*v);
               if (!n || *n > kRunsPageMax)
                 throw HttpError(400,
                                 "limit must be an integer in 1.." + std::to_string(kRunsPageMax));
               limit = *n;
             }
             if (auto v = query_param(req, "after", 20)) {
               auto n = parse_id(*v);
               if (!n && *v != "0") throw HttpError(400, "after must be a run id (the cursor)");
               after = n.value_or(0);
             }
             const uint64_t gen = app.generation();
             const std::string key = "runs/" + std::to_string(after) + "/" + std::to_string(limit);
             auto body = app.body_cache().get(key, gen, [&] {
               // One more than asked tells whether a next page exists.
               auto runs = app.store().list_runs_page(after, limit + 1, {true, false});
               nlohmann::json next = nullptr;
               if (static_cast<int64_t>(runs.size()) > limit) {
                 runs.pop_back();
                 next = runs.back().id;
               }
               nlohmann::json arr = nlohmann::json::array();
               for (const auto& r : runs) arr.push_back(run_to_json(r, /*with_samples=*/false));
               return std::make_shared<const CachedBody>(
                   nlohmann::json{{"runs", std::move(arr)}, {"next", next}}.dump(), kJsonType);
             });
             send_cached(req, res, *body);
           }));

  http.Get(R"(/api/v1/runs/([^/]+))", guarded([&app](const Req& req, Res& res) {
             const int64_t id = id_param(req, "run");
             auto run = app.store().load_run(id, {true, true});
             if (!run) throw HttpError(404, "no run with id " + std::to_string(id));
             send_json(req, res, 200, run_to_json(*run, /*with_samples=*/true));
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
             Store& s = app.store();
             auto run = s.load_run(id, {true, true});
             if (!run) throw HttpError(404, "no run with id " + std::to_string(id));
             std::vector<int64_t> series;
             for (const auto& c : run->cells)
               series.push_back(s.find_series(c.key, run->env).value_or(0));
             send_text(
                 req, res, 200,
                 render_run_page(*run, series, parent_commit(app, *run), app.options().repo_url),
                 kHtmlType);
           }));

  // A content-reader handler: the token is checked before the body is read, and cpp-httplib's
  // own body reading (which would cap a body sent as form data at 8 KiB) is bypassed.
  http.Post("/api/v1/runs", [&app](const Req& req, Res& res, const httplib::ContentReader& read) {
    std::string body;
    bool drained = false, complete = false;
    auto read_body = [&] {
      if (drained) return;
      drained = true;
      complete = read([&](const char* data, size_t len) {
        body.append(data, len);
        return true;  // the server's payload limit stops an oversized body (413)
      });
    };
    run_guarded(req, res, [&] {
      try {
        check_token(app, req, res);
      } catch (const HttpError&) {
        read_body();  // read and drop, so the connection stays in step; nothing is stored
        throw;
      }
      read_body();
      if (res.status == 413) throw HttpError(413, "request body too large");
      if (!complete) throw HttpError(400, "the request body could not be read to its end");
      // Malformed JSON and schema violations: UsageError with the validator's reason (400).
      std::vector<Run> runs = runs_from_json(body, "request body");
      if (runs.empty()) throw HttpError(400, "the document holds no runs");
      const auto imported = app.store().import_runs(runs);  // all or nothing
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
