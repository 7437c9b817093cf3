// silt_parquet_roundtrip: a test-only tool for the Parquet interoperability
// tests (tests/integration/test_parquet_interop.py). Not installed.
//
//   silt_parquet_roundtrip write PATH [--codec C] [--no-dictionary] [--rows N]
//                                     [--page-bytes N] [--row-group-bytes N]
//                                     [--nested] [--page-v2] [--repeat K]
//                                     [--encoding COLUMN=ENCODING]...
//       Writes a fixed data set covering every primitive type (nullable and
//       NOT NULL, decimals of each physical width) to PATH on the local disk
//       and prints the rows it wrote as JSON lines. --nested writes structs,
//       lists and maps nested three levels deep instead. --encoding picks a
//       column's encoding (see ParseColumnEncoding); --page-v2 writes data
//       page v2. --repeat K gives K rows in a row the same values (so that
//       every column's dictionary pays off and is kept).
//   silt_parquet_roundtrip read PATH
//       Reads PATH with silt's reader and prints its rows as JSON lines.
//   silt_parquet_roundtrip schema PATH
//       Prints the file's schema as Spark DDL.
//   silt_parquet_roundtrip copy IN OUT [write options as above]
//                                      [--bloom COLUMN[:NDV[:FPP]]]...
//       Reads IN with silt and writes its rows to OUT with silt (--bloom
//       adds a bloom filter for a column; --bloom works for write too).
//   silt_parquet_roundtrip bloom PATH COLUMN VALUE
//       Prints per row group whether its bloom filter may hold VALUE:
//       true, false, or null (no filter).
//   silt_parquet_roundtrip prune PATH [--columns A,B] [--pred COL OP VALUE]...
//       Prints {"row_groups": [...], "rows_per_group": [...]} for the row
//       groups SelectRowGroups keeps and the rows ReadRowGroupPruned returns
//       for them. OP: = != < <= > >= in (comma-separated values) isnull
//       notnull (VALUE ignored).
//
// JSON value forms: numbers for integers, dates (days) and timestamps
// (microseconds); floats in shortest round-trip form with "NaN",
// "Infinity", "-Infinity" as strings; decimals as strings ("-12.34");
// strings as JSON strings; binary as lowercase hex strings; structs as
// objects; arrays as lists; maps as lists of [key, value] pairs.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "silt/base/json_writer.h"
#include "silt/columnar/builder.h"
#include "silt/parquet/file_reader.h"
#include "silt/parquet/file_writer.h"

