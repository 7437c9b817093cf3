#include "silt/json/flat_object_internal.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "silt/columnar/builder.h"
#include "silt/json/json_decoder.h"
#include "silt/json/json_multi_path.h"
#include "silt/json/json_test_util.h"
#include "silt/json/plain_run_internal.h"
#include "silt/testing/gtest_util.h"

namespace silt::json {
namespace {

using columnar::ColumnBuilder;
using columnar::ColumnPtr;
using columnar::DataType;
using internal::FindPlainRunEnd;
using internal::FlatKind;
using internal::FlatObjectScanner;
using test_util::Rows;
using test_util::StringColumn;

TEST(FlatObjectScannerTest, ReadsTheSeedPayloadMemberByMember) {
  FlatObjectScanner scanner;
  ASSERT_TRUE(scanner.Scan(
      R"( {"power":84.3, "state" : "O\"N","n":-12,"ok":true,"no":false,"x":null,"e":1E2} )"));
  const std::vector<internal::FlatMember>& members = scanner.members();
  ASSERT_EQ(members.size(), 7u);
  EXPECT_EQ(members[0].key, "power");
  EXPECT_EQ(members[0].kind, FlatKind::kDouble);
  EXPECT_EQ(members[0].double_value, 84.3);
  EXPECT_EQ(members[1].kind, FlatKind::kString);
  EXPECT_TRUE(members[1].escaped);
  EXPECT_EQ(members[1].text, "O\"N");
  EXPECT_EQ(members[2].kind, FlatKind::kInt64);
  EXPECT_EQ(members[2].int_value, -12);
  EXPECT_EQ(members[3].kind, FlatKind::kTrue);
  EXPECT_EQ(members[4].kind, FlatKind::kFalse);
  EXPECT_EQ(members[5].kind, FlatKind::kNull);
  EXPECT_EQ(members[6].kind, FlatKind::kDouble);
  EXPECT_EQ(members[6].double_value, 100.0);
  ASSERT_TRUE(scanner.Scan("{}"));
  EXPECT_TRUE(scanner.members().empty());
}

TEST(FlatObjectScannerTest, LeavesEverythingOutsideItsSubsetToTheDomPath) {
  FlatObjectScanner scanner;
  for (const char* text : {
           "",
           "[1]",
           "\"s\"",
           R"({"a":{"b":1}})",
           R"({"a":[1]})",
           R"({"a":1} x)",
           R"({"a":1}{})",
           R"({"a":1,})",
           R"({"a" 1})",
           R"({'a':1})",
           R"({"a":'x'})",
           R"({a:1})",
           R"({"a":01})",
           R"({"a":-0})",
           R"({"a":1.})",
           R"({"a":.5})",
           R"({"a":+1})",
           R"({"a":1e})",
           R"({"a":1e400})",
           R"({"a":1e1234567890123456789012})",
           R"({"a":1234567890123456789})",
           R"({"a":0.1234567890123456789012345})",
           R"({"a":NaN})",
           R"({"a":tru})",
           R"({"a":nul})",
           R"({"\u0061":1})",
           R"({"a":"\ud83d\ude00"})",
           R"({"a":"\x"})",
           R"({"a":"\u00g1"})",
           "{\"a\":\"\xc3\xa9\"}",
           "{\"a\":\"tab\there\"}",
           R"({"a":"unterminated)",
           R"({"a":1)",
           "{\"a\":1}\x0b",
       }) {
    EXPECT_FALSE(scanner.Scan(text)) << text;
  }
}

TEST(FlatObjectScannerTest, SameKeyIsStringEquality) {
  // Every length up to past the 16-byte loads, equal and differing at each
  // position (first, middle, last byte), as std::string_view's == gives.
  for (size_t n = 0; n <= 20; ++n) {
    std::string a;
    for (size_t i = 0; i < n; ++i) a += static_cast<char>('a' + i);
    const std::string same = a;
    EXPECT_TRUE(internal::SameKey(a, same)) << n;
    EXPECT_FALSE(internal::SameKey(a, a + "x")) << n;
    for (size_t pos = 0; pos < n; ++pos) {
      std::string b = a;
      b[pos] = '#';
      EXPECT_FALSE(internal::SameKey(a, b)) << n << " at " << pos;
    }
  }
}

TEST(FlatObjectScannerTest, DoublesRoundAsStrtodDoes) {
  // Texts for the exact fast path and for from_chars (long mantissas,
  // large exponents, subnormals).
  FlatObjectScanner scanner;
  for (const char* number :
       {"0.1", "84.3", "230.1", "-0.0", "1e22", "1e23", "1.5e-10", "0.000001", "123456789.012345",
        "1234567890.1234567", "9007199254740993.0", "4.9e-324", "2.2250738585072014e-308",
        "1.7976931348623157e308", "3.141592653589793238", "-12.5E+3", "7e-22", "7e-23",
        // An exponent of many digits (not accumulated past four).
        "1e00000000000000000001", "5e-0000000000000000003"}) {
    const std::string text = std::string(R"({"x":)") + number + "}";
    ASSERT_TRUE(scanner.Scan(text)) << number;
    ASSERT_EQ(scanner.members()[0].kind, FlatKind::kDouble) << number;
    const double expected = std::strtod(number, nullptr);
    EXPECT_EQ(std::bit_cast<uint64_t>(scanner.members()[0].double_value),
              std::bit_cast<uint64_t>(expected))
        << number;
  }
}

TEST(FlatObjectScannerTest, DecodesEscapesToUtf8InTheScan) {
  // Short and long texts (the word-at-a-time and the byte-at-a-time loops),
  // an escape at either end, and several escaped values in one object,
  // each decoded after the previous one in the scanner's buffer.
  FlatObjectScanner scanner;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"(a\"b)", "a\"b"},
      {R"(plain text, no escapes at all)", "plain text, no escapes at all"},
      {R"({\"power\":84.3,\"state\":\"ON\"})", R"({"power":84.3,"state":"ON"})"},
      {R"(\")", "\""},
      {R"(\\\\)", "\\\\"},
      {R"(0123456789abcdef\n)", "0123456789abcdef\n"},
      {R"(a\\b\/c\b\f\n\r\t\u0041\u00e9\u20ac\u0000z)",
       std::string("a\\b/c\b\f\n\r\tA\xc3\xa9\xe2\x82\xac\0z", 18)},
  };
  std::string all = "{";
  for (size_t case_idx = 0; case_idx < cases.size(); ++case_idx) {
    const auto& [raw, decoded] = cases[case_idx];
    // Views of unescaped values point into the text: it must outlive them.
    const std::string text = "{\"k\":\"" + raw + "\"}";
    ASSERT_TRUE(scanner.Scan(text)) << raw;
    EXPECT_EQ(scanner.members()[0].text, decoded) << raw;
    EXPECT_EQ(scanner.members()[0].escaped, raw.find('\\') != std::string::npos) << raw;
    if (case_idx > 0) all += ",";
    all += "\"k" + std::to_string(case_idx) + "\":\"" + raw + "\"";
  }
  all += "}";
  ASSERT_TRUE(scanner.Scan(all));
  ASSERT_EQ(scanner.members().size(), cases.size());
  for (size_t case_idx = 0; case_idx < cases.size(); ++case_idx) {
    EXPECT_EQ(scanner.members()[case_idx].text, cases[case_idx].second) << cases[case_idx].first;
  }
}

