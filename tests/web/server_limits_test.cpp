// A server one client cannot take down: each limit of web/http/request_reader.h and
// web/http/guarded_server.h against a real server on loopback, driven by raw sockets.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <atomic>
#include <fstream>

#include "raw_client.h"
#include "store/run_json.h"
#include "store/store.h"
#include "web_fixture.h"

namespace pg::webtest {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

class ServerLimits : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = dir_.file("limits.db");
    store::Store s(db_);
    SeedSpec spec = standard_spec();
    spec.commits = 3;
    s.import_runs(make_runs(spec));
  }
  void start(std::function<void(web::ServeOptions&)> tweak = {}) {
    server_.reset();
    web::ServeOptions opt;
    opt.db_path = db_;
    opt.token = kToken;
    opt.max_body_bytes = 256 * 1024;
    if (tweak) tweak(opt);
    server_ = std::make_unique<LiveServer>(opt);
  }
  int port() const { return server_->port(); }
  int64_t stored_runs() { return store::Store(db_).run_count(); }
  static std::string new_run_doc(int commit, size_t runs = 1) {
    SeedSpec spec = standard_spec();
    spec.first_commit = 2000;
    std::vector<pg::Run> v;
    for (size_t i = 0; i < runs; ++i) v.push_back(make_run(spec, commit + int(i), 0, 0));
    return store::runs_to_json(v, true);
  }
  static std::string post_head(const std::string& extra) {
    return "POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + extra +
           "\r\n";
  }
  static std::string auth() { return std::string("Authorization: Bearer ") + kToken + "\r\n"; }
  static std::string chunked(const std::string& body, size_t chunk = 4096) {
    std::string out;
    char size[32];
    for (size_t i = 0; i < body.size(); i += chunk) {
      const std::string part = body.substr(i, chunk);
      std::snprintf(size, sizeof size, "%zx\r\n", part.size());
      out += size + part + "\r\n";
    }
    return out + "0\r\n\r\n";
  }
  // /healthz from the well-behaved client's own address; its status, 0 on no answer.
  int healthz(std::chrono::milliseconds timeout = 5s) {
    RawConn c(port());
    if (!c.send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")) return 0;
    return c.read_response(timeout).status;
  }

  TempDir dir_;
  std::string db_;
  std::unique_ptr<LiveServer> server_;
};

size_t peak_rss_kib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoul(line.substr(6));
  return 0;
}

TEST_F(ServerLimits, ChunkedIngestIsStoredAndOneOverTheCapIs413) {
  start([](web::ServeOptions& o) { o.max_body_bytes = 64 * 1024; });
  const int64_t before = stored_runs();
  {
    RawConn c(port());
    const std::string body = new_run_doc(1);
    ASSERT_TRUE(c.send(post_head(auth() + "Transfer-Encoding: chunked\r\n") + chunked(body)));
    auto r = c.read_response();
    EXPECT_EQ(r.status, 201) << r.head << r.body;
  }
  EXPECT_EQ(stored_runs(), before + 1);
  // Bigger than --max-body (64 KiB), which only the de-chunked body can tell: no header says so.
  const std::string big = new_run_doc(10, 40);
  ASSERT_GT(big.size(), 64u * 1024);
  RawConn c(port());
  ASSERT_TRUE(c.ok());
  c.send(post_head(auth() + "Transfer-Encoding: chunked\r\n") + chunked(big));
  auto r = c.read_response();
  EXPECT_EQ(r.status, 413) << r.head << r.body;
  EXPECT_NE(r.body.find("too large"), std::string::npos) << r.body;
  EXPECT_EQ(stored_runs(), before + 1);
  EXPECT_EQ(healthz(), 200);
}

TEST_F(ServerLimits, FixedBodyOverTheCapIs413BeforeItIsSent) {
  start();
  RawConn c(port());
  // The head announces 1 GiB; the answer comes without a byte of the body sent.
  ASSERT_TRUE(c.send(post_head(auth() + "Content-Length: 1073741824\r\n")));
  auto r = c.read_response(5s);
  EXPECT_EQ(r.status, 413) << r.head;
  EXPECT_NE(r.head.find("Connection: close"), std::string::npos) << r.head;
}