namespace silt::parquet {
namespace {

using columnar::Column;
using columnar::ColumnBuilder;
using columnar::DataType;
using columnar::Field;
using columnar::RecordBatch;
using columnar::TypeId;

std::string FormatFloating(double v) {
  if (std::isnan(v)) return "\"NaN\"";
  if (std::isinf(v)) return v > 0 ? "\"Infinity\"" : "\"-Infinity\"";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), v);
  std::string s(buf, res.ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string FormatDecimal(__int128 v, int scale) {
  const bool negative = v < 0;
  unsigned __int128 u =
      negative ? -static_cast<unsigned __int128>(v) : static_cast<unsigned __int128>(v);
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  } while (u != 0);
  if (scale > 0) {
    if (static_cast<int>(digits.size()) <= scale) {
      digits.insert(0, static_cast<size_t>(scale + 1) - digits.size(), '0');
    }
    digits.insert(digits.size() - static_cast<size_t>(scale), ".");
  }
  return "\"" + std::string(negative ? "-" : "") + digits + "\"";
}

std::string FormatValue(const Column& c, int64_t row) {
  if (c.IsNull(row)) return "null";
  switch (c.type->id()) {
    case TypeId::kBoolean: return c.BoolValue(row) ? "true" : "false";
    case TypeId::kByte: return std::to_string(c.Value<int8_t>(row));
    case TypeId::kShort: return std::to_string(c.Value<int16_t>(row));
    case TypeId::kInt:
    case TypeId::kDate: return std::to_string(c.Value<int32_t>(row));
    case TypeId::kLong:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: return std::to_string(c.Value<int64_t>(row));
    case TypeId::kFloat: return FormatFloating(static_cast<double>(c.Value<float>(row)));
    case TypeId::kDouble: return FormatFloating(c.Value<double>(row));
    case TypeId::kDecimal: return FormatDecimal(c.Value<__int128>(row), c.type->scale());
    case TypeId::kString: {
      std::string out = "\"";
      AppendJsonEscaped(&out, c.StringValue(row));
      return out + "\"";
    }
    case TypeId::kBinary: {
      static const char* hex = "0123456789abcdef";
      std::string out = "\"";
      for (unsigned char ch : c.StringValue(row)) {
        out.push_back(hex[ch >> 4]);
        out.push_back(hex[ch & 15]);
      }
      return out + "\"";
    }
    case TypeId::kNull: return "null";
    case TypeId::kStruct: {
      std::string out = "{";
      for (int i = 0; i < c.type->num_fields(); ++i) {
        if (i > 0) out += ",";
        out += "\"";
        AppendJsonEscaped(&out, c.type->field(i).name);
        out += "\":" + FormatValue(*c.children[static_cast<size_t>(i)], row);
      }
      return out + "}";
    }
    case TypeId::kArray:
    case TypeId::kMap: {
      // Arrays as JSON lists; maps as lists of [key, value] pairs.
      const bool is_map = c.type->id() == TypeId::kMap;
      const Column& child = *c.children[0];
      std::string out = "[";
      for (int32_t k = c.offsets()[row]; k < c.offsets()[row + 1]; ++k) {
        if (k > c.offsets()[row]) out += ",";
        if (is_map) {
          out += "[" + FormatValue(*child.children[0], k) + "," +
                 FormatValue(*child.children[1], k) + "]";
        } else {
          out += FormatValue(child, k);
        }
      }
      return out + "]";
    }
    default: return "\"<unsupported>\"";
  }
}

void PrintRows(const RecordBatch& batch) {
  std::string line;
  for (int64_t row = 0; row < batch.num_rows; ++row) {
    line = "{";
    for (int col_idx = 0; col_idx < batch.num_columns(); ++col_idx) {
      if (col_idx > 0) line += ",";
      line += "\"";
      AppendJsonEscaped(&line, batch.schema->field(col_idx).name);
      line += "\":";
      line += FormatValue(*batch.column(col_idx), row);
    }
    line += "}\n";
    std::fwrite(line.data(), 1, line.size(), stdout);
  }
}

__int128 Pow10(int n) {
  __int128 v = 1;
  for (int i = 0; i < n; ++i) v *= 10;
  return v;
}

// The fixed data set: every value is a function of (row, column), with
// extremes in the first rows and nulls every 4th row of nullable columns.
void AppendValue(ColumnBuilder* b, const DataType& type, bool nullable, int64_t row) {
  if (nullable && row % 4 == 3) {
    b->AppendNull();
    return;
  }
  const int64_t x = row * 2654435761LL % 1000003;
  const bool sign = row % 2 == 0;
  switch (type.id()) {
    case TypeId::kBoolean: b->AppendBool(x % 3 == 0); break;
    case TypeId::kByte:
      b->Append<int8_t>(row == 0 ? -128 : row == 1 ? 127 : static_cast<int8_t>(x % 200 - 100));
      break;
    case TypeId::kShort:
      b->Append<int16_t>(row == 0   ? -32768
                         : row == 1 ? 32767
                                    : static_cast<int16_t>(x % 60000 - 30000));
      break;
    case TypeId::kInt:
      b->Append<int32_t>(row == 0   ? std::numeric_limits<int32_t>::min()
                         : row == 1 ? std::numeric_limits<int32_t>::max()
                                    : static_cast<int32_t>(sign ? x * 2000 : -x * 1999));
      break;
    case TypeId::kLong:
      b->Append<int64_t>(row == 0   ? std::numeric_limits<int64_t>::min()
                         : row == 1 ? std::numeric_limits<int64_t>::max()
                                    : (sign ? x : -x) * 9000000000037LL);
      break;
    case TypeId::kFloat: {
      const float special[] = {
          std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
          -std::numeric_limits<float>::infinity(), -0.0f, std::numeric_limits<float>::max()};
      b->Append<float>(row < 5 ? special[row] : static_cast<float>(sign ? x : -x) / 8.0f);
      break;
    }
    case TypeId::kDouble: {
      const double special[] = {
          std::numeric_limits<double>::quiet_NaN(), -std::numeric_limits<double>::infinity(),
          std::numeric_limits<double>::infinity(), -0.0, std::numeric_limits<double>::denorm_min()};
      b->Append<double>(row < 5 ? special[row] : static_cast<double>(sign ? x : -x) / 3.0);
      break;
    }
    case TypeId::kDecimal: {
      const __int128 limit = Pow10(type.precision()) - 1;
      __int128 v = row == 0   ? -limit
                   : row == 1 ? limit
                              : static_cast<__int128>(x) * 1000000007 * 1000000009 % (limit + 1);
      b->Append<__int128>(row < 2 || sign ? v : -v);
      break;
    }
    case TypeId::kString: {
      static const char* words[] = {"",
                                    "plain ascii",
                                    "caf\xc3\xa9",
                                    "\xe6\x97\xa5\xe6\x9c\xac",
                                    "quote \" and \\ backslash",
                                    "\xf0\x9f\x98\x80 emoji",
                                    "tab\tnewline\n"};
      b->AppendString(std::string(words[x % 7]) + (x % 5 == 0 ? "" : std::to_string(x % 50)));
      break;
    }
    case TypeId::kBinary: {
      std::string s;
      for (int64_t i = 0; i < x % 6; ++i) s.push_back(static_cast<char>((x * 37 + i * 101) % 256));
      b->AppendString(s);
      break;
    }
    case TypeId::kDate:
      b->Append<int32_t>(row == 0 ? -719162
                                  : static_cast<int32_t>(sign ? x % 50000 : -(x % 50000)));
      break;
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz:
      b->Append<int64_t>((sign ? x : -x) * 3600000000LL + x % 1000000);
      break;
    default: break;
  }
}

// Nested values: structs, lists and maps three levels deep, with nulls,
// empty lists and empty maps. `state` is a per-row random state.
uint64_t NextRandom(uint64_t* state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

void AppendNested(ColumnBuilder* b, const DataType& type, bool nullable, int64_t row,
                  uint64_t* state) {
  const uint64_t r = NextRandom(state);
  if (nullable && r % 6 == 0) {
    b->AppendNull();
    return;
  }
  switch (type.id()) {
    case TypeId::kStruct:
      for (int i = 0; i < type.num_fields(); ++i) {
        AppendNested(b->child(i), *type.field(i).type, type.field(i).nullable, row, state);
      }
      b->AppendValid();
      return;
    case TypeId::kArray: {
      const int n = static_cast<int>((r >> 8) % 4);
      for (int i = 0; i < n; ++i) {
        AppendNested(b->child(0), *type.element_type(), type.contains_null(), row, state);
      }
      b->CloseList();
      return;
    }
    case TypeId::kMap: {
      const int n = static_cast<int>((r >> 8) % 3);
      ColumnBuilder* entries = b->child(0);
      for (int i = 0; i < n; ++i) {
        // Distinct keys within one map: the entry index is part of the key.
        AppendValue(entries->child(0), *type.key_type(), false, row * 3 + i);
        AppendNested(entries->child(1), *type.value_type(), type.value_contains_null(), row, state);
        entries->AppendValid();
      }
      b->CloseList();
      return;
    }
    default: AppendValue(b, type, false, static_cast<int64_t>((r >> 16) % 100000)); return;
  }
}

columnar::SchemaPtr NestedDataSetSchema() {
  auto f = [](std::string name, columnar::TypePtr type, bool nullable = true) {
    return Field{std::move(name), std::move(type), nullable};
  };
  columnar::TypePtr inner =
      DataType::Struct({f("d", DataType::Decimal(20, 4)), f("ts", DataType::Timestamp(), false)});
  return DataType::Struct({
      f("id", DataType::Long(), false),
      f("n_struct", DataType::Struct({f("a", DataType::Int()), f("b", DataType::String(), false),
                                      f("inner", inner)})),
      f("n_list", DataType::Array(DataType::Int())),
      f("n_list_nn", DataType::Array(DataType::String(), false), false),
      f("n_list3", DataType::Array(DataType::Array(DataType::Array(DataType::Double())))),
      f("n_map", DataType::Map(DataType::String(), DataType::Array(DataType::Date()))),
      f("n_list_struct",
        DataType::Array(DataType::Struct(
            {f("x", DataType::Long()), f("tags", DataType::Array(DataType::String()))}))),
      f("n_map_struct",
        DataType::Map(
            DataType::Int(),
            DataType::Struct({f("p", DataType::Boolean()),
                              f("q", DataType::Map(DataType::String(), DataType::Binary()))}))),
      f("n_req_struct",
        DataType::Struct(
            {f("ts_ntz", DataType::TimestampNtz()), f("byte", DataType::Byte(), false)}),
        false),
  });
}

columnar::SchemaPtr DataSetSchema() {
  const std::vector<std::pair<std::string, columnar::TypePtr>> types = {
      {"c_bool", DataType::Boolean()},
      {"c_byte", DataType::Byte()},
      {"c_short", DataType::Short()},
      {"c_int", DataType::Int()},
      {"c_long", DataType::Long()},
      {"c_float", DataType::Float()},
      {"c_double", DataType::Double()},
      {"c_dec_int32", DataType::Decimal(9, 2)},
      {"c_dec_int64", DataType::Decimal(18, 6)},
      {"c_dec_flba9", DataType::Decimal(20, 4)},
      {"c_dec_flba16", DataType::Decimal(38, 10)},
      {"c_string", DataType::String()},
      {"c_binary", DataType::Binary()},
      {"c_date", DataType::Date()},
      {"c_ts", DataType::Timestamp()},
      {"c_ts_ntz", DataType::TimestampNtz()},
  };
  std::vector<Field> fields;
  for (const auto& [name, type] : types) {
    fields.push_back(Field{name, type, true});
    fields.push_back(Field{name + "_nn", type, false});
  }
  return DataType::Struct(std::move(fields));
}

int Fail(const Status& s) {
  std::cerr << s.ToString() << "\n";
  return 1;
}

// Parses the write options shared by `write` and `copy`; returns 0, or the
// exit code on a bad option.
int ParseWriteOptions(int argc, char** argv, WriterOptions* out, int64_t* rows, bool* nested,
                      int64_t* repeat = nullptr) {
  WriterOptions& options = *out;
  for (int i = 0; i < argc; ++i) {
    std::string arg = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << arg << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--codec") {
      Result<Compression> c = ParseCompression(next());
      if (!c.ok()) return Fail(c.status());
      options.compression = *c;
    } else if (arg == "--no-dictionary") {
      options.enable_dictionary = false;
    } else if (arg == "--rows" && rows != nullptr) {
      *rows = std::stoll(next());
    } else if (arg == "--page-bytes") {
      options.page_bytes = std::stoll(next());
    } else if (arg == "--row-group-bytes") {
      options.row_group_bytes = std::stoll(next());
    } else if (arg == "--repeat" && repeat != nullptr) {
      *repeat = std::max<int64_t>(1, std::stoll(next()));
    } else if (arg == "--nested" && nested != nullptr) {
      *nested = true;
    } else if (arg == "--page-v2") {
      options.data_page_v2 = true;
    } else if (arg == "--bloom") {
      // COLUMN[:NDV[:FPP]], repeatable.
      const std::string spec = next();
      const size_t c1 = spec.find(':');
      BloomFilterOptions bloom;
      if (c1 != std::string::npos) {
        const size_t c2 = spec.find(':', c1 + 1);
        bloom.ndv = std::stoll(spec.substr(c1 + 1, c2 == std::string::npos ? c2 : c2 - c1 - 1));
        if (c2 != std::string::npos) bloom.fpp = std::stod(spec.substr(c2 + 1));
      }
      options.bloom_filters[spec.substr(0, c1)] = bloom;
    } else if (arg == "--encoding") {
      // COLUMN=ENCODING, repeatable.
      const std::string spec = next();
      const size_t eq = spec.find('=');
      if (eq == std::string::npos) {
        std::cerr << "--encoding needs COLUMN=ENCODING\n";
        return 2;
      }
      Result<ColumnEncoding> e = ParseColumnEncoding(spec.substr(eq + 1));
      if (!e.ok()) return Fail(e.status());
      options.column_encodings[spec.substr(0, eq)] = *e;
    } else {
      std::cerr << "unknown option " << arg << "\n";
      return 2;
    }
  }
  return 0;
}

int Write(const std::string& path, int argc, char** argv) {
  WriterOptions options;
  int64_t rows = 1000;
  bool nested = false;
  int64_t repeat = 1;
  if (int rc = ParseWriteOptions(argc, argv, &options, &rows, &nested, &repeat); rc != 0) {
    return rc;
  }
  columnar::SchemaPtr schema = nested ? NestedDataSetSchema() : DataSetSchema();
  auto batch = std::make_shared<RecordBatch>();
  batch->schema = schema;
  batch->num_rows = rows;
  for (size_t col_idx = 0; col_idx < schema->fields().size(); ++col_idx) {
    const Field& f = schema->fields()[col_idx];
    ColumnBuilder b(f.type);
    for (int64_t row = 0; row < rows; ++row) {
      if (nested && f.type->is_nested()) {
        uint64_t state = static_cast<uint64_t>(row) * 1000003 + col_idx;
        AppendNested(&b, *f.type, f.nullable, row, &state);
      } else {
        AppendValue(&b, *f.type, f.nullable, row / repeat);
      }
    }
    batch->columns.push_back(b.Finish());
  }
  auto fs = fs::MakeLocalFileSystem();
  Result<std::unique_ptr<ParquetFileWriter>> writer =
      ParquetFileWriter::Open(fs.get(), path, schema, options);
  if (!writer.ok()) return Fail(writer.status());
  // Several batches, as a stream would deliver them.
  const int64_t step = columnar::kTargetBatchRows;
  for (int64_t offset = 0; offset < rows; offset += step) {
    columnar::RecordBatchPtr part =
        columnar::SliceBatch(*batch, offset, std::min(step, rows - offset));
    Status s = (*writer)->WriteBatch(*part);
    if (!s.ok()) return Fail(s);
  }
  Result<WriteResult> result = (*writer)->Close();
  if (!result.ok()) return Fail(result.status());
  PrintRows(*batch);
  return 0;
}

int Read(const std::string& path, bool schema_only) {
  auto fs = fs::MakeLocalFileSystem();
  Result<std::unique_ptr<ParquetFileReader>> reader = ParquetFileReader::Open(fs.get(), path);
  if (!reader.ok()) return Fail(reader.status());
  if (schema_only) {
    std::cout << (*reader)->schema()->ToDdl() << "\n";
    return 0;
  }
  for (int rg = 0; rg < (*reader)->num_row_groups(); ++rg) {
    Result<columnar::RecordBatchPtr> batch = (*reader)->ReadRowGroup(rg);
    if (!batch.ok()) return Fail(batch.status());
    PrintRows(**batch);
  }
  return 0;
}

// Reads IN with silt and writes it to OUT with silt (write options as for
// `write`); prints nothing.
int Copy(const std::string& in, const std::string& out, int argc, char** argv) {
  WriterOptions options;
  if (int rc = ParseWriteOptions(argc, argv, &options, nullptr, nullptr); rc != 0) return rc;
  auto fs = fs::MakeLocalFileSystem();
  Result<std::unique_ptr<ParquetFileReader>> reader = ParquetFileReader::Open(fs.get(), in);
  if (!reader.ok()) return Fail(reader.status());
  Result<std::unique_ptr<ParquetFileWriter>> writer =
      ParquetFileWriter::Open(fs.get(), out, (*reader)->schema(), options);
  if (!writer.ok()) return Fail(writer.status());
  for (int rg = 0; rg < (*reader)->num_row_groups(); ++rg) {
    Result<columnar::RecordBatchPtr> batch = (*reader)->ReadRowGroup(rg);
    if (!batch.ok()) return Fail(batch.status());
    const int64_t step = columnar::kTargetBatchRows;
    for (int64_t offset = 0; offset < (*batch)->num_rows; offset += step) {
      columnar::RecordBatchPtr part =
          columnar::SliceBatch(**batch, offset, std::min(step, (*batch)->num_rows - offset));
      if (Status s = (*writer)->WriteBatch(*part); !s.ok()) return Fail(s);
    }
  }
  Result<WriteResult> result = (*writer)->Close();
  if (!result.ok()) return Fail(result.status());
  return 0;
}

// The type of `name` (top-level or dotted through structs) in `schema`.
columnar::TypePtr ColumnType(const columnar::SchemaPtr& schema, const std::string& name) {
  columnar::TypePtr type = schema;
  size_t start = 0;
  while (type != nullptr) {
    const size_t dot = name.find('.', start);
    const std::string part = name.substr(start, dot == std::string::npos ? dot : dot - start);
    if (type->id() != TypeId::kStruct) return nullptr;
    const int k = type->FieldIndex(part);
    if (k < 0) {
      // A top-level name with dots in it.
      if (start == 0 && schema->FieldIndex(name) >= 0)
        return schema->field(schema->FieldIndex(name)).type;
      return nullptr;
    }
    type = type->field(k).type;
    if (dot == std::string::npos) return type;
    start = dot + 1;
  }
  return nullptr;
}

// A literal in the tool's JSON forms' text: integers, floats, strings as
// they are, decimals as "-12.34" (scaled to the column's scale).
columnar::PredicateValue ParseLiteral(const columnar::DataType& type, const std::string& text) {
  columnar::PredicateValue v;
  switch (type.id()) {
    case TypeId::kFloat:
    case TypeId::kDouble: v.f64 = std::stod(text); break;
    case TypeId::kString:
    case TypeId::kBinary: v.str = text; break;
    case TypeId::kBoolean: v.i64 = text == "true" ? 1 : 0; break;
    case TypeId::kDecimal: {
      __int128 unscaled = 0;
      int frac = -1;
      bool neg = false;
      for (char ch : text) {
        if (ch == '-') {
          neg = true;
        } else if (ch == '.') {
          frac = 0;
        } else {
          unscaled = unscaled * 10 + (ch - '0');
          if (frac >= 0) ++frac;
        }
      }
      for (int k = std::max(frac, 0); k < type.scale(); ++k) unscaled *= 10;
      v.i128 = neg ? -unscaled : unscaled;
      break;
    }
    default: v.i64 = std::stoll(text); break;
  }
  return v;
}

// bloom PATH COLUMN VALUE: one JSON line per row group, true / false (the
// filter rules the value out) / null (no filter).
int Bloom(const std::string& path, const std::string& column, const std::string& value) {
  auto fs = fs::MakeLocalFileSystem();
  Result<std::unique_ptr<ParquetFileReader>> reader = ParquetFileReader::Open(fs.get(), path);
  if (!reader.ok()) return Fail(reader.status());
  columnar::TypePtr type = ColumnType((*reader)->schema(), column);
  if (type == nullptr) return Fail(Status::InvalidArgument("no column ", column));
  for (int rg = 0; rg < (*reader)->num_row_groups(); ++rg) {
    Result<std::optional<bool>> r =
        (*reader)->BloomFilterMightContain(rg, column, type, ParseLiteral(*type, value));
    if (!r.ok()) return Fail(r.status());
    std::cout << (!r->has_value() ? "null" : (**r ? "true" : "false")) << "\n";
  }
  return 0;
}

// prune PATH [--columns A,B] [--pred COLUMN OP VALUE]...: prints
// {"row_groups": [kept...], "rows_per_group": [...]} and then the rows
// ReadRowGroupPruned returns for the kept row groups. OP: = != < <= > >=
// in (VALUE comma-separated) isnull notnull (VALUE ignored).
int Prune(const std::string& path, int argc, char** argv) {
  auto fs = fs::MakeLocalFileSystem();
  Result<std::unique_ptr<ParquetFileReader>> reader = ParquetFileReader::Open(fs.get(), path);
  if (!reader.ok()) return Fail(reader.status());
  std::vector<std::string> columns;
  columnar::Conjunction conj;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--columns" && i + 1 < argc) {
      std::string list = argv[++i];
      size_t start = 0;
      while (start <= list.size()) {
        size_t comma = list.find(',', start);
        columns.push_back(list.substr(start, comma == std::string::npos ? comma : comma - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
    } else if (arg == "--pred" && i + 3 < argc) {
      columnar::ColumnPredicate p;
      p.column = argv[++i];
      const std::string op = argv[++i];
      const std::string value = argv[++i];
      p.type = ColumnType((*reader)->schema(), p.column);
      if (p.type == nullptr) return Fail(Status::InvalidArgument("no column ", p.column));
      using columnar::PredicateOp;
      if (op == "=")
        p.op = PredicateOp::kEq;
      else if (op == "!=")
        p.op = PredicateOp::kNotEq;
      else if (op == "<")
        p.op = PredicateOp::kLt;
      else if (op == "<=")
        p.op = PredicateOp::kLtEq;
      else if (op == ">")
        p.op = PredicateOp::kGt;
      else if (op == ">=")
        p.op = PredicateOp::kGtEq;
      else if (op == "in")
        p.op = PredicateOp::kIn;
      else if (op == "isnull")
        p.op = PredicateOp::kIsNull;
      else if (op == "notnull")
        p.op = PredicateOp::kIsNotNull;
      else
        return Fail(Status::InvalidArgument("unknown operator ", op));
      if (p.op == PredicateOp::kIn) {
        size_t start = 0;
        while (true) {
          size_t comma = value.find(',', start);
          p.values.push_back(ParseLiteral(
              *p.type, value.substr(start, comma == std::string::npos ? comma : comma - start)));
          if (comma == std::string::npos) break;
          start = comma + 1;
        }
      } else if (p.op != PredicateOp::kIsNull && p.op != PredicateOp::kIsNotNull) {
        p.values.push_back(ParseLiteral(*p.type, value));
      }
      conj.push_back(std::move(p));
    } else {
      std::cerr << "unknown option " << arg << "\n";
      return 2;
    }
  }
  Result<std::vector<int>> kept = (*reader)->SelectRowGroups(conj);
  if (!kept.ok()) return Fail(kept.status());
  std::vector<columnar::RecordBatchPtr> batches;
  std::string head = "{\"row_groups\": [";
  std::string counts = "], \"rows_per_group\": [";
  for (size_t k = 0; k < kept->size(); ++k) {
    Result<columnar::RecordBatchPtr> batch =
        (*reader)->ReadRowGroupPruned((*kept)[k], columns, conj);
    if (!batch.ok()) return Fail(batch.status());
    head += (k ? ", " : "") + std::to_string((*kept)[k]);
    counts += (k ? ", " : "") + std::to_string((*batch)->num_rows);
    batches.push_back(std::move(*batch));
  }
  std::cout << head << counts << "]}\n";
  for (const auto& b : batches) PrintRows(*b);
  return 0;
}

int Main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: silt_parquet_roundtrip write|read|schema PATH [options]\n";
    return 2;
  }
  const std::string command = argv[1];
  const std::string path = argv[2];
  if (command == "write") return Write(path, argc - 3, argv + 3);
  if (command == "read") return Read(path, false);
  if (command == "schema") return Read(path, true);
  if (command == "copy" && argc >= 4) return Copy(path, argv[3], argc - 4, argv + 4);
  if (command == "bloom" && argc == 5) return Bloom(path, argv[3], argv[4]);
  if (command == "prune") return Prune(path, argc - 3, argv + 3);
  std::cerr << "unknown command " << command << "\n";
  return 2;
}

}  // namespace
}  // namespace silt::parquet

int main(int argc, char** argv) { return silt::parquet::Main(argc, argv); }