// The definition FindPlainRunEnd() implements, byte by byte: printable
// ASCII (0x20 to 0x7F) but '"' and '\\'.
const char* ReferencePlainRunEnd(const char* p, const char* end) {
  while (p != end) {
    const auto byte = static_cast<unsigned char>(*p);
    if (byte < 0x20 || byte >= 0x80 || byte == '"' || byte == '\\') break;
    ++p;
  }
  return p;
}

// A text of `length` bytes in a heap block of its own, after `offset` bytes
// of quotes: ASan sees a read past its end, and a read before its start
// that is not masked off finds a quote there.
struct OwnText {
  OwnText(size_t offset, size_t length)
      : block(new char[offset + length]), begin(block.get() + offset), end(begin + length) {
    std::fill(block.get(), begin, '"');
    std::fill(begin, end, 'a');
  }
  std::unique_ptr<char[]> block;
  char* begin;
  char* end;
};

TEST(PlainRunTest, FindsTheSpecialByteAtEveryPositionAlignmentAndLength) {
  // Lengths 0..40 cover the portable loop (under 16), whole blocks and the
  // overlapping last block; offsets 0..15 every alignment of the text and
  // of each start within it.
  const unsigned char specials[] = {'"', '\\', 0x00, 0x0a, 0x1f, 0x80, 0xc3, 0xff};
  for (size_t length = 0; length <= 40; ++length) {
    for (size_t offset = 0; offset < 16; ++offset) {
      OwnText text(offset, length);
      for (size_t start = 0; start <= length; ++start) {
        const char* p = text.begin + start;
        ASSERT_EQ(FindPlainRunEnd(text.begin, p, text.end), text.end)
            << "length " << length << " offset " << offset << " start " << start;
        for (size_t at = start; at < length; ++at) {
          for (const unsigned char special : specials) {
            text.begin[at] = static_cast<char>(special);
            ASSERT_EQ(FindPlainRunEnd(text.begin, p, text.end), text.begin + at)
                << "length " << length << " offset " << offset << " start " << start << " at " << at
                << " byte " << static_cast<int>(special);
            // A second special byte after the first changes nothing.
            if (at + 1 < length) {
              text.begin[length - 1] = '"';
              ASSERT_EQ(FindPlainRunEnd(text.begin, p, text.end), text.begin + at);
              text.begin[length - 1] = 'a';
            }
            text.begin[at] = 'a';
          }
        }
      }
    }
  }
}

