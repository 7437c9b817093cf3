// Text forms of column values for `silt read`: one JSON object per row,
// CSV with a header, and the aligned table of Spark's Dataset.show().
//
// JSON and CSV come in two styles (ValueStyle):
//
//   exact (the default): every value can be read back to the same value.
//   Timestamps "2026-06-22T08:16:00.123456Z" (always six fraction digits,
//   UTC), timestamp_ntz "2026-06-22T08:16:00.123456"; doubles and floats in
//   the shortest digits that read back to the same binary value (C++
//   std::to_chars), laid out as Python's repr ("84.3", "1.0", "1e+22",
//   "5e-324"; NaN/Infinity/-Infinity as JSON strings), a float's digits
//   being those of the float; decimals
//   in plain notation with all their scale digits ("1.50", "0.00000001").
//
//   spark: as Spark's to_json and CSV writer print them with default
//   options: timestamps "2026-06-22T08:16:00.123Z" (Spark's default
//   timestampFormat yyyy-MM-dd'T'HH:mm:ss.SSSXXX in UTC, so sub-millisecond
//   digits are dropped), timestamp_ntz "2026-06-22T08:16:00.123"; doubles
//   as Java prints them ("84.3", "1.0E10"; not always the shortest digits);
//   decimals as Java's BigDecimal.toString ("1E-8").
//
//   Both: NULL struct fields are omitted (Spark's default
//   ignoreNullFields); dates yyyy-MM-dd; binary as base64; arrays/maps/
//   structs as JSON (nulls inside arrays and maps are written as null);
//   a variant as its own JSON in place, as Spark's Variant.toJson writes it
//   (timestamps "2026-06-22 08:16:00.123+00:00" in UTC, NaN/Infinity
//   quoted), the same in both styles.
//   CSV: RFC 4180 quoting (a field holding a comma, quote, CR or LF is
//   quoted, quotes doubled); NULL is an empty field, an empty string is "";
//   nested values as their JSON text.
//   Table: Spark's show(): cells are CAST(value AS STRING) ("2026-06-22
//   08:16:00.123", "[1, 2]", "{a, 1}", "{k -> v}", binary as "[0A FF]"),
//   a variant as its JSON text, NULL as "NULL", control characters escaped, cells longer than the
//   truncation width cut to width-3 characters plus "...", right-aligned
//   between "+---+" borders, and "only showing top N rows" when more rows
//   exist.
//
// Thread safety: pure functions; a TablePrinter is used by one thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "silt/base/json_writer.h"
#include "silt/columnar/column.h"

namespace silt::cli {

// How JSON and CSV print values (see above).
enum class ValueStyle { kExact, kSpark };

// Writes row `row_idx` of `column` as one JSON value.
// REQUIRES: the row is valid (not NULL); 0 <= row_idx < column.length.
void WriteJsonValue(const columnar::Column& column, int64_t row_idx, JsonWriter* writer,
                    ValueStyle style = ValueStyle::kSpark);

// Row `row_idx` of `batch` as a JSON object {"col":value,...} in schema
// order, NULL columns omitted. No trailing newline.
std::string RowToJson(const columnar::RecordBatch& batch, int64_t row_idx,
                      ValueStyle style = ValueStyle::kSpark);

// The CSV header line (column names, quoted as needed), without newline.
std::string CsvHeader(const columnar::Schema& schema);
// Row `row_idx` of `batch` as one CSV line, without newline.
std::string RowToCsv(const columnar::RecordBatch& batch, int64_t row_idx,
                     ValueStyle style = ValueStyle::kSpark);
// Quotes `field` for CSV when it holds a comma, quote, CR or LF.
std::string CsvQuote(std::string_view field);

// CAST(value AS STRING) as Spark prints it in show(); "NULL" for a NULL row.
std::string ShowCell(const columnar::Column& column, int64_t row_idx);

// Java's BigDecimal.toString of unscaled * 10^-scale ("1.50", "-0.001",
// "1E-8").
std::string FormatDecimal(__int128 unscaled, int scale);
// Standard base64 (RFC 4648, with padding, no line breaks).
std::string Base64Encode(std::string_view bytes);
// Spark's timestamp text for to_json/CSV: millisecond precision, UTC, 'Z'.
std::string FormatJsonTimestamp(int64_t micros);
// The exact style's timestamp text: six fraction digits, UTC, 'Z'.
std::string FormatExactTimestamp(int64_t micros);
// The shortest text that reads back to `v` ("0.1", "1.0", "1e+22"), laid
// out as Python's repr; NaN,
// Infinity and -Infinity for the non-finite values.
std::string FormatShortestDouble(double v);
std::string FormatShortestFloat(float v);
// Spark's CAST(timestamp AS STRING) in UTC: "2026-06-22 08:16:00.12"
// (fraction with trailing zeros removed, none when zero).
std::string FormatShowTimestamp(int64_t micros);

// Collects rows and renders them as Spark's show() does.
class TablePrinter {
 public:
  // `truncate`: maximum cell width in characters (Spark's default 20);
  // 0 disables truncation (cells are then left-aligned, as in Spark).
  TablePrinter(std::vector<std::string> header, int truncate = 20);

  // Adds the cells of row `row_idx` of `batch` (ShowCell per column).
  // REQUIRES: batch has as many columns as the header.
  void AddRow(const columnar::RecordBatch& batch, int64_t row_idx);
  int64_t num_rows() const { return static_cast<int64_t>(rows_.size()); }

  // The rendered table; `has_more` appends "only showing top N rows".
  std::string Render(bool has_more) const;

 private:
  std::string Truncate(std::string cell) const;
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
  int truncate_;
};

}  // namespace silt::cli
