// `--exec` protocol 2: the profile line, read into the cell's profile, and every way a malformed
// one is refused with the field it names (docs/PROTOCOL.md, "The profile line").
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "exec_lines.h"
#include "runner/exec/exec_profile.h"
#include "runner/exec/exec_protocol.h"

namespace pg::exec {
namespace {

using namespace testlines;

const char* kHello2 = R"({"type":"hello","protocol":2,"engine":"demo"})";
const char* kEnd = R"({"type":"end"})";

// A step of the profile line; `rows` is its by_name array.
std::string step(int index, const std::string& rows = "[]", const std::string& extra = "") {
  return R"({"step":)" + std::to_string(index) +
         R"(,"wall_ms":1.5,"ops":12,"kernels":0,"syncs":1,"d2h_copies":0,"alloc_bytes":4096,)"
         R"("peak_bytes":2048,"by_name":)" +
         rows + extra + "}";
}

// A profile line of three steps (gen_tokens 3); `first` replaces the prefill's step.
std::string profile_line(const std::string& first = step(-1), const std::string& extra = "") {
  return R"({"type":"profile","profiler":"torch.profiler","wall_ms":9,"note":null,"steps":[)" +
         first + "," +
         step(0, R"([{"kind":"op","name":"aten::sigmoid","count":2,"total_ms":0.5}])") + "," +
         step(1) + "]" + extra + "}";
}

// The ProtocolError of feeding hello (protocol 2), two reps, `profile` and end, or "".
std::string error_of(const std::string& profile, bool asked = true, const char* hello = kHello2) {
  ProtocolReader r(2, 3, asked);
  try {
    for (const std::string& l : std::vector<std::string>{hello, rep(0), rep(1), profile, kEnd})
      r.feed(l);
  } catch (const ProtocolError& e) {
    return e.what();
  }
  return "";
}

TEST(ExecProfile, ReadsTheProfileLineIntoTheCellsProfile) {
  ProtocolReader r(2, 3, true);
  for (const std::string& l :
       std::vector<std::string>{kHello2, rep(0), rep(1), profile_line(), kEnd})
    r.feed(l);
  ASSERT_EQ(r.state(), ProtocolReader::State::done);
  ASSERT_TRUE(r.profile());
  const CellProfile& p = *r.profile();
  EXPECT_EQ(p.profiler, "torch.profiler");
  EXPECT_EQ(p.wall_ms, 9);
  EXPECT_FALSE(p.note);
  ASSERT_EQ(p.steps.size(), 3u);
  EXPECT_EQ(p.steps[0].step, -1);
  EXPECT_EQ(p.steps[2].step, 1);
  EXPECT_EQ(p.steps[1].ops, 12);
  EXPECT_EQ(p.steps[1].syncs, 1);
  EXPECT_EQ(p.steps[1].alloc_bytes, 4096);
  EXPECT_EQ(p.steps[1].peak_bytes, 2048);
  EXPECT_FALSE(p.steps[1].span_ms);  // not printed: not measured
  ASSERT_EQ(p.steps[1].ops_by_name.size(), 1u);
  EXPECT_EQ(p.steps[1].ops_by_name[0].kind, ProfileOpKind::op);
  EXPECT_EQ(p.steps[1].ops_by_name[0].name, "aten::sigmoid");
  EXPECT_EQ(p.steps[1].ops_by_name[0].count, 2);
  EXPECT_EQ(p.steps[1].ops_by_name[0].total_ms, 0.5);
}

TEST(ExecProfile, IsOptionalAndVersionOneStaysAccepted) {
  EXPECT_EQ(error_of(""), "");  // a blank line instead: protocol 2 without a profile
  EXPECT_EQ(error_of("", true, kHello), "");
  EXPECT_EQ(error_of(profile_line(), true, kHello),
            "stdout line 4: a profile line needs protocol 2 (the hello line said 1)");
}

TEST(ExecProfile, IsRefusedWhenNotAskedForOrOutOfPlace) {
  EXPECT_EQ(error_of(profile_line(), false),
            "stdout line 4: a profile line, but perfgate asked for none (the cell's profile is "
            "off)");
  ProtocolReader early(2, 3, true);
  early.feed(kHello2);
  early.feed(rep(0));
  try {
    early.feed(profile_line());
    ADD_FAILURE() << "a profile line before the last rep was accepted";
  } catch (const ProtocolError& e) {
    EXPECT_STREQ(e.what(),
                 "stdout line 3: a profile line after 1 of 2 repetitions (it comes after the "
                 "last rep line)");
  }
  ProtocolReader twice(2, 3, true);
  for (const std::string& l : std::vector<std::string>{kHello2, rep(0), rep(1), profile_line()})
    twice.feed(l);
  EXPECT_THROW(twice.feed(profile_line()), ProtocolError);
}

// The profile line of profile_line() as JSON, changed by `edit`, then fed: its error.
template <typename Edit>
std::string error_after(Edit edit) {
  auto j = nlohmann::json::parse(profile_line());
  edit(j);
  return error_of(j.dump());
}

TEST(ExecProfile, NamesTheFieldOfEveryMalformedRecord) {
  using nlohmann::json;
  const std::string at = "stdout line 4: ";
  EXPECT_EQ(error_after([](json& j) { j["steps"][0]["kernels"] = "3"; }),
            at + "profile.steps[0].kernels must be an integer >= 0, got \"3\"");
  EXPECT_EQ(error_after([](json& j) { j["steps"][0]["syncs"] = 1.5; }),
            at + "profile.steps[0].syncs must be an integer >= 0, got 1.5");
  EXPECT_EQ(error_after([](json& j) { j["steps"][1]["by_name"][0]["count"] = -1; }),
            at + "profile.steps[1].by_name[0].count must be an integer >= 0, got -1");
  EXPECT_EQ(error_after([](json& j) { j["steps"][1]["by_name"][0]["total_ms"] = -0.5; }),
            at + "profile.steps[1].by_name[0].total_ms must be a finite number >= 0 "
                 "(milliseconds), got -0.5");
  EXPECT_EQ(error_after([](json& j) { j["steps"][1]["by_name"][0]["kind"] = "func"; }),
            at + "profile.steps[1].by_name[0].kind must be \"op\" or \"kernel\", got \"func\"");
  EXPECT_EQ(error_after([](json& j) { j["steps"][1]["by_name"][0]["name"] = ""; }),
            at + "profile.steps[1].by_name[0].name must be a non-empty string, got \"\"");
  EXPECT_EQ(
      error_after([](json& j) { j["steps"][1]["by_name"][0]["name"] = std::string(1025, 'k'); }),
      at + "profile.steps[1].by_name[0].name is 1025 bytes long, at most 1024 are accepted");
  EXPECT_EQ(error_after([](json& j) { j["steps"][1]["by_name"][0]["name"] = "red\x1b[31m"; }),
            at + "profile.steps[1].by_name[0].name must not contain control characters");
  EXPECT_EQ(
      error_after([](json& j) { j["steps"][1]["by_name"].push_back(j["steps"][1]["by_name"][0]); }),
      at + "profile.steps[1].by_name[1].name repeats the op \"aten::sigmoid\" of an earlier "
           "row: one row per name and kind");
  EXPECT_EQ(
      error_after([](json& j) {
        j["steps"][1]["by_name"] = json::array();
        for (int i = 0; i < 4097; ++i)
          j["steps"][1]["by_name"].push_back(
              {{"kind", "op"}, {"name", "op" + std::to_string(i)}, {"count", 1}, {"total_ms", 0}});
      }),
      at + "profile.steps[1].by_name has 4097 rows, at most 4096 are accepted");
  EXPECT_EQ(error_after([](json& j) { j["steps"][1]["by_name"][0]["self"] = true; }),
            at + "profile.steps[1].by_name[0] has an unknown key \"self\"");
  EXPECT_EQ(error_after([](json& j) { j["steps"][0]["cycles"] = 1; }),
            at + "profile.steps[0] has an unknown key \"cycles\"");
  EXPECT_EQ(error_after([](json& j) { j["steps"][0].erase("ops"); }),
            at + "profile.steps[0].ops is missing");
  EXPECT_EQ(error_after([](json& j) { j["steps"][0]["step"] = 0; }),
            at + "profile.steps[0].step must be -1 (-1 the prefill, then the decode steps from 0 "
                 "in order), got 0");
  EXPECT_EQ(error_after([](json& j) { j["steps"].erase(2); }),
            at + "profile.steps has 2 entries, expected 3 (the prefill + 2 decode steps) or none");
  EXPECT_EQ(error_after([](json& j) { j["steps"] = 3; }),
            at + "profile.steps must be an array (the prefill, then each decode step)");
  EXPECT_EQ(error_after([](json& j) { j["profiler"] = 5; }),
            at + "profile.profiler must be a non-empty string, got 5");
  EXPECT_EQ(error_after([](json& j) { j["note"] = 5; }),
            at + "profile.note must be a string or null, got 5");
  EXPECT_EQ(error_after([](json& j) { j["wall_ms"] = "fast"; }),
            at + "profile.wall_ms must be a finite number >= 0 (milliseconds), got \"fast\"");
  EXPECT_EQ(error_after([](json& j) { j["missing"] = "CUPTI"; }),
            at + "profile has an unknown key \"missing\"");
  // The step's timeline: optional, a pair, busy within span.
  EXPECT_EQ(error_after([](json& j) { j["steps"][0]["span_ms"] = 0.5; }),
            at + "profile.steps[0].busy_ms is missing: span_ms and busy_ms go together");
  EXPECT_EQ(error_after([](json& j) { j["steps"][0]["busy_ms"] = 0.5; }),
            at + "profile.steps[0].span_ms is missing: span_ms and busy_ms go together");
  EXPECT_EQ(error_after([](json& j) {
              j["steps"][0]["span_ms"] = 0.5;
              j["steps"][0]["busy_ms"] = 0.75;
            }),
            at + "profile.steps[0].busy_ms must not exceed span_ms, got 0.75");
  EXPECT_EQ(error_after([](json& j) {
              j["steps"][0]["span_ms"] = -1;
              j["steps"][0]["busy_ms"] = 0;
            }),
            at + "profile.steps[0].span_ms must be a finite number >= 0 (milliseconds), got -1");
  EXPECT_EQ(error_after([](json& j) {
              j["steps"][0]["span_ms"] = 0.5;
              j["steps"][0]["busy_ms"] = 0.25;
            }),
            "");
  // Absent or null: the same; no steps at all (the profiled sequence failed) is a profile too.
  EXPECT_EQ(error_after([](json& j) { j["steps"][0].erase("peak_bytes"); }), "");
  EXPECT_EQ(error_after([](json& j) { j["steps"] = json::array(); }), "");
}

TEST(ExecProfile, KeepsTheNoteAsOneInertLine) {
  auto j = nlohmann::json::parse(profile_line());
  j["note"] = "CUPTI said:\nERROR\x1b[0m";
  const CellProfile p = read_profile_line(j, 4, 3);
  ASSERT_TRUE(p.note);
  EXPECT_EQ(p.note->find('\n'), std::string::npos) << *p.note;
  EXPECT_EQ(p.note->find('\x1b'), std::string::npos) << *p.note;
}

}  // namespace
}  // namespace pg::exec
