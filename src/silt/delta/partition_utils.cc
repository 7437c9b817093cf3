#include "silt/delta/partition_utils.h"

#include <simdjson.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>

#include "silt/base/json_writer.h"
#include "silt/base/strings.h"
#include "silt/base/utf8.h"
#include "silt/columnar/builder.h"
#include "silt/columnar/temporal.h"
#include "silt/fs/file_system.h"

namespace silt::delta {

namespace {

constexpr char kHexUpper[] = "0123456789ABCDEF";

bool NeedsPartitionEscape(unsigned char c) {
  if (c >= 0x01 && c <= 0x1F) return true;
  switch (c) {
    case '"':
    case '#':
    case '%':
    case '\'':
    case '*':
    case '/':
    case ':':
    case '=':
    case '?':
    case '\\':
    case 0x7F:
    case '{':
    case '[':
    case ']':
    case '^': return true;
    default: return false;
  }
}

// java.net.URI's legal path characters: unreserved (alphanum and
// "-_.!~*'()"), the punctuation ";:@&=+$," and the separator '/'.
bool IsUriPathChar(unsigned char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::strchr("-_.!~*'();:@&=+$,/", c) != nullptr && c != '\0';
}

// The length of the UTF-8 sequence starting at s[i] and its code point, or
// 0 when the bytes there are not a well-formed sequence.
int DecodeUtf8(std::string_view s, size_t i, uint32_t* code_point) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char lead = byte(i);
  int len = 0;
  uint32_t cp = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    len = 2;
    cp = lead & 0x1F;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    len = 3;
    cp = lead & 0x0F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    len = 4;
    cp = lead & 0x07;
  } else {
    return 0;
  }
  if (i + static_cast<size_t>(len) > s.size()) return 0;
  for (int k = 1; k < len; ++k) {
    const unsigned char c = byte(i + static_cast<size_t>(k));
    if ((c & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (c & 0x3F);
  }
  const uint32_t min_for_len[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < min_for_len[len] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  *code_point = cp;
  return len;
}

// java.net.URI's "other" characters, which it keeps unquoted in a path:
// non-ASCII code points that are neither ISO controls (U+0080-U+009F) nor
// space separators (Unicode Zs, Zl, Zp: Character.isSpaceChar).
bool IsUriOtherChar(uint32_t cp) {
  if (cp < 0xA0) return false;
  switch (cp) {
    case 0xA0:
    case 0x1680:
    case 0x202F:
    case 0x205F:
    case 0x3000:
    case 0x2028:
    case 0x2029: return false;
    default: return !(cp >= 0x2000 && cp <= 0x200A);
  }
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void AppendPercent(std::string* out, unsigned char c) {
  *out += '%';
  *out += kHexUpper[c >> 4];
  *out += kHexUpper[c & 0xF];
}

Status BadValue(std::string_view value, const columnar::DataType& type) {
  return Status::InvalidArgument("partition value '", value, "' is not a valid ",
                                 type.JsonTypeName());
}

template <typename T>
Result<T> ParseInteger(std::string_view s, const columnar::DataType& type) {
  T v{};
  std::string_view digits = s;
  if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (ec != std::errc() || ptr != digits.data() + digits.size() || digits.empty()) {
    return BadValue(s, type);
  }
  return v;
}

// strtod accepts Java's "NaN", "Infinity" and "-Infinity" as well as plain
// and scientific decimal text.
Result<double> ParseFloating(std::string_view s, const columnar::DataType& type) {
  std::string copy(s);
  if (copy.empty()) return BadValue(s, type);
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size()) return BadValue(s, type);
  return v;
}

// Decimal text ("-12.340", "1E-8", "0.00004") to the unscaled value at
// `scale`. Fails when digits would be lost or the precision is exceeded.
Result<__int128> ParseDecimal(std::string_view s, const columnar::DataType& type) {
  size_t i = 0;
  bool negative = false;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) negative = s[i++] == '-';
  std::string digits;
  int fraction_digits = 0;
  bool seen_point = false;
  bool any_digit = false;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c >= '0' && c <= '9') {
      digits += c;
      any_digit = true;
      if (seen_point) ++fraction_digits;
    } else if (c == '.' && !seen_point) {
      seen_point = true;
    } else {
      break;
    }
  }
  if (!any_digit) return BadValue(s, type);
  int exponent = 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    auto exp = ParseInteger<int>(s.substr(i + 1), type);
    if (!exp.ok()) return BadValue(s, type);
    exponent = *exp;
    i = s.size();
  }
  if (i != s.size()) return BadValue(s, type);
  // value = digits * 10^(exponent - fraction_digits); rescale to `scale`.
  int shift = type.scale() - (fraction_digits - exponent);
  if (shift < 0) {
    // Dropping digits is only allowed when they are zeros.
    for (int k = 0; k < -shift; ++k) {
      if (digits.empty()) break;
      if (digits.back() != '0') return BadValue(s, type);
      digits.pop_back();
    }
  } else {
    digits.append(static_cast<size_t>(shift), '0');
  }
  size_t first = digits.find_first_not_of('0');
  std::string_view significant =
      first == std::string::npos ? std::string_view() : std::string_view(digits).substr(first);
  if (static_cast<int>(significant.size()) > type.precision()) return BadValue(s, type);
  __int128 v = 0;
  for (char c : significant) v = v * 10 + (c - '0');
  return negative ? -v : v;
}