TEST_F(ServerLimits, UnauthenticatedChunkedUploadIsRefusedUnreadAndNotBuffered) {
  start([](web::ServeOptions& o) { o.max_body_bytes = 64u << 20; });
  const size_t rss_before = peak_rss_kib();
  RawConn c(port());
  ASSERT_TRUE(c.send(post_head("Transfer-Encoding: chunked\r\n")));
  // Push up to 512 MiB of chunks without waiting for the server; it answers 401 from the head.
  const std::string chunk = "100000\r\n" + std::string(1u << 20, 'x') + "\r\n";
  size_t pushed = 0;
  const auto deadline = Clock::now() + 20s;
  while (pushed < (512u << 20) && Clock::now() < deadline) {
    if (c.received().find("\r\n\r\n") != std::string::npos) break;
    const size_t n = c.send_some(chunk);
    pushed += n;
    if (n == 0) c.read_until("\r\n\r\n", 50ms);
  }
  auto r = c.read_response(5s);
  EXPECT_EQ(r.status, 401) << r.head << r.body;
  EXPECT_NE(r.body.find("bearer token"), std::string::npos) << r.body;
  EXPECT_TRUE(c.closed_within(5s));
  // The server read none of it into memory: this process's peak grew by far less than a chunk
  // budget (the kernel's socket buffers hold a few MiB).
  EXPECT_LT(peak_rss_kib() - rss_before, 32u * 1024) << "pushed " << pushed << " bytes";
  EXPECT_EQ(healthz(), 200);
}

TEST_F(ServerLimits, Expect100ContinueIsAnsweredOnlyAfterTheTokenIsChecked) {
  start();
  const std::string body = new_run_doc(3);
  const std::string cl = "Content-Length: " + std::to_string(body.size()) + "\r\n";
  {
    RawConn c(port());
    ASSERT_TRUE(c.send(post_head("Expect: 100-continue\r\n" + cl)));
    auto r = c.read_response(5s);
    EXPECT_EQ(r.status, 401) << r.head;  // the final answer, with no 100 before it
    EXPECT_EQ(c.received().find("100 Continue"), std::string::npos);
  }
  {
    RawConn c(port());
    ASSERT_TRUE(c.send(post_head(auth() + "Expect: 100-continue\r\n" + cl)));
    auto cont = c.read_response(5s);
    EXPECT_EQ(cont.status, 100) << cont.head;
    ASSERT_TRUE(c.send(body));
    auto r = c.read_response(10s);
    EXPECT_EQ(r.status, 201) << r.head << r.body;
  }
}

TEST_F(ServerLimits, AmbiguousFramingIs400) {
  start();
  const std::string body = new_run_doc(4);
  const std::string n = std::to_string(body.size());
  const std::vector<std::pair<std::string, int>> cases = {
      {"Content-Length: " + n + "\r\nContent-Length: " + n + "\r\n", 400},
      {"Content-Length: " + n + "\r\nContent-Length: 5\r\n", 400},
      {"Content-Length: " + n + ", " + n + "\r\n", 400},
      {"Content-Length: -1\r\n", 400},
      {"Content-Length: " + n + "\r\nTransfer-Encoding: chunked\r\n", 400},
      {"Transfer-Encoding: gzip, chunked\r\n", 501},
      {"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", 400},
  };
  const int64_t before = stored_runs();
  for (const auto& [headers, status] : cases) {
    RawConn c(port());
    c.send(post_head(auth() + headers) + body);
    auto r = c.read_response(5s);
    EXPECT_EQ(r.status, status) << headers << "\n" << r.head << r.body;
    EXPECT_NE(r.body.find("\"error\""), std::string::npos) << r.body;
  }
  EXPECT_EQ(stored_runs(), before);
  // A bare LF and a folded header line are refused too.
  RawConn lf(port());
  lf.send("GET /healthz HTTP/1.1\nHost: x\r\n\r\n");
  EXPECT_EQ(lf.read_response(5s).status, 400);
  RawConn fold(port());
  fold.send("GET /healthz HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n");
  EXPECT_EQ(fold.read_response(5s).status, 400);
}

