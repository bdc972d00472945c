// A/B runs (`perfgate ab`): the pairing of the two runs and each repetition's position survive
// the store, export and import exactly, and a document that contradicts itself is refused.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/errors.h"
#include "store/run_json.h"
#include "store/store.h"
#include "test_util.h"

namespace pg {
namespace {

pg::Run ab_side(const std::string& side, int variant) {
  pg::Run r = test::sample_run(variant);
  r.ab = AbPairing{"0123456789abcdef0123456789abcdef", side, "abba", 18446744073709551615ull};
  for (auto& c : r.cells)
    for (size_t i = 0; i < c.samples.prefill_ms.size(); ++i)
      c.samples.ab_position.push_back(static_cast<int>((i + (side == "head")) % 2));
  return r;
}

TEST(AbRuns, ThePairingAndEveryPositionAreStoredAndReadBack) {
  test::TempDir dir;
  store::Store s(dir.file("pg.db"));
  const pg::Run base = ab_side("base", 0), head = ab_side("head", 1);
  const int64_t b = test::write_run(s, base), h = test::write_run(s, head);
  const auto rb = s.load_run(b), rh = s.load_run(h);
  ASSERT_TRUE(rb && rh);
  EXPECT_EQ(rb->ab, base.ab);  // the largest seed too: it is stored as text
  EXPECT_EQ(rh->ab, head.ab);
  ASSERT_EQ(rb->cells.size(), base.cells.size());
  for (size_t i = 0; i < base.cells.size(); ++i) {
    EXPECT_EQ(rb->cells[i].samples.ab_position, base.cells[i].samples.ab_position);
    EXPECT_EQ(rh->cells[i].samples.ab_position, head.cells[i].samples.ab_position);
  }
}

TEST(AbRuns, AnOrdinaryRunHasNoPairingAndNoPositions) {
  test::TempDir dir;
  store::Store s(dir.file("pg.db"));
  const auto r = s.load_run(test::write_run(s, test::sample_run()));
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->ab);
  for (const auto& c : r->cells) EXPECT_TRUE(c.samples.ab_position.empty());
  const auto j = store::run_to_json(*r, true);
  EXPECT_TRUE(j.at("ab").is_null());
  EXPECT_FALSE(j.at("cells").at(0).at("samples").contains("ab_position"));
}

TEST(AbRuns, ExportAndImportKeepThePairing) {
  test::TempDir dir;
  store::Store s(dir.file("pg.db"));
  const auto stored = s.load_run(test::write_run(s, ab_side("head", 2)));
  ASSERT_TRUE(stored);
  const auto back = store::runs_from_json(store::runs_to_json({*stored}, true), "export.json");
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].ab, stored->ab);
  EXPECT_EQ(back[0].cells[0].samples.ab_position, stored->cells[0].samples.ab_position);
  store::Store other(dir.file("other.db"));
  const auto imported = other.load_run(other.import_run(back[0]).id);
  ASSERT_TRUE(imported);
  EXPECT_EQ(imported->ab, stored->ab);
  EXPECT_EQ(imported->cells[2].samples.ab_position, stored->cells[2].samples.ab_position);
}

std::string refusal(const nlohmann::json& doc) {
  try {
    store::runs_from_json(doc.dump(), "in.json");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(AbRuns, ADocumentThatContradictsItselfIsRefusedWithItsPath) {
  test::TempDir dir;
  store::Store s(dir.file("pg.db"));
  const auto good = store::run_to_json(*s.load_run(test::write_run(s, ab_side("base", 0))), true);

  auto side = good;
  side["ab"]["side"] = "left";
  EXPECT_NE(refusal(side).find("/ab/side: 'left' is not base or head"), std::string::npos)
      << refusal(side);

  auto short_positions = good;
  short_positions["cells"][0]["samples"]["ab_position"].erase(0);
  EXPECT_NE(refusal(short_positions).find("/cells/0/samples/ab_position: 2 positions but 3"),
            std::string::npos)
      << refusal(short_positions);

  auto bad_value = good;
  bad_value["cells"][0]["samples"]["ab_position"][1] = 2;
  EXPECT_NE(refusal(bad_value).find("/cells/0/samples/ab_position/1: must be 0"), std::string::npos)
      << refusal(bad_value);

  auto unpaired = good;
  unpaired["ab"] = nullptr;
  EXPECT_NE(refusal(unpaired).find("the run is not part of an A/B run"), std::string::npos)
      << refusal(unpaired);
}

}  // namespace
}  // namespace pg