// Formats `micros` as "yyyy-MM-dd HH:mm:ss" plus the shortest fraction that
// keeps every non-zero digit, as Spark casts timestamp_ntz to string.
std::string FormatNtzPartition(int64_t micros) {
  std::string s = columnar::FormatTimestampPlain(micros, 6);
  size_t dot = s.rfind('.');
  if (dot != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

}  // namespace

std::string EscapePartitionPathName(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if (NeedsPartitionEscape(c)) {
      AppendPercent(&out, c);
    } else {
      out += ch;
    }
  }
  return out;
}

std::string UnescapePartitionPathName(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size()) {
      int hi = HexValue(s[i + 1]);
      int lo = HexValue(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out += static_cast<char>(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

std::string PartitionDirectory(const PartitionValues& values) {
  std::string out;
  for (const auto& [name, value] : values) {
    if (!out.empty()) out += '/';
    out += EscapePartitionPathName(name);
    out += '=';
    if (value) {
      out += EscapePartitionPathName(*value);
    } else {
      out += kHiveDefaultPartition;
    }
  }
  return out;
}

std::string UriEncodePath(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  for (size_t i = 0; i < path.size(); ++i) {
    auto c = static_cast<unsigned char>(path[i]);
    if (IsUriPathChar(c)) {
      out += path[i];
      continue;
    }
    uint32_t cp = 0;
    const int len = c >= 0x80 ? DecodeUtf8(path, i, &cp) : 0;
    if (len > 0 && IsUriOtherChar(cp)) {
      out.append(path.substr(i, static_cast<size_t>(len)));
      i += static_cast<size_t>(len) - 1;
      continue;
    }
    AppendPercent(&out, c);
  }
  return out;
}

Result<std::string> UriDecodePath(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] != '%') {
      out += path[i];
      continue;
    }
    int hi = i + 1 < path.size() ? HexValue(path[i + 1]) : -1;
    int lo = i + 2 < path.size() ? HexValue(path[i + 2]) : -1;
    if (hi < 0 || lo < 0) {
      return Status::InvalidArgument("malformed escape at offset ", static_cast<int64_t>(i),
                                     " in file path '", path, "'");
    }
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return out;
}

Result<std::string> ResolveDataFilePath(std::string_view table_path, std::string_view add_path) {
  SILT_ASSIGN_OR_RETURN(std::string decoded, UriDecodePath(add_path));
  std::string_view p = decoded;
  // file:///a, file://a (no authority in practice) and file:/a all name /a.
  if (p.substr(0, 7) == "file://") {
    p.remove_prefix(7);
    if (p.empty() || p.front() != '/') return "/" + std::string(p);
    return std::string(p);
  }
  if (p.substr(0, 5) == "file:") {
    p.remove_prefix(5);
    return std::string(p);
  }
  if (!p.empty() && p.front() == '/') return std::string(p);
  size_t scheme_end = p.find("://");
  if (scheme_end != std::string_view::npos &&
      p.substr(0, scheme_end).find('/') == std::string_view::npos) {
    return std::string(p);
  }
  return fs::JoinPath(table_path, p);
}

std::string FormatDecimal(__int128 unscaled, int scale) {
  bool negative = unscaled < 0;
  // Work on the magnitude as unsigned so that the minimum value is handled.
  unsigned __int128 magnitude =
      negative ? static_cast<unsigned __int128>(0) - static_cast<unsigned __int128>(unscaled)
               : static_cast<unsigned __int128>(unscaled);
  std::string digits;
  do {
    digits += static_cast<char>('0' + static_cast<int>(magnitude % 10));
    magnitude /= 10;
  } while (magnitude != 0);
  while (static_cast<int>(digits.size()) <= scale) digits += '0';
  std::string out = negative ? "-" : "";
  for (size_t i = digits.size(); i-- > 0;) {
    out += digits[i];
    if (scale > 0 && i == static_cast<size_t>(scale)) out += '.';
  }
  return out;
}

std::optional<std::string> SerializePartitionValue(const columnar::Column& column, int64_t row) {
  using columnar::TypeId;
  if (column.IsNull(row)) return std::nullopt;
  const columnar::DataType& type = *column.type;
  switch (type.id()) {
    case TypeId::kNull: return std::nullopt;
    case TypeId::kBoolean: return std::string(column.BoolValue(row) ? "true" : "false");
    case TypeId::kByte: return std::to_string(column.Value<int8_t>(row));
    case TypeId::kShort: return std::to_string(column.Value<int16_t>(row));
    case TypeId::kInt: return std::to_string(column.Value<int32_t>(row));
    case TypeId::kLong: return std::to_string(column.Value<int64_t>(row));
    case TypeId::kFloat: return FormatFloatJava(column.Value<float>(row));
    case TypeId::kDouble: return FormatDoubleJava(column.Value<double>(row));
    case TypeId::kDecimal: return FormatDecimal(column.Value<__int128>(row), type.scale());
    case TypeId::kString:
    case TypeId::kBinary: {
      std::string_view v = column.StringValue(row);
      if (v.empty()) return std::nullopt;
      // The log is JSON in UTF-8: delta-spark's partition value of a string
      // that is not UTF-8 (a binary-to-string cast) has U+FFFD in place of
      // each bad sequence, and so its directory name.
      if (!IsValidUtf8(v)) return ReplaceInvalidUtf8(v);
      return std::string(v);
    }
    case TypeId::kDate: return columnar::FormatDate(column.Value<int32_t>(row));
    case TypeId::kTimestamp:
      return columnar::FormatTimestampUtc(column.Value<int64_t>(row), 6, true);
    case TypeId::kTimestampNtz: return FormatNtzPartition(column.Value<int64_t>(row));
    case TypeId::kStruct:
    case TypeId::kArray:
    case TypeId::kMap:
    case TypeId::kVariant: break;
  }
  return std::nullopt;
}

Result<columnar::ColumnPtr> MakePartitionColumn(const columnar::TypePtr& type,
                                                const std::optional<std::string>& value,
                                                int64_t length) {
  using columnar::TypeId;
  if (type->is_nested()) {
    return Status::InvalidArgument("partition columns of type ", type->ToDdl(),
                                   " are not supported");
  }
  if (!value || type->id() == TypeId::kNull) return columnar::MakeNullColumn(type, length);
  const std::string& s = *value;
  columnar::ColumnBuilder builder(type);
  builder.Reserve(length);
  // Parse once, then append the same value `length` times.
  auto fill = [&](auto v) {
    for (int64_t row_idx = 0; row_idx < length; ++row_idx) builder.Append(v);
  };
  switch (type->id()) {
    case TypeId::kBoolean: {
      bool v;
      if (EqualsIgnoreCase(s, "true")) {
        v = true;
      } else if (EqualsIgnoreCase(s, "false")) {
        v = false;
      } else {
        return BadValue(s, *type);
      }
      for (int64_t row_idx = 0; row_idx < length; ++row_idx) builder.AppendBool(v);
      break;
    }
    case TypeId::kByte: {
      SILT_ASSIGN_OR_RETURN(int8_t v, ParseInteger<int8_t>(s, *type));
      fill(v);
      break;
    }
    case TypeId::kShort: {
      SILT_ASSIGN_OR_RETURN(int16_t v, ParseInteger<int16_t>(s, *type));
      fill(v);
      break;
    }
    case TypeId::kInt: {
      SILT_ASSIGN_OR_RETURN(int32_t v, ParseInteger<int32_t>(s, *type));
      fill(v);
      break;
    }
    case TypeId::kLong: {
      SILT_ASSIGN_OR_RETURN(int64_t v, ParseInteger<int64_t>(s, *type));
      fill(v);
      break;
    }
    case TypeId::kFloat: {
      SILT_ASSIGN_OR_RETURN(double v, ParseFloating(s, *type));
      fill(static_cast<float>(v));
      break;
    }
    case TypeId::kDouble: {
      SILT_ASSIGN_OR_RETURN(double v, ParseFloating(s, *type));
      fill(v);
      break;
    }
    case TypeId::kDecimal: {
      SILT_ASSIGN_OR_RETURN(__int128 v, ParseDecimal(s, *type));
      fill(v);
      break;
    }
    case TypeId::kString:
    case TypeId::kBinary:
      for (int64_t row_idx = 0; row_idx < length; ++row_idx) builder.AppendString(s);
      break;
    case TypeId::kDate: {
      auto v = columnar::ParseDate(s);
      if (!v) return BadValue(s, *type);
      fill(*v);
      break;
    }
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: {
      // Legacy timestamp values carry no zone and were written in the
      // writer's session zone, which the log does not record; UTC is the
      // only defensible reading (and what delta-rs does).
      auto v = columnar::ParseTimestamp(s, 0);
      if (!v) return BadValue(s, *type);
      fill(*v);
      break;
    }
    case TypeId::kNull:
    case TypeId::kStruct:
    case TypeId::kArray:
    case TypeId::kMap:
    case TypeId::kVariant: return BadValue(s, *type);
  }
  return builder.Finish();
}

std::optional<std::string> FindPartitionValue(const PartitionValues& values,
                                              std::string_view name) {
  for (const auto& [key, value] : values) {
    if (EqualsIgnoreCase(key, name)) return value;
  }
  return std::nullopt;
}

PartitionValues CanonicalPartitionValues(const PartitionValues& values,
                                         const std::vector<std::string>& columns) {
  PartitionValues out;
  out.reserve(columns.size());
  for (const std::string& column : columns) {
    out.emplace_back(column, FindPartitionValue(values, column));
  }
  return out;
}

std::string PartitionKey(const PartitionValues& values) {
  std::string key;
  for (const auto& [name, value] : values) {
    key += name;
    key += value ? "=" + *value : std::string("\x01");
    key += '\x00';
  }
  return key;
}

std::string PhysicalName(const columnar::Field& field) {
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(field.metadata_json).get(root) != simdjson::SUCCESS) return "";
  std::string_view name;
  if (root.at_key("delta.columnMapping.physicalName").get_string().get(name) != simdjson::SUCCESS) {
    return "";
  }
  return std::string(name);
}

}  // namespace silt::delta