TEST_F(ServerLimits, AHeadDribbledLineByLineIsCutOffAtTheHeaderTimeout) {
  start([](web::ServeOptions& o) { o.limits.header_timeout = 1s; });
  RawConn c(port(), "127.0.0.2");
  const auto t0 = Clock::now();
  c.send("GET /healthz HTTP/1.1\r\n");
  int sent = 0;
  while (!c.closed_within(200ms) && Clock::now() - t0 < 10s)
    c.send("X-Slow-" + std::to_string(++sent) + ": 1\r\n");  // a line every 200 ms, forever
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_GE(s, 0.9);
  EXPECT_LT(s, 3.0) << "closed after " << s << " s";
  EXPECT_NE(c.received().find(" 408 "), std::string::npos) << c.received();
}

TEST_F(ServerLimits, SlowClientsDoNotStarveOthers) {
  // Two handler slots and long timeouts: under the old thread-pool model 2 slow clients blocked
  // everyone for the whole header timeout. 24 dribbling clients from other addresses now hold only
  // their own connections.
  start([](web::ServeOptions& o) {
    o.threads = 2;
    o.limits.header_timeout = 60s;
  });
  std::vector<std::unique_ptr<RawConn>> slow;
  for (int i = 0; i < 24; ++i) {
    slow.push_back(std::make_unique<RawConn>(port(), "127.0.0." + std::to_string(2 + i % 8)));
    ASSERT_TRUE(slow.back()->send("GET / HTTP/1.1\r\nHost: x\r\n"));
  }
  for (int round = 0; round < 5; ++round) {
    for (auto& s : slow) s->send("X-Slow: " + std::to_string(round) + "\r\n");
    const auto t0 = Clock::now();
    EXPECT_EQ(healthz(5s), 200);
    EXPECT_LT(Clock::now() - t0, 2s);
  }
}

TEST_F(ServerLimits, ConnectionsPerClientAreCapped) {
  start([](web::ServeOptions& o) { o.limits.max_connections_per_client = 4; });
  std::vector<std::unique_ptr<RawConn>> held;
  for (int i = 0; i < 4; ++i) {
    held.push_back(std::make_unique<RawConn>(port(), "127.0.0.3"));
    ASSERT_TRUE(held.back()->ok());
  }
  // The server has seen all four once each answered a request on it.
  for (auto& h : held) {
    h->send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
    EXPECT_EQ(h->read_response().status, 200);
  }
  RawConn fifth(port(), "127.0.0.3");
  fifth.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  auto r = fifth.read_response();
  EXPECT_EQ(r.status, 503) << r.head << r.body;
  EXPECT_NE(r.body.find("too many connections from 127.0.0.3"), std::string::npos) << r.body;
  EXPECT_EQ(healthz(), 200);  // another address is not affected
  held.pop_back();            // one closes: the address may connect again
  EXPECT_TRUE(wait_for([&] {
    RawConn again(port(), "127.0.0.3");
    again.send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    return again.read_response().status == 200;
  }));
}

