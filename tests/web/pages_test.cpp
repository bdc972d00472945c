// The HTML pages against a live server: everything from git or a client arrives escaped.
#include <gtest/gtest.h>

#include <regex>

#include "web/pages/html.h"
#include "web_fixture.h"

namespace pg::webtest {
namespace {

class Pages : public WebFixture {
 protected:
  static std::string page(const std::string& target, int status = 200) {
    auto r = get(target);
    if (!r) return "";
    EXPECT_EQ(r->status, status) << target;
    EXPECT_NE(r->get_header_value("Content-Type").find("text/html"), std::string::npos) << target;
    EXPECT_NE(r->get_header_value("Content-Security-Policy").find("script-src 'self'"),
              std::string::npos)
        << target;
    return r->body;
  }
  // No script element other than the page's own: external assets and JSON data islands.
  static void expect_only_own_scripts(const std::string& html, const std::string& target) {
    const std::regex open(R"(<script\b([^>]*)>)", std::regex::icase);
    for (auto it = std::sregex_iterator(html.begin(), html.end(), open);
         it != std::sregex_iterator(); ++it) {
      const std::string attrs = (*it)[1];
      EXPECT_TRUE(attrs.find("src=\"/static/") != std::string::npos ||
                  attrs.find("type=\"application/json\"") != std::string::npos)
          << target << ": unexpected script element <script" << attrs << ">";
    }
    EXPECT_EQ(html.find("<script>alert"), std::string::npos) << target;
    EXPECT_EQ(html.find("<img src=x"), std::string::npos) << target;
    EXPECT_EQ(html.find("<b>"), std::string::npos) << target;
  }
  static int64_t series_id(int batch) {
    const nlohmann::json list = get_json("/api/v1/series");
    for (const auto& s : list["series"])
      if (s["env"]["device"] == "Seed GPU 0" && s["key"]["batch_size"] == batch) return s["id"];
    return -1;
  }
};

TEST(Escaping, HtmlEscapeCoversTextAndAttributes) {
  EXPECT_EQ(web::html_escape("<a href=\"x\" onclick='y'>&</a>"),
            "&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;");
}

TEST(Escaping, JsonForScriptCannotCloseTheScriptElement) {
  nlohmann::json j = {{"s", "</script><script>alert(1)</script>\u2028\u2029&"}};
  const std::string out = web::json_for_script(j);
  EXPECT_EQ(out.find('<'), std::string::npos);
  EXPECT_EQ(out.find('>'), std::string::npos);
  EXPECT_EQ(out.find('&'), std::string::npos);
  EXPECT_EQ(out.find("\xE2\x80\xA8"), std::string::npos);
  EXPECT_EQ(out.find("\xE2\x80\xA9"), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(out), j);  // still the same JSON
}

TEST(Escaping, InvalidUtf8DoesNotThrow) {
  nlohmann::json j = {{"s", std::string("bad \xff\xfe byte")}};
  EXPECT_NO_THROW(web::json_for_script(j));
}

TEST_F(Pages, OverviewListsEverySeriesGroupedWithBadgesAndSparklines) {
  const std::string html = page("/");
  EXPECT_NE(html.find("Seed GPU 0"), std::string::npos);
  EXPECT_NE(html.find("Seed GPU 5"), std::string::npos);
  EXPECT_NE(html.find("badge regressed"), std::string::npos);
  EXPECT_NE(html.find("<svg class=\"spark\""), std::string::npos);
  const int64_t id = series_id(1);
  ASSERT_GT(id, 0);
  EXPECT_NE(html.find("href=\"/series/" + std::to_string(id) + "\""), std::string::npos) << id;
  // The hostile subject of the latest commit of a series is shown escaped.
  expect_only_own_scripts(html, "/");
}

TEST_F(Pages, OverviewFiltersStayInTheUrlAndAreEscaped) {
  const std::string html = page("/?batch=4&model=%22%3E%3Cscript%3Ealert(1)%3C/script%3E");
  EXPECT_NE(html.find("0 of 4 series"), std::string::npos);
  EXPECT_NE(html.find("&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  expect_only_own_scripts(html, "/?model=...");
  EXPECT_NE(page("/?batch=4").find("2 of 4 series"), std::string::npos);
  page("/?batch=x", 400);
}

TEST_F(Pages, TrendPageEmbedsEscapedJsonAndPlotly) {
  const std::string t = "/series/" + std::to_string(series_id(1));
  const std::string html = page(t);
  // plotly.js is named for trend.js to load after the first paint, not loaded by the head.
  EXPECT_NE(html.find("data-plotly=\"/static/plotly.min.js?v="), std::string::npos);
  EXPECT_EQ(html.find("<script defer src=\"/static/plotly.min.js"), std::string::npos);
  EXPECT_NE(html.find("id=\"trend-data\""), std::string::npos);
  EXPECT_NE(html.find("\\u003cscript\\u003ealert(1)\\u003c/script\\u003e"), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);  // the table
  expect_only_own_scripts(html, t);
  // Every script element the page opens is closed by its own tag, not by data.
  size_t opens = 0, closes = 0;
  for (size_t p = 0; (p = html.find("<script", p)) != std::string::npos; ++p) ++opens;
  for (size_t p = 0; (p = html.find("</script>", p)) != std::string::npos; ++p) ++closes;
  EXPECT_EQ(opens, closes);
  for (const char* m : {"prefill_ms", "decode_tok_s", "peak_alloc_bytes"}) page(t + "?metric=" + m);
  page(t + "?metric=%3Cx%3E", 400);
  page("/series/abc", 400);
  page("/series/424242", 404);
}

TEST_F(Pages, OverlayTrendPage) {
  const std::string html =
      page("/trend?ids=" + std::to_string(series_id(1)) + "&ids=" + std::to_string(series_id(4)));
  EXPECT_NE(html.find("2 series overlaid"), std::string::npos);
  page("/trend?ids=1;2", 400);
}

TEST_F(Pages, ComparePageShowsTheSortableTableAndEscapedBranches) {
  const std::string form = page("/compare");
  EXPECT_NE(form.find("feat/&quot;quoted&quot;&amp;&#39;branch&#39;&lt;b&gt;"), std::string::npos);
  expect_only_own_scripts(form, "/compare");
  const std::string html = page("/compare?base=" + shas_[7] + "&head=" + shas_[8]);
  EXPECT_NE(html.find("id=\"compare-table\" class=\"sortable\""), std::string::npos);
  EXPECT_NE(html.find(">regression</span>"), std::string::npos);
  EXPECT_NE(html.find("/static/compare.js"), std::string::npos);
  // The gate's power: its minimum detectable effect, per gate and per cell.
  EXPECT_NE(html.find("id=\"gate-power\""), std::string::npos);
  EXPECT_NE(html.find("Minimum detectable effect"), std::string::npos);
  EXPECT_NE(html.find(">MDE</th>"), std::string::npos);
  const std::string bad = page("/compare?base=%3Cscript%3Ealert(1)%3C/script%3E&head=main", 404);
  EXPECT_NE(bad.find("unknown revision &#39;&lt;script&gt;"), std::string::npos);
  expect_only_own_scripts(bad, "/compare?base=<script>");
}

TEST_F(Pages, RunPageShowsTheFingerprintCellsAndSamples) {
  auto list = get_json("/api/v1/runs");
  const int64_t id = list["runs"][2]["id"];  // the commit whose subject is a script tag
  const std::string html = page("/runs/" + std::to_string(id));
  EXPECT_NE(html.find(shas_[2]), std::string::npos);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_NE(html.find("Seed CPU"), std::string::npos);
  EXPECT_NE(html.find("580.65"), std::string::npos);
  EXPECT_NE(html.find("<svg class=\"dist\""), std::string::npos);
  expect_only_own_scripts(html, "/runs/id");
  const std::string quoted = page("/runs/" + std::to_string(list["runs"][1]["id"].get<int64_t>()));
  EXPECT_NE(quoted.find("feat/&quot;quoted&quot;&amp;&#39;branch&#39;&lt;b&gt;"),
            std::string::npos);
  EXPECT_NE(page("/runs").find("stored runs"), std::string::npos);
}

}  // namespace
}  // namespace pg::webtest
