#include <gtest/gtest.h>

#include "silt/expr/expression.h"
#include "silt/expr/parse/ast.h"
#include "silt/expr/parse/lexer.h"
#include "silt/testing/gtest_util.h"

namespace silt::expr {
namespace {

std::string Parsed(std::string_view text) {
  Result<ExpressionPtr> e = ParseExpression(text);
  if (!e.ok()) return "ERROR: " + e.status().message();
  return (*e)->ToString();
}

std::string ErrorOf(std::string_view text) {
  Result<ExpressionPtr> e = ParseExpression(text);
  EXPECT_FALSE(e.ok()) << text << " parsed as " << (*e)->ToString();
  if (e.ok()) return "";
  EXPECT_TRUE(e.status().IsInvalidArgument()) << e.status().ToString();
  return e.status().message();
}

// The first line of the error (the caret lines follow it).
std::string FirstLineOf(std::string_view text) {
  std::string message = ErrorOf(text);
  return message.substr(0, message.find('\n'));
}

TEST(LexerTest, KeywordsMatchIgnoringCaseButNotWhenBackquoted) {
  ASSERT_OK_AND_ASSIGN(std::vector<Token> tokens, Tokenize("cAsT `cast` a_1"));
  ASSERT_EQ(tokens.size(), 4u);
  EXPECT_TRUE(tokens[0].IsKeyword("CAST"));
  EXPECT_FALSE(tokens[1].IsKeyword("CAST"));
  EXPECT_EQ(tokens[1].text, "cast");
  EXPECT_EQ(tokens[2].text, "a_1");
  EXPECT_EQ(tokens[3].kind, TokenKind::kEnd);
}

TEST(LexerTest, BackquotedIdentifiersKeepSpacesAndDoubledBackquotes) {
  ASSERT_OK_AND_ASSIGN(std::vector<Token> tokens, Tokenize("`a b`.`x``y`"));
  EXPECT_EQ(tokens[0].text, "a b");
  EXPECT_TRUE(tokens[0].quoted);
  EXPECT_EQ(tokens[1].kind, TokenKind::kDot);
  EXPECT_EQ(tokens[2].text, "x`y");
}

TEST(LexerTest, StringEscapesFollowSpark) {
  ASSERT_OK_AND_ASSIGN(std::vector<Token> tokens,
                       Tokenize(R"('a\'b' "c\"d" 'tab\there' '\u0041\101' '100\%' r'raw\n')"));
  EXPECT_EQ(tokens[0].text, "a'b");
  EXPECT_EQ(tokens[1].text, "c\"d");
  EXPECT_EQ(tokens[2].text, "tab\there");
  EXPECT_EQ(tokens[3].text, "AA");
  EXPECT_EQ(tokens[4].text, "100\\%");  // kept for LIKE, as Spark does
  EXPECT_EQ(tokens[5].text, "raw\\n");
}

TEST(LexerTest, NumbersAndDigitLeadingIdentifiers) {
  ASSERT_OK_AND_ASSIGN(std::vector<Token> tokens, Tokenize("12 12L 1.5 .5 1e3 2BD 123abc 7D"));
  EXPECT_EQ(tokens[0].kind, TokenKind::kNumber);
  EXPECT_EQ(tokens[1].text, "12L");
  EXPECT_EQ(tokens[2].text, "1.5");
  EXPECT_EQ(tokens[3].text, ".5");
  EXPECT_EQ(tokens[4].text, "1e3");
  EXPECT_EQ(tokens[5].text, "2BD");
  EXPECT_EQ(tokens[6].kind, TokenKind::kIdentifier);
  EXPECT_EQ(tokens[6].text, "123abc");
  EXPECT_EQ(tokens[7].text, "7D");
}

TEST(LexerTest, CommentsAreSkipped) {
  ASSERT_OK_AND_ASSIGN(std::vector<Token> tokens, Tokenize("a /* note /* nested */ */ + -- x\n b"));
  ASSERT_EQ(tokens.size(), 4u);
  EXPECT_EQ(tokens[1].kind, TokenKind::kPlus);
  EXPECT_EQ(tokens[2].text, "b");
}

TEST(ParserTest, MultiplicationBindsTighterThanAddition) {
  EXPECT_EQ(Parsed("a + b * c"), "(a + (b * c))");
  EXPECT_EQ(Parsed("a * b + c"), "((a * b) + c)");
  EXPECT_EQ(Parsed("a - b - c"), "((a - b) - c)");
  EXPECT_EQ(Parsed("a || b + c"), "((a || b) + c)");
  EXPECT_EQ(Parsed("a div b % c"), "((a div b) % c)");
}

TEST(ParserTest, LogicalPrecedenceIsOrAndNotComparison) {
  EXPECT_EQ(Parsed("a OR b AND c"), "(a OR (b AND c))");
  EXPECT_EQ(Parsed("NOT a AND b"), "((NOT a) AND b)");
  EXPECT_EQ(Parsed("NOT a = b"), "(NOT (a = b))");
  EXPECT_EQ(Parsed("a = 1 OR b <> 2"), "((a = 1) OR (b != 2))");
  EXPECT_EQ(Parsed("!a"), "(NOT a)");
}

TEST(ParserTest, ComparisonBindsLooserThanArithmetic) {
  EXPECT_EQ(Parsed("a + 1 < b * 2"), "((a + 1) < (b * 2))");
  EXPECT_EQ(Parsed("a <=> b"), "(a <=> b)");
  EXPECT_EQ(Parsed("a == b"), "(a = b)");
  EXPECT_EQ(Parsed("a & b | c ^ d"), "((a & b) | (c ^ d))");
}

TEST(ParserTest, IsNullAppliesToTheWholeValueExpression) {
  // Spark's grammar: predicate follows a complete valueExpression.
  EXPECT_EQ(Parsed("a IS NULL"), "(a IS NULL)");
  EXPECT_EQ(Parsed("a + 1 IS NOT NULL"), "((a + 1) IS NOT NULL)");
  EXPECT_EQ(Parsed("a = b IS NULL"), "((a = b) IS NULL)");
  EXPECT_EQ(Parsed("a IS NULL AND b IS NOT NULL"), "((a IS NULL) AND (b IS NOT NULL))");
}

TEST(ParserTest, UnaryMinusAndNegativeLiterals) {
  EXPECT_EQ(Parsed("-a * b"), "((- a) * b)");
  EXPECT_EQ(Parsed("-1"), "-1");
  EXPECT_EQ(Parsed("a - 1"), "(a - 1)");
  EXPECT_EQ(Parsed("-2147483648"), "-2147483648");
  EXPECT_EQ(Parsed("-9223372036854775808"), "-9223372036854775808L");
}

TEST(ParserTest, LiteralsGetSparkTypes) {
  EXPECT_EQ(Parsed("2147483648"), "2147483648L");
  EXPECT_EQ(Parsed("12L"), "12L");
  EXPECT_EQ(Parsed("1.50"), "1.50BD");
  EXPECT_EQ(Parsed("1e3"), "1000.0D");
  EXPECT_EQ(Parsed("2.5D"), "2.5D");
  EXPECT_EQ(Parsed("3Y"), "3Y");
  EXPECT_EQ(Parsed("NULL"), "NULL");
  EXPECT_EQ(Parsed("true"), "true");
  EXPECT_EQ(Parsed("'it''s'"), "'its'");
  EXPECT_EQ(Parsed("DATE '2026-06-22'"), "DATE '2026-06-22'");
  EXPECT_EQ(Parsed("TIMESTAMP '2026-06-22 08:16:00'"), "TIMESTAMP '2026-06-22 08:16:00'");
  EXPECT_EQ(Parsed("X'0A0b'"), "X'0A0B'");
}

TEST(ParserTest, ColumnReferencesAndFieldAccess) {
  EXPECT_EQ(Parsed("e.device_id"), "e.device_id");
  EXPECT_EQ(Parsed("`a b`.c"), "`a b`.c");
  EXPECT_EQ(Parsed("(e).x"), "e.x");
  EXPECT_EQ(Parsed("f(a).x.y"), "f(a).x.y");
}

TEST(ParserTest, FunctionCallsAndStars) {
  EXPECT_EQ(Parsed("count(*)"), "count(*)");
  EXPECT_EQ(Parsed("coalesce(a, b, 1)"), "coalesce(a, b, 1)");
  EXPECT_EQ(Parsed("current_timestamp()"), "current_timestamp()");
  ASSERT_OK_AND_ASSIGN(ExpressionPtr star, ParseExpression("*"));
  EXPECT_TRUE(star->IsStar());
  EXPECT_EQ(star->StarQualifier(), "");
  ASSERT_OK_AND_ASSIGN(ExpressionPtr qualified, ParseExpression("e.*"));
  EXPECT_TRUE(qualified->IsStar());
  EXPECT_EQ(qualified->StarQualifier(), "e");
}

TEST(ParserTest, CastTakesDdlTypes) {
  EXPECT_EQ(Parsed("CAST(a AS INT)"), "CAST(a AS INT)");
  EXPECT_EQ(Parsed("cast(a as bigint)"), "CAST(a AS BIGINT)");
  EXPECT_EQ(Parsed("CAST(a AS DECIMAL(10, 2))"), "CAST(a AS DECIMAL(10,2))");
  EXPECT_EQ(Parsed("CAST(a AS ARRAY<STRUCT<x: INT>>)"), "CAST(a AS ARRAY<STRUCT<x: INT>>)");
  EXPECT_EQ(Parsed("a::string"), "CAST(a AS STRING)");
  EXPECT_EQ(Parsed("a::decimal(5,1) + 1"), "(CAST(a AS DECIMAL(5,1)) + 1)");
}

TEST(ParserTest, AliasesWithAsOrBare) {
  ASSERT_OK_AND_ASSIGN(ExpressionPtr e, ParseExpression("CAST(x AS INT) AS y"));
  EXPECT_EQ(e->OutputName(), "y");
  ASSERT_OK_AND_ASSIGN(ExpressionPtr bare, ParseExpression("a + 1 total"));
  EXPECT_EQ(bare->OutputName(), "total");
  ASSERT_OK_AND_ASSIGN(ExpressionPtr quoted, ParseExpression("a AS `my col`"));
  EXPECT_EQ(quoted->OutputName(), "my col");
}

TEST(ParserTest, OutputNamesFollowSparkRules) {
  auto name = [](std::string_view text) {
    Result<ExpressionPtr> e = ParseExpression(text);
    return e.ok() ? (*e)->OutputName() : "ERROR";
  };
  EXPECT_EQ(name("e.device_id"), "device_id");
  EXPECT_EQ(name("value"), "value");
  EXPECT_EQ(name("CAST(value AS STRING)"), "value");
  EXPECT_EQ(name("CAST(e.a AS INT)"), "CAST(e.a AS INT)");
  EXPECT_EQ(name("get_json_object(e.payload, '$.power')"), "get_json_object(e.payload, $.power)");
  EXPECT_EQ(name("a + 1"), "(a + 1)");
  EXPECT_EQ(name("a != 1"), "(NOT (a = 1))");
  EXPECT_EQ(name("TO_TIMESTAMP(x)"), "to_timestamp(x)");
  EXPECT_EQ(name("count(*)"), "count(1)");
  EXPECT_EQ(name("a IS NULL"), "(a IS NULL)");
  EXPECT_EQ(name("1.5"), "1.5");
  EXPECT_EQ(name("'text'"), "text");
  EXPECT_EQ(name("-x"), "(- x)");
}

TEST(ParserTest, ErrorsNameThePositionOfTheOffendingToken) {
  EXPECT_EQ(FirstLineOf("a +"),
            "Syntax error: unexpected end of input, expected an expression at position 4 in 'a +'");
  EXPECT_EQ(FirstLineOf("f(a b c)"),
            "Expected ',' or ')' in the argument list of f but found 'b' at position 5 in "
            "'f(a b c)'");
  EXPECT_EQ(FirstLineOf("a ) b"), "Syntax error: unexpected ')' at position 3 in 'a ) b'");
  EXPECT_EQ(FirstLineOf("'abc"), "Unterminated string literal at position 1 in ''abc'");
  EXPECT_EQ(FirstLineOf("a # b"), "Unexpected character '#' at position 3 in 'a # b'");
  EXPECT_EQ(FirstLineOf("CAST(a INT)"),
            "Expected AS in CAST but found 'INT' at position 8 in "
            "'CAST(a INT)'");
  EXPECT_EQ(FirstLineOf("x AS"),
            "Expected an alias name after AS but found end of input at position 5 in 'x AS'");
}

TEST(ParserTest, ErrorsShowACaretUnderTheOffendingToken) {
  EXPECT_EQ(ErrorOf("a ) b"),
            "Syntax error: unexpected ')' at position 3 in 'a ) b'\n"
            "  a ) b\n"
            "    ^");
  EXPECT_EQ(ErrorOf("a +"),
            "Syntax error: unexpected end of input, expected an expression at position 4 in "
            "'a +'\n  a +\n     ^");
}

TEST(ParserTest, BadTypesAndLiteralsAreErrorsAtTheirPosition) {
  std::string type_error = ErrorOf("CAST(a AS NOPE)");
  EXPECT_NE(type_error.find("Invalid type 'NOPE'"), std::string::npos) << type_error;
  EXPECT_NE(type_error.find("at position 11"), std::string::npos) << type_error;
  EXPECT_NE(ErrorOf("300Y").find("does not fit in range [-128, 127] for type tinyint"),
            std::string::npos);
  EXPECT_NE(ErrorOf("DATE 'yesterday'").find("Cannot parse the DATE value: yesterday"),
            std::string::npos);
  EXPECT_NE(ErrorOf("1e400").find("does not fit in range"), std::string::npos);
}

}  // namespace
}  // namespace silt::expr