TEST_F(ServerLimits, AnIdleKeptAliveConnectionIsClosedAfterTheIdleTimeout) {
  start([](web::ServeOptions& o) { o.limits.idle_timeout = 500ms; });
  RawConn c(port());
  c.send("GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(c.read_response().status, 200);
  const auto t0 = Clock::now();
  EXPECT_TRUE(c.closed_within(5s));
  EXPECT_GE(Clock::now() - t0, 400ms);
}

TEST_F(ServerLimits, ABodyTooSlowForTheRequestTimeoutIs408) {
  start([](web::ServeOptions& o) { o.limits.request_timeout = 1s; });
  RawConn c(port());
  c.send(post_head(auth() + "Content-Length: 100000\r\n") + "{");
  auto r = c.read_response(5s);
  EXPECT_EQ(r.status, 408) << r.head;
}

TEST_F(ServerLimits, DeeplyNestedJsonIs400WithTheDepthAndNothingStored) {
  start();
  const int64_t before = stored_runs();
  std::string doc = new_run_doc(5);
  const std::string deep = std::string(100, '[') + std::string(100, ']');
  doc.insert(doc.find("\"config\":") + 9, deep + ",\"x\":");  // still one valid config value
  auto c = server_->client();
  auto r = c->Post("/api/v1/runs", {{"Authorization", std::string("Bearer ") + kToken}}, doc,
                   "application/json");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->status, 400) << r->body;
  EXPECT_NE(r->body.find("nested deeper than 64 levels"), std::string::npos) << r->body;
  EXPECT_EQ(stored_runs(), before);
}

TEST_F(ServerLimits, AStoredDeepOrHugeConfigRendersSmallAndTheApiStaysUp) {
  int64_t deep_id = 0, wide_id = 0;
  {
    store::Store s(db_);
    SeedSpec spec = standard_spec();
    spec.first_commit = 3000;
    pg::Run deep = make_run(spec, 1, 0, 0);
    deep.config_json = std::string(70000, '[') + std::string(70000, ']');
    pg::Run wide = make_run(spec, 2, 0, 0);
    wide.config_json = "[" + std::string(4u << 20, '1') + "]";
    auto ids = s.import_runs({deep, wide});
    deep_id = ids[0].id;
    wide_id = ids[1].id;
  }
  start();
  auto c = server_->client();
  for (int64_t id : {deep_id, wide_id}) {
    auto page = c->Get("/runs/" + std::to_string(id));
    ASSERT_TRUE(page);
    EXPECT_EQ(page->status, 200);
    EXPECT_LT(page->body.size(), 256u * 1024) << "run " << id;
    EXPECT_NE(page->body.find("shown as stored"), std::string::npos);
    auto api = c->Get("/api/v1/runs/" + std::to_string(id));
    ASSERT_TRUE(api);
    EXPECT_EQ(api->status, 200);
    EXPECT_NE(api->body.find("config left out"), std::string::npos);
  }
  EXPECT_EQ(c->Get("/api/v1/runs")->status, 200);
}

TEST_F(ServerLimits, DiskFullOnIngestIs507AndNothingIsStored) {
  start();
  const int64_t before = stored_runs();
  const std::string doc = new_run_doc(50, 30);  // hundreds of KiB once stored
  // A file-size limit stands in for a full disk: the database's writes past it fail with EFBIG
  // (SIGXFSZ ignored, as `perfgate serve` does).
  struct sigaction ign {
  }, old{};
  ign.sa_handler = SIG_IGN;
  sigaction(SIGXFSZ, &ign, &old);
  rlimit saved{};
  getrlimit(RLIMIT_FSIZE, &saved);
  rlimit tight = saved;
  tight.rlim_cur = 48 * 1024;  // the write-ahead log starts empty and soon passes it
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &tight), 0);
  auto c = server_->client();
  auto r = c->Post("/api/v1/runs", {{"Authorization", std::string("Bearer ") + kToken}}, doc,
                   "application/json");
  setrlimit(RLIMIT_FSIZE, &saved);
  sigaction(SIGXFSZ, &old, nullptr);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->status == 507 || r->status == 503) << r->status << " " << r->body;
  EXPECT_NE(r->body.find("not stored"), std::string::npos) << r->body;
  EXPECT_EQ(stored_runs(), before);
  EXPECT_EQ(healthz(), 200);
  auto again = c->Post("/api/v1/runs", {{"Authorization", std::string("Bearer ") + kToken}}, doc,
                       "application/json");
  ASSERT_TRUE(again);
  EXPECT_EQ(again->status, 201) << again->body;  // space is back: the same run goes in
}

}  // namespace
}  // namespace pg::webtest
