// The overview while serve is still computing series views (docs/WEB.md, "Start-up"): it answers
// at once, lists what is not computed yet, and never shows -- or keeps as the answer -- a status
// that is not the fully computed one. The background warmer is held on chosen series through
// ServeOptions::before_warm_view, so "not computed yet" is certain, not a matter of timing.
#include <gtest/gtest.h>

#include <condition_variable>
#include <map>
#include <mutex>
#include <set>

#include "seed_data.h"
#include "store/store.h"
#include "web_test_util.h"

namespace pg::webtest {
namespace {

// Holds the warmer before it computes any series in `held` until release().
class WarmGate {
 public:
  void hold(std::set<int64_t> ids) {
    std::lock_guard lk(m_);
    held_ = std::move(ids);
  }
  void release() {
    std::lock_guard lk(m_);
    held_.clear();
    cv_.notify_all();
  }
  std::function<void(int64_t)> hook() {
    return [this](int64_t id) {
      std::unique_lock lk(m_);
      cv_.wait(lk, [&] { return !held_.count(id); });
    };
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  std::set<int64_t> held_;
};

// Releases the gate however the test ends, so the server's warmer can stop.
struct ReleaseOnExit {
  WarmGate& g;
  ~ReleaseOnExit() { g.release(); }
};

SeedSpec two_model_spec() {
  SeedSpec s;
  s.commits = 16;
  s.step_at = 8;
  s.models = {"tiny", "small"};
  s.step_models = {"tiny"};  // tiny's series regress, small's stay steady
  return s;
}

// A new database of two_model_spec's runs. It holds no kept views: every series is computed at
// the first start.
std::string seeded(const TempDir& dir, const std::string& name) {
  const std::string db = dir.file(name);
  store::Store s(db);
  s.import_runs(make_runs(two_model_spec()));
  return db;
}

// A server's options on `db` whose warmer waits at `gate` before each series it holds.
web::ServeOptions held_at(WarmGate& gate, const std::string& db) {
  web::ServeOptions opt;
  opt.db_path = db;
  opt.page_wait = std::chrono::milliseconds(100);
  opt.before_warm_view = gate.hook();
  return opt;
}

// A server on `db` whose warmer waits before each series `gate` holds -- from the start, the
// series given -- and released before the server stops, however the test ends.
struct HeldServer {
  HeldServer(const std::string& db, std::set<int64_t> held)
      : server((gate.hold(std::move(held)), held_at(gate, db))), release{gate} {}
  WarmGate gate;
  LiveServer server;
  ReleaseOnExit release;
};

// series id -> shown_status of every series the overview shows with a badge.
std::map<int64_t, std::string> shown(const nlohmann::json& overview) {
  std::map<int64_t, std::string> out;
  for (const auto& g : overview["groups"])
    for (const auto& s : g["series"]) out[s["id"]] = s["shown_status"];
  return out;
}

// What a server that computed everything before answering shows: the reference.
std::map<int64_t, std::string> fully_computed(const std::string& db) {
  web::ServeOptions opt;
  opt.db_path = db;
  LiveServer s(opt);
  EXPECT_TRUE(wait_for([&] { return get_json(s, "/api/v1/overview")["complete"] == true; }));
  return shown(get_json(s, "/api/v1/overview"));
}

// An answer while series are still computing: complete false, and not kept -- a kept body carries
// an ETag (send_cached), which a client would revalidate against and get the partial answer
// confirmed as current.
nlohmann::json partial_answer(const LiveServer& s, const std::string& target) {
  auto raw = s.client()->Get(target);
  EXPECT_TRUE(raw && raw->status == 200) << target;
  if (!raw) return nullptr;
  EXPECT_FALSE(raw->has_header("ETag")) << target;
  auto j = nlohmann::json::parse(raw->body);
  EXPECT_EQ(j["complete"], false) << target;
  return j;
}

std::set<int64_t> computing_ids(const nlohmann::json& overview) {
  std::set<int64_t> out;
  for (const auto& s : overview["computing"]) out.insert(s["id"].get<int64_t>());
  return out;
}

TEST(Warm, OverviewListsSeriesStillComputingAndNeverKeepsThatAnswer) {
  TempDir dir;
  const std::string db = seeded(dir, "warm.db");
  const auto reference = fully_computed(db);
  ASSERT_EQ(reference.size(), 4u);
  std::set<std::string> statuses;
  for (const auto& [id, st] : reference) statuses.insert(st);
  ASSERT_EQ(statuses, (std::set<std::string>{"regressed", "steady"}));

  // A fresh database holds no kept views: every series is computed at start.
  const std::string fresh = seeded(dir, "fresh.db");
  const int64_t held = reference.begin()->first;
  HeldServer h(fresh, {held});
  const LiveServer& s = h.server;

  for (int ask = 0; ask < 2; ++ask) {  // the second answer must not be a kept first one
    const auto partial = partial_answer(s, "/api/v1/overview");
    EXPECT_TRUE(partial["open_regressions"].is_null());
    const auto computing = computing_ids(partial);
    EXPECT_TRUE(computing.count(held));
    for (const auto& [id, status] : shown(partial)) {
      EXPECT_FALSE(computing.count(id)) << "series " << id << " both shown and computing";
      EXPECT_EQ(status, reference.at(id)) << "series " << id << " shown before it was final";
    }
    EXPECT_EQ(shown(partial).size() + computing.size(), reference.size());
  }
  auto page = s.client()->Get("/");
  ASSERT_TRUE(page && page->status == 200);
  EXPECT_NE(page->body.find("id=\"computing\""), std::string::npos);
  EXPECT_NE(page->body.find("http-equiv=\"refresh\""), std::string::npos);
  EXPECT_FALSE(page->has_header("ETag"));
  EXPECT_NE(page->body.find("href=\"/series/" + std::to_string(held) + "\""), std::string::npos);
  EXPECT_NE(page->body.find("counted once every series is computed"), std::string::npos);

  h.gate.release();
  ASSERT_TRUE(wait_for([&] { return get_json(s, "/api/v1/overview")["complete"] == true; }));
  const auto done = get_json(s, "/api/v1/overview");
  EXPECT_EQ(shown(done), reference);
  EXPECT_TRUE(done["computing"].empty());
  EXPECT_FALSE(done["open_regressions"].is_null());
  page = s.client()->Get("/");
  ASSERT_TRUE(page && page->status == 200);
  EXPECT_TRUE(page->has_header("ETag"));  // the complete answer is kept
  EXPECT_EQ(page->body.find("id=\"computing\""), std::string::npos);
  EXPECT_EQ(page->body.find("http-equiv=\"refresh\""), std::string::npos);
}

TEST(Warm, AfterNewDataASeriesIsComputingNotShownWithItsOldStatus) {
  TempDir dir;
  const std::string db = dir.file("grow.db");
  SeedSpec spec = two_model_spec();
  spec.step_models = {"tiny"};
  spec.step_at = -1;  // nothing regressed yet
  {
    store::Store s(db);
    s.import_runs(make_runs(spec));
  }
  HeldServer h(db, {});
  const LiveServer& s = h.server;
  ASSERT_TRUE(wait_for([&] { return get_json(s, "/api/v1/overview")["complete"] == true; }));
  const auto before = shown(get_json(s, "/api/v1/overview"));
  for (const auto& [id, status] : before) EXPECT_EQ(status, "steady") << id;

  // Four slower commits of tiny only: its series now regress; small's are unchanged.
  std::set<int64_t> all;
  for (const auto& [id, st] : before) all.insert(id);
  h.gate.hold(all);
  {
    store::Store st(db);
    SeedSpec more = spec;
    more.models = {"tiny"};
    more.commits = 4;
    more.first_commit = spec.commits;
    more.step_at = 0;
    st.import_runs(make_runs(more));
  }
  const auto partial = get_json(s, "/api/v1/overview");
  EXPECT_EQ(partial["complete"], false);
  const auto computing = computing_ids(partial);
  const auto reference_after = fully_computed(db);
  for (const auto& [id, status] : reference_after) {
    if (status != before.at(id)) {
      EXPECT_TRUE(computing.count(id)) << "series " << id;
    }
  }
  for (const auto& [id, status] : shown(partial)) EXPECT_EQ(status, reference_after.at(id)) << id;

  h.gate.release();
  ASSERT_TRUE(wait_for([&] { return get_json(s, "/api/v1/overview")["complete"] == true; }));
  EXPECT_EQ(shown(get_json(s, "/api/v1/overview")), reference_after);
}

// What a server that computed everything before answering lists: series id -> state.
std::map<int64_t, std::string> regressions_of(const nlohmann::json& regressions) {
  std::map<int64_t, std::string> out;
  for (const auto& r : regressions["regressions"]) out[r["series_id"]] = r["state"];
  return out;
}

TEST(Warm, RegressionsListWhatIsComputedAndNeverKeepThatAnswer) {
  TempDir dir;
  const std::string db = seeded(dir, "regressions.db");
  std::map<int64_t, std::string> reference;
  {
    web::ServeOptions opt;
    opt.db_path = db;
    LiveServer s(opt);
    ASSERT_TRUE(wait_for([&] { return get_json(s, "/api/v1/overview")["complete"] == true; }));
    const auto all = get_json(s, "/api/v1/regressions");
    EXPECT_EQ(all["complete"], true);
    EXPECT_TRUE(all["computing"].empty());
    reference = regressions_of(all);
  }
  ASSERT_EQ(reference.size(), 2u);  // tiny's two series regressed

  const std::string fresh = seeded(dir, "fresh.db");
  const int64_t held = reference.begin()->first;
  HeldServer h(fresh, {held});
  const LiveServer& s = h.server;
  for (int ask = 0; ask < 2; ++ask) {  // the second answer must not be a kept first one
    const auto partial = partial_answer(s, "/api/v1/regressions");
    const auto computing = computing_ids(partial);
    EXPECT_TRUE(computing.count(held));
    const auto listed = regressions_of(partial);
    EXPECT_FALSE(listed.count(held));
    for (const auto& [id, state] : listed) EXPECT_EQ(state, reference.at(id)) << id;
    EXPECT_EQ(partial["open"].get<size_t>(), listed.size());
  }
  auto page = s.client()->Get("/regressions");
  ASSERT_TRUE(page && page->status == 200);
  EXPECT_FALSE(page->has_header("ETag"));
  EXPECT_NE(page->body.find("id=\"computing\""), std::string::npos);
  EXPECT_NE(page->body.find("http-equiv=\"refresh\""), std::string::npos);
  EXPECT_NE(page->body.find("href=\"/series/" + std::to_string(held) + "\""), std::string::npos);

  h.gate.release();
  ASSERT_TRUE(wait_for([&] { return get_json(s, "/api/v1/regressions")["complete"] == true; }));
  auto done = s.client()->Get("/api/v1/regressions");
  ASSERT_TRUE(done && done->status == 200);
  EXPECT_TRUE(done->has_header("ETag"));  // the complete answer is kept
  EXPECT_EQ(regressions_of(nlohmann::json::parse(done->body)), reference);
  page = s.client()->Get("/regressions");
  ASSERT_TRUE(page && page->status == 200);
  EXPECT_TRUE(page->has_header("ETag"));
  EXPECT_EQ(page->body.find("id=\"computing\""), std::string::npos);
}

TEST(Warm, ASeriesOwnPageComputesItWhileTheWarmerHasNotReachedIt) {
  TempDir dir;
  const std::string db = seeded(dir, "own.db");
  const auto reference = fully_computed(db);
  const std::string fresh = seeded(dir, "fresh.db");
  std::set<int64_t> all;
  for (const auto& [id, st] : reference) all.insert(id);
  HeldServer h(fresh, all);  // the warmer computes nothing until released
  const LiveServer& s = h.server;
  int64_t id = 0;  // a steady one: a regressed series waits on the overview for its triage state
  for (const auto& [sid, st] : reference)
    if (st == "steady") id = sid;
  ASSERT_NE(id, 0);
  const auto view = get_json(s, "/api/v1/series/" + std::to_string(id));
  EXPECT_EQ(view["status"], reference.at(id));
  EXPECT_EQ(view["points"].size(), 16u);
  auto page = s.client()->Get("/series/" + std::to_string(id));
  ASSERT_TRUE(page && page->status == 200);
  EXPECT_EQ(page->body.find("id=\"computing\""), std::string::npos);
  // Every other series is still waiting for the warmer.
  EXPECT_EQ(computing_ids(get_json(s, "/api/v1/overview")).size(), all.size() - 1);
}

}  // namespace
}  // namespace pg::webtest
