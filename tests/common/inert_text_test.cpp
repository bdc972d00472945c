// inert_text: text from measured code becomes one inert line of bounded length
// (docs/FORMATS.md, "Text from measured code").
#include "common/inert_text.h"

#include <gtest/gtest.h>

#include <string>

namespace pg {
namespace {

TEST(InertText, PlainTextIsUnchanged) {
  for (const std::string s : {"", "tiny fp32 B=1 P=8", "café ✓ 🚀", "ns::model a:b, c",
                              "C:\\path\\to\\file", "#1 [x] ## y", "50% [done]"})
    EXPECT_EQ(inert_text(s), s);
}

TEST(InertText, LineBreaksAndControlsAreShownAsEscapes) {
  EXPECT_EQ(inert_text("a\nb\rc\td"), "a\\nb\\rc\\td");
  EXPECT_EQ(inert_text("red \x1b[31mx\x1b[0m"), "red \\x1B[31mx\\x1B[0m");
  EXPECT_EQ(inert_text(std::string("nul\0del\x7f", 8)), "nul\\x00del\\x7F");
  EXPECT_EQ(inert_text("csi \xC2\x9B"
                       "31m nel \xC2\x85"),
            "csi \\u009B31m nel \\u0085");
  EXPECT_EQ(inert_text("ls\xE2\x80\xA8ps\xE2\x80\xA9"), "ls\\u2028ps\\u2029");
  // Text that is displayed in another order than it is read, or not at all.
  EXPECT_EQ(inert_text("abc\xE2\x80\xAE"
                       "fed\xE2\x81\xA6x\xE2\x80\x8By\xEF\xBB\xBF"),
            "abc\\u202Efed\\u2066x\\u200By\\uFEFF");
}

TEST(InertText, InvalidUtf8IsRepaired) {
  EXPECT_EQ(inert_text("a\xFF"
                       "b\xC3"),
            "a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD");
  EXPECT_EQ(inert_text("\x9B"
                       "31m"),
            "\xEF\xBF\xBD"
            "31m");  // a lone 8-bit CSI byte
}

TEST(InertText, NoLegacyGithubCommandAnywhere) {
  EXPECT_EQ(inert_text("x ##[error]y"), "x ##\\[error]y");
  EXPECT_EQ(inert_text("###[a] ##[b"), "###\\[a] ##\\[b");
  EXPECT_EQ(inert_text("##\n##["), "##\\n##\\[");
  EXPECT_EQ(inert_text("##[").find("##["), std::string::npos);
}

TEST(InertText, NoWorkflowCommandAtTheStart) {
  EXPECT_EQ(inert_text("::error::x"), "\\::error::x");
  EXPECT_EQ(inert_text("  ::warning::x"), "  \\::warning::x");
  EXPECT_EQ(inert_text("\xC2\xA0\xE3\x80\x80::notice::x"), "\xC2\xA0\xE3\x80\x80\\::notice::x");
  EXPECT_EQ(inert_text("\t::x"), "\\t::x");               // the escape is not blank
  EXPECT_EQ(inert_text("a ::error::x"), "a ::error::x");  // not at a line's start
  EXPECT_EQ(inert_text(":x"), ":x");
  // After a line break that is now an escape, the text is one line: nothing starts there.
  EXPECT_EQ(inert_text("x\n::error::y"), "x\\n::error::y");
}

TEST(InertText, LongTextIsCutWithAnEllipsisAndCountsCharacters) {
  EXPECT_EQ(inert_text(std::string(200, 'a')), std::string(200, 'a'));
  EXPECT_EQ(inert_text(std::string(201, 'a')), std::string(199, 'a') + "\u2026");
  EXPECT_EQ(inert_text(std::string(5000, 'a'), kInertMessageChars),
            std::string(1999, 'a') + "\u2026");
  // Characters, not bytes: 200 three-byte characters fit.
  std::string wide;
  for (int i = 0; i < 200; ++i) wide += "\xE2\x9C\x93";
  EXPECT_EQ(inert_text(wide), wide);
  // An escape is never cut in half: it goes whole or not at all.
  EXPECT_EQ(inert_text(std::string(197, 'a') + "\n", 200), std::string(197, 'a') + "\\n");
  EXPECT_EQ(inert_text(std::string(198, 'a') + "\nb", 200), std::string(198, 'a') + "\u2026");
  EXPECT_EQ(inert_text("abc", 1), "\u2026");
}

TEST(InertText, IsIdempotent) {
  for (const std::string& s :
       {std::string("x\n::error::y\r##[z]\x1b[2J"), std::string("::a"), std::string(300, 'm'),
        std::string("###[ ##["), std::string("\xFF\xC2\x85")}) {
    const std::string once = inert_text(s);
    EXPECT_EQ(inert_text(once), once) << once;
  }
}

}  // namespace
}  // namespace pg
