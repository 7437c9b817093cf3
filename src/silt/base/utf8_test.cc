#include "silt/base/utf8.h"

#include <gtest/gtest.h>

namespace silt {
namespace {

TEST(Utf8Test, AcceptsWellFormedText) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain ascii"));
  EXPECT_TRUE(IsValidUtf8("caf\xC3\xA9 \xE6\x97\xA5 \xF0\x9F\x98\x80 \xF4\x8F\xBF\xBF"));
}

TEST(Utf8Test, RejectsIllFormedSequences) {
  EXPECT_FALSE(
      IsValidUtf8("a\xFF"
                  "b"));
  EXPECT_FALSE(IsValidUtf8("\x80"));              // lone continuation byte
  EXPECT_FALSE(IsValidUtf8("\xC3"));              // truncated
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));          // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xE0\x80\xAF"));      // overlong
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));      // surrogate U+D800
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));  // above U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xF5\x80\x80\x80"));
}

TEST(Utf8Test, ReplacesEachMaximalSubpartWithOneReplacementCharacter) {
  EXPECT_EQ(ReplaceInvalidUtf8("ok \xC3\xA9"), "ok \xC3\xA9");
  EXPECT_EQ(ReplaceInvalidUtf8("a\xFF"
                               "b"),
            "a\xEF\xBF\xBD"
            "b");
  // What Spark writes for CAST(X'FFFE' AS STRING): two replacement characters.
  EXPECT_EQ(ReplaceInvalidUtf8("\xFF\xFE"), "\xEF\xBF\xBD\xEF\xBF\xBD");
  // A truncated three-byte sequence is one maximal subpart.
  EXPECT_EQ(ReplaceInvalidUtf8("\xE2\x82"
                               "a"),
            "\xEF\xBF\xBD"
            "a");
  // An encoded surrogate is one replacement character, as Spark writes it
  // (Java's decoder reads the three bytes as one malformed character).
  EXPECT_EQ(ReplaceInvalidUtf8("\xED\xA0\x80"
                               "a"),
            "\xEF\xBF\xBD"
            "a");
  // An overlong form is not: its lead byte alone is the maximal subpart.
  EXPECT_EQ(ReplaceInvalidUtf8("\xE0\x80\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_TRUE(IsValidUtf8(ReplaceInvalidUtf8("\xC3\x28\xF0\x9F\x98")));
}

}  // namespace
}  // namespace silt