TEST(PlainRunTest, ClassifiesEveryByteValueAsTheDefinitionDoes) {
  for (size_t length : {1, 7, 8, 15, 16, 17, 31, 32, 33}) {
    OwnText text(0, length);
    for (size_t at = 0; at < length; ++at) {
      for (int byte = 0; byte < 256; ++byte) {
        text.begin[at] = static_cast<char>(byte);
        for (size_t start = 0; start <= at; ++start) {
          ASSERT_EQ(FindPlainRunEnd(text.begin, text.begin + start, text.end),
                    ReferencePlainRunEnd(text.begin + start, text.end))
              << "length " << length << " at " << at << " byte " << byte << " start " << start;
        }
      }
      text.begin[at] = 'a';
    }
  }
}

TEST(FlatObjectScannerTest, EscapesAtEveryPositionOfAStringAtTheEndOfTheText) {
  // A value of 0..40 bytes ending right before `"}` (the envelope's payload
  // is its last member), with one escape at each position, or two escaped
  // quotes in a row: the blocks copied while decoding never read past the
  // text (each in its own heap block for ASan), and the decoded value is the
  // DOM path's.
  const std::vector<std::string> escapes = {R"(\")", R"(\\)", R"(\n)", R"(\u00e9)", R"(\"\")"};
  Rows rows;
  for (size_t length = 0; length <= 40; ++length) {
    for (size_t at = 0; at <= length; ++at) {
      for (const std::string& escape : escapes) {
        std::string value(length, 'x');
        for (size_t i = 0; i < length; ++i) value[i] = static_cast<char>('a' + i % 26);
        value.insert(at, escape);
        rows.push_back("{\"k\":\"" + value + "\"}");
      }
    }
  }
  auto dom = JsonMultiPathEvaluator::Make();
  ASSERT_OK(dom->AddPath("$.k", false).status());
  // A nested path sends every row through the DOM (as in the tests below).
  ASSERT_OK(dom->AddPath("$.a.b", false).status());
  ColumnPtr input = StringColumn(rows);
  ASSERT_OK_AND_ASSIGN(std::vector<ColumnPtr> dom_out, dom->Evaluate(*input));
  FlatObjectScanner scanner;
  for (size_t row_idx = 0; row_idx < rows.size(); ++row_idx) {
    const std::string& row = *rows[row_idx];
    for (size_t offset : {0, 1, 7}) {
      OwnText text(offset, row.size());
      std::copy(row.begin(), row.end(), text.begin);
      ASSERT_TRUE(scanner.Scan(std::string_view(text.begin, row.size()))) << row;
      ASSERT_EQ(scanner.members().size(), 1u) << row;
      ASSERT_FALSE(dom_out[0]->IsNull(static_cast<int64_t>(row_idx))) << row;
      ASSERT_EQ(scanner.members()[0].text, dom_out[0]->StringValue(static_cast<int64_t>(row_idx)))
          << row;
    }
  }
}

