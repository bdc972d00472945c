// Every field of the cell key's table, through every form it takes: JSON, CSV, label and the
// comparison that decides whether two cells are the same cell. A field added to kKeyFields is
// covered here without a new test; the store's SQL round trip is in
// tests/store/key_columns_test.cpp.
#include <gtest/gtest.h>

#include <set>

#include "common/errors.h"
#include "core/cell_key_io.h"
#include "core/cell_label.h"
#include "tests/core/core_test_util.h"

namespace pg {
namespace {

using test::base_key;
using test::with_other_value;

TEST(CellKeyFields, NamesAreUniqueInEveryForm) {
  std::set<std::string> names, sql, json, csv;
  for (const KeyField& f : kKeyFields) {
    names.insert(f.name);
    sql.insert(f.sql_column);
    json.insert(f.json_key);
    csv.insert(f.csv_header);
    EXPECT_EQ(f.text != nullptr, f.kind == KeyFieldKind::text) << f.name;
    EXPECT_EQ(f.integer != nullptr, f.kind == KeyFieldKind::integer) << f.name;
    EXPECT_EQ(f.flag != nullptr, f.kind == KeyFieldKind::flag) << f.name;
  }
  for (const auto* set : {&names, &sql, &json, &csv}) EXPECT_EQ(set->size(), kKeyFields.size());
}

TEST(CellKeyFields, JsonRoundTripsEveryField) {
  for (const KeyField& f : kKeyFields) {
    const CellKey k = with_other_value(base_key(), f);
    const nlohmann::json j = cell_key_to_json(k);
    EXPECT_EQ(j.size(), kKeyFields.size());
    ASSERT_TRUE(j.contains(f.json_key)) << f.name;
    EXPECT_EQ(cell_key_from_json(j, "/key"), k) << f.name;
    EXPECT_NE(cell_key_from_json(cell_key_to_json(base_key()), "/key"), k) << f.name;
  }
}

TEST(CellKeyFields, JsonRejectsAMissingOrMistypedFieldByPointer) {
  for (const KeyField& f : kKeyFields) {
    nlohmann::json j = cell_key_to_json(base_key());
    j.erase(f.json_key);
    try {
      cell_key_from_json(j, "/cells/0/key");
      ADD_FAILURE() << f.name << " missing was accepted";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()),
                std::string("/cells/0/key/") + f.json_key + ": required field is missing");
    }
    j = cell_key_to_json(base_key());
    j[f.json_key] = nlohmann::json::array();
    EXPECT_THROW(cell_key_from_json(j, ""), UsageError) << f.name;
  }
  EXPECT_THROW(cell_key_from_json(nlohmann::json(3), ""), UsageError);
}

TEST(CellKeyFields, JsonRepairsInvalidUtf8InText) {
  CellKey k = base_key();
  k.model = "bad\xff";
  EXPECT_EQ(cell_key_to_json(k)["model"], "bad\xEF\xBF\xBD");
}

TEST(CellKeyFields, CsvHasOneColumnPerFieldWithItsText) {
  const auto header = cell_key_csv_header();
  ASSERT_EQ(header.size(), kKeyFields.size());
  for (size_t i = 0; i < kKeyFields.size(); ++i) {
    const KeyField& f = kKeyFields[i];
    EXPECT_EQ(header[i], f.csv_header);
    const CellKey k = with_other_value(base_key(), f);
    const auto values = cell_key_csv_values(k);
    ASSERT_EQ(values.size(), kKeyFields.size());
    EXPECT_EQ(values[i], key_field_text(k, f)) << f.name;
    EXPECT_NE(values[i], cell_key_csv_values(base_key())[i]) << f.name;
  }
  EXPECT_EQ(cell_key_csv_values(base_key()),
            (std::vector<std::string>{"gpt2", "bf16", "4", "256", "32", "true", "sdpa", "false",
                                      "cuda"}));
}

TEST(CellKeyFields, LabelShowsEveryFieldSoLabelsDifferExactlyWhenKeysDo) {
  EXPECT_EQ(cell_label(base_key()), "gpt2 bf16 B=4 P=256 gen=32 kv=on sdpa graphs=off cuda");
  EXPECT_EQ(cell_label(base_key(), false), "bf16 B=4 P=256 gen=32 kv=on sdpa graphs=off cuda");
  for (const KeyField& f : kKeyFields) {
    const CellKey k = with_other_value(base_key(), f);
    EXPECT_NE(cell_label(k), cell_label(base_key())) << f.name;
    EXPECT_EQ(cell_label(k, false) != cell_label(base_key(), false), f.in_short_label) << f.name;
  }
}

TEST(CellKeyFields, EveryIdentifyingFieldSeparatesCellsInTableOrder) {
  for (size_t i = 0; i < kKeyFields.size(); ++i) {
    const KeyField& f = kKeyFields[i];
    const CellKey k = with_other_value(base_key(), f);
    EXPECT_EQ(k == base_key(), !f.identifies_cell) << f.name;
    if (!f.identifies_cell) continue;
    // An earlier field decides the order before this one does.
    for (size_t e = 0; e < i; ++e) {
      if (!kKeyFields[e].identifies_cell) continue;
      const CellKey earlier = with_other_value(base_key(), kKeyFields[e]);
      const CellKey both = with_other_value(earlier, f);
      EXPECT_EQ(both <=> k, earlier <=> base_key()) << kKeyFields[e].name << " before " << f.name;
    }
  }
}

TEST(CellKeyFields, ValuesJsonIsTheFieldsInOrder) {
  const nlohmann::json v = cell_key_values_json(base_key());
  EXPECT_EQ(v.dump(), R"(["gpt2","bf16",4,256,32,true,"sdpa",false,"cuda"])");
}

TEST(CellKeyFields, SqlFragmentsNameEveryColumnInOrder) {
  EXPECT_EQ(cell_key_sql_columns("c."),
            "c.model, c.dtype, c.batch_size, c.seq_len, c.gen_tokens, c.kv_cache, c.attention, "
            "c.cuda_graphs, c.device");
  EXPECT_EQ(cell_key_sql_placeholders(4), "?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12");
  EXPECT_EQ(cell_key_sql_match(1).substr(0, 28), "model = ?1 AND dtype = ?2 AN");
  EXPECT_NE(cell_key_sql_match(1).find("device = ?9"), std::string::npos);
}

}  // namespace
}  // namespace pg