// A row of a string or captured result column as text ("null", "s:<text>",
// "k<kind>:<bits>").
std::vector<std::string> Render(const columnar::Column& column) {
  std::vector<std::string> out;
  const bool captured = column.type->id() == columnar::TypeId::kStruct;
  for (int64_t row_idx = 0; row_idx < column.length; ++row_idx) {
    if (column.IsNull(row_idx)) {
      out.push_back("null");
      continue;
    }
    if (!captured) {
      out.push_back("s:" + std::string(column.StringValue(row_idx)));
      continue;
    }
    const columnar::Column& text = *column.children[0];
    const columnar::Column& kind = *column.children[1];
    const columnar::Column& bits = *column.children[2];
    if (!kind.IsNull(row_idx)) {
      out.push_back("k" + std::to_string(kind.Value<int8_t>(row_idx)) + ":" +
                    std::to_string(bits.Value<int64_t>(row_idx)));
    } else {
      out.push_back(text.IsNull(row_idx) ? "text-null"
                                         : "s:" + std::string(text.StringValue(row_idx)));
    }
  }
  return out;
}

// Rows the scanner reads (flat objects of every member kind) and rows it
// leaves to the DOM path, mixed in one batch.
const Rows kCorpus = {
    R"({"power":84.3,"voltage":230.1,"state":"ON","linkquality":248})",
    R"({"contact":false,"battery":97,"linkquality":"159"})",
    R"({"state":null,"state":"OFF","power":null,"power":1.5e3,"power":2})",
    R"({"state":"a\"b\\c\/d\n\u00e9\u20ac","battery":-7,"contact":true})",
    R"( { "power" : -0.0 , "voltage":1E-3,"linkquality":9007199254740993 } )",
    R"({"power":0.1,"voltage":1e22,"current":123456789012345678})",
    R"({"state":"","battery":"97","contact":"true","power":"1.5"})",
    R"({"power":-0,"state":"x"})",
    R"({"state":{"on":true},"battery":[1,2]})",
    R"({"state":"\ud83d\ude00","linkquality":12345678901234567890})",
    R"({"state":"ON"} trailing)",
    "{\"state\":\"caf\xc3\xa9\",\"battery\":1}",
    R"({'state':'single'})",
    R"({"state":"ON",})",
    R"([{"state":"ON"}])",
    R"("just a string")",
    "not json",
    "",
    "   ",
    std::nullopt,
    R"({})",
    R"({"power":1.7976931348623157e308,"voltage":4.9e-324,"current":2.2250738585072014e-308})",
    // Several escaped values in one row (decoded one after another in the
    // scanner's buffer), long runs between escapes, and escapes that turn
    // out invalid after decoding has started.
    R"({"state":"{\"power\":84.3,\"state\":\"ON\",\"linkquality\":248}","power":"x\ny\\z a run longer than a word\t","battery":"\u0041\u0042plain text after"})",
    R"({"state":"a long run before the escape \n then a bad one \q"})",
    R"({"state":"a long run before the escape \n then a surrogate \ud800"})",
    R"({"state":"a long run before the escape \n then a raw control)"
    "\x01"
    R"("})",
    // Where the object ends: the scanner looks for its closing brace first.
    "{\"state\":\"ON\",\"power\":1.5}  \t\r\n",
    R"({"power":12)",
    R"({"power":12}})",
    R"({"power":12} })",
    R"({"power":1.})",
    R"({"power":1e})",
    R"({"power":2e-})",
    R"({"power":1E+5 })",
    R"({"power":-})",
    R"({"power":})",
    R"({"contact":tru})",
    R"({"contact":true}x})",
    R"({"state":"x\"})",
    R"({"state":"x\})",
    R"({"state":"}"})",
    R"({"state":"}")",
    R"({"state" "x"})",
    R"({"state":"x" "power":1})",
    "}",
    "{",
    "{}}",
    " { } ",
};

// Every prefix of every row: texts that end inside every kind of token.
Rows Prefixes(const Rows& rows) {
  Rows out;
  for (const std::optional<std::string>& row : rows) {
    if (!row) continue;
    for (size_t length = 0; length <= row->size(); ++length) out.push_back(row->substr(0, length));
  }
  return out;
}

const std::vector<std::string> kKeyPaths = {"$.power",   "$.voltage", "$.current",
                                            "$.battery", "$.contact", "$.linkquality",
                                            "$.state",   "$.missing", "$['state']"};

void ExpectKeysAgreeWithTheDomPath(const Rows& rows) {
  for (bool capture : {false, true}) {
    // `fast` has only `$.name` paths (the scanner runs); `dom` also has a
    // nested path, which sends every row through the DOM.
    auto fast = JsonMultiPathEvaluator::Make();
    auto dom = JsonMultiPathEvaluator::Make();
    for (const std::string& path : kKeyPaths) {
      ASSERT_OK(fast->AddPath(path, capture).status());
      ASSERT_OK(dom->AddPath(path, capture).status());
    }
    ASSERT_OK(dom->AddPath("$.a.b", capture).status());
    ColumnPtr input = StringColumn(rows);
    for (int round = 0; round < 2; ++round) {
      ASSERT_OK_AND_ASSIGN(std::vector<ColumnPtr> fast_out, fast->Evaluate(*input));
      ASSERT_OK_AND_ASSIGN(std::vector<ColumnPtr> dom_out, dom->Evaluate(*input));
      for (size_t path_idx = 0; path_idx < kKeyPaths.size(); ++path_idx) {
        ASSERT_OK(columnar::ValidateColumn(*fast_out[path_idx]));
        EXPECT_EQ(Render(*fast_out[path_idx]), Render(*dom_out[path_idx]))
            << kKeyPaths[path_idx] << " capture " << capture;
      }
    }
  }
}

TEST(FlatObjectScannerTest, GetJsonObjectKeysAgreeWithTheDomPath) {
  ExpectKeysAgreeWithTheDomPath(kCorpus);
}

TEST(FlatObjectScannerTest, TruncatedRowsAgreeWithTheDomPath) {
  const Rows prefixes = Prefixes(kCorpus);
  ExpectKeysAgreeWithTheDomPath(prefixes);
  // Each in a heap block of its own, so that ASan sees any read past the
  // end; whether it is read is the same as from a longer buffer.
  FlatObjectScanner scanner;
  for (const std::optional<std::string>& row : prefixes) {
    OwnText text(0, row->size());
    std::copy(row->begin(), row->end(), text.begin);
    EXPECT_EQ(scanner.Scan(std::string_view(text.begin, row->size())), scanner.Scan(*row)) << *row;
  }
}

TEST(FlatObjectScannerTest, FromJsonOfStringFieldsAgreesWithTheDomPath) {
  // The same STRING fields with and without an INT field: only the first
  // schema takes the flat path.
  ASSERT_OK_AND_ASSIGN(columnar::SchemaPtr strings,
                       columnar::ParseDdlSchema("state STRING, power STRING, battery STRING"));
  ASSERT_OK_AND_ASSIGN(
      columnar::SchemaPtr mixed,
      columnar::ParseDdlSchema("state STRING, power STRING, battery STRING, zz INT"));
  ASSERT_OK_AND_ASSIGN(auto fast, JsonDecoder::Make(strings));
  ASSERT_OK_AND_ASSIGN(auto dom, JsonDecoder::Make(mixed));
  ColumnPtr input = StringColumn(kCorpus);
  for (int round = 0; round < 2; ++round) {
    ColumnPtr fast_corrupt;
    ColumnPtr dom_corrupt;
    DecodeStats fast_stats;
    DecodeStats dom_stats;
    ASSERT_OK_AND_ASSIGN(ColumnPtr fast_out,
                         fast->DecodeColumn(*input, &fast_corrupt, &fast_stats));
    ASSERT_OK_AND_ASSIGN(ColumnPtr dom_out, dom->DecodeColumn(*input, &dom_corrupt, &dom_stats));
    ASSERT_OK(columnar::ValidateColumn(*fast_out));
    for (int64_t row_idx = 0; row_idx < input->length; ++row_idx) {
      EXPECT_EQ(fast_out->IsNull(row_idx), dom_out->IsNull(row_idx)) << row_idx;
    }
    for (size_t field_idx = 0; field_idx < 3; ++field_idx) {
      EXPECT_EQ(Render(*fast_out->children[field_idx]), Render(*dom_out->children[field_idx]))
          << "field " << field_idx;
    }
    EXPECT_EQ(Render(*fast_corrupt), Render(*dom_corrupt));
    EXPECT_EQ(fast_stats.malformed_rows, dom_stats.malformed_rows);
    EXPECT_EQ(fast_stats.partial_rows, dom_stats.partial_rows);
  }
}

}  // namespace
}  // namespace silt::json
