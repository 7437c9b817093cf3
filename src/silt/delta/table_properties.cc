#include "silt/delta/table_properties.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>

#include "silt/base/strings.h"
#include "silt/delta/column_mapping.h"

namespace silt::delta {
namespace {

std::vector<std::string_view> SplitWhitespace(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    size_t start = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

Status BadValue(std::string_view key, std::string_view value, std::string_view expected) {
  return Status::InvalidArgument("table property ", key, " = '", value, "' is not ", expected);
}

Result<bool> ParseBool(std::string_view key, const std::string& value) {
  std::string_view v = TrimAscii(value);
  if (EqualsIgnoreCase(v, "true")) return true;
  if (EqualsIgnoreCase(v, "false")) return false;
  return BadValue(key, value, "a boolean (true or false)");
}

Result<int64_t> ParseLong(std::string_view key, const std::string& value) {
  std::string_view v = TrimAscii(value);
  int64_t out = 0;
  auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), out);
  if (v.empty() || ec != std::errc() || ptr != v.data() + v.size()) {
    return BadValue(key, value, "an integer");
  }
  return out;
}

Result<int64_t> ParseDuration(std::string_view key, const std::string& value) {
  Result<int64_t> ms = ParseIntervalMs(value);
  if (!ms.ok()) {
    return BadValue(key, value,
                    "a non-negative interval without months or years (e.g. 'interval 30 days')");
  }
  return ms;
}

// Micros per unit; 0 for months/years (no fixed length), -1 for unknown.
int64_t UnitMicros(std::string_view unit_text) {
  std::string unit = AsciiLower(unit_text);
  if (unit.size() > 1 && unit.back() == 's') unit.pop_back();
  if (unit == "week") return 7LL * 24 * 3600 * 1000000;
  if (unit == "day") return 24LL * 3600 * 1000000;
  if (unit == "hour") return 3600LL * 1000000;
  if (unit == "minute") return 60LL * 1000000;
  if (unit == "second") return 1000000;
  if (unit == "millisecond") return 1000;
  if (unit == "microsecond") return 1;
  if (unit == "month" || unit == "year") return 0;
  return -1;
}

// How silt treats each property delta-spark defines.
enum class Support {
  kHonoured,      // silt implements it
  kInert,         // no effect on how silt writes or reads; kept in metaData
  kOnlyDefault,   // fine at its default / "off" value; NotSupported otherwise
  kNotSupported,  // needs a feature silt does not write
};

enum class Kind { kBool, kLong, kInterval, kString };

struct KnownProperty {
  std::string_view key;
  Support support;
  Kind kind;
  std::string_view default_value;  // for kOnlyDefault: the only accepted value
};

// delta-spark 3.2 DeltaConfigs (the ones a user may set).
constexpr KnownProperty kKnownProperties[] = {
    {"delta.appendOnly", Support::kHonoured, Kind::kBool, ""},
    {"delta.checkpointInterval", Support::kHonoured, Kind::kLong, ""},
    {"delta.logRetentionDuration", Support::kHonoured, Kind::kInterval, ""},
    {"delta.deletedFileRetentionDuration", Support::kHonoured, Kind::kInterval, ""},
    {"delta.enableExpiredLogCleanup", Support::kHonoured, Kind::kBool, ""},
    {"delta.dataSkippingNumIndexedCols", Support::kHonoured, Kind::kLong, ""},
    {"delta.dataSkippingStatsColumns", Support::kHonoured, Kind::kString, ""},
    {"delta.setTransactionRetentionDuration", Support::kHonoured, Kind::kInterval, ""},
    {"delta.checkpoint.writeStatsAsJson", Support::kHonoured, Kind::kBool, ""},
    // Without stats_parsed readers use the JSON stats; delta-spark does too.
    {"delta.checkpoint.writeStatsAsStruct", Support::kInert, Kind::kBool, ""},
    {"delta.checkpointRetentionDuration", Support::kInert, Kind::kInterval, ""},
    {"delta.sampleRetentionDuration", Support::kInert, Kind::kInterval, ""},
    {"delta.autoOptimize.autoCompact", Support::kInert, Kind::kString, ""},
    {"delta.autoOptimize.optimizeWrite", Support::kInert, Kind::kString, ""},
    {"delta.targetFileSize", Support::kInert, Kind::kString, ""},
    {"delta.tuneFileSizesForRewrites", Support::kInert, Kind::kBool, ""},
    {"delta.isolationLevel", Support::kInert, Kind::kString, ""},
    {"delta.enableFullRetentionRollback", Support::kInert, Kind::kBool, ""},
    {"delta.checkpointPolicy", Support::kHonoured, Kind::kString, ""},
    {"delta.randomizeFilePrefixes", Support::kOnlyDefault, Kind::kBool, "false"},
    {"delta.randomPrefixLength", Support::kInert, Kind::kLong, ""},
    {"delta.enableChangeDataFeed", Support::kOnlyDefault, Kind::kBool, "false"},
    {"delta.enableDeletionVectors", Support::kHonoured, Kind::kBool, ""},
    {"delta.enableInCommitTimestamps", Support::kHonoured, Kind::kBool, ""},
    {"delta.enableRowTracking", Support::kHonoured, Kind::kBool, ""},
    // The sink's mergeSchema widens column types when it is on
    // (type_widening.h); TableScan reads widened columns whatever it says.
    {"delta.enableTypeWidening", Support::kHonoured, Kind::kBool, ""},
    {"delta.enableIcebergCompatV1", Support::kOnlyDefault, Kind::kBool, "false"},
    {"delta.enableIcebergCompatV2", Support::kOnlyDefault, Kind::kBool, "false"},
    // none, name or id: the Delta writers honour it (column_mapping.h).
    {"delta.columnMapping.mode", Support::kHonoured, Kind::kString, ""},
    {"delta.compatibility.symlinkFormatManifest.enabled", Support::kOnlyDefault, Kind::kBool,
     "false"},
    {"delta.minReaderVersion", Support::kOnlyDefault, Kind::kLong, "1"},
    {"delta.minWriterVersion", Support::kOnlyDefault, Kind::kLong, "2"},
    {"delta.universalFormat.enabledFormats", Support::kNotSupported, Kind::kString, ""},
    {"delta.columnMapping.maxColumnId", Support::kNotSupported, Kind::kLong, ""},
};

const KnownProperty* FindKnown(std::string_view key) {
  for (const KnownProperty& p : kKnownProperties) {
    if (EqualsIgnoreCase(p.key, key)) return &p;
  }
  return nullptr;
}

Status CheckKind(const KnownProperty& p, const std::string& value) {
  switch (p.kind) {
    case Kind::kBool: return ParseBool(p.key, value).status();
    case Kind::kLong: return ParseLong(p.key, value).status();
    case Kind::kInterval: return ParseDuration(p.key, value).status();
    case Kind::kString: return Status::OK();
  }
  return Status::OK();
}

}  // namespace

Result<int64_t> ParseIntervalMs(std::string_view text) {
  std::vector<std::string_view> tokens = SplitWhitespace(text);
  size_t pos = 0;
  if (!tokens.empty() && EqualsIgnoreCase(tokens[0], "interval")) pos = 1;
  if (pos >= tokens.size()) {
    return Status::InvalidArgument("'", text,
                                   "' is not an interval (expected e.g. 'interval 30 days')");
  }
  long double total_micros = 0;
  for (; pos < tokens.size(); pos += 2) {
    if (pos + 1 >= tokens.size()) {
      return Status::InvalidArgument("interval '", text, "': '", tokens[pos],
                                     "' has no unit (week, day, hour, minute, second, ...)");
    }
    std::string_view number = tokens[pos];
    // Spark allows the number to be quoted ('1' day).
    if (number.size() >= 2 && number.front() == '\'' && number.back() == '\'') {
      number = number.substr(1, number.size() - 2);
    }
    int64_t unit = UnitMicros(tokens[pos + 1]);
    if (unit < 0) {
      return Status::InvalidArgument(
          "interval '", text, "': unknown unit '", tokens[pos + 1],
          "' (week, day, hour, minute, second, millisecond, microsecond)");
    }
    if (unit == 0) {
      return Status::InvalidArgument("interval '", text,
                                     "': months and years have no fixed length; use days");
    }
    bool negative = false;
    std::string_view digits = number;
    if (!digits.empty() && (digits.front() == '-' || digits.front() == '+')) {
      negative = digits.front() == '-';
      digits.remove_prefix(1);
    }
    size_t dot = digits.find('.');
    std::string_view whole = digits.substr(0, dot);
    std::string_view frac = dot == std::string_view::npos ? "" : digits.substr(dot + 1);
    bool ok = !(whole.empty() && frac.empty());
    for (char c : whole) ok = ok && std::isdigit(static_cast<unsigned char>(c));
    for (char c : frac) ok = ok && std::isdigit(static_cast<unsigned char>(c));
    if (!ok || whole.size() > 18) {
      return Status::InvalidArgument("interval '", text, "': '", tokens[pos], "' is not a number");
    }
    if (!frac.empty() && unit > 1000000) {
      return Status::InvalidArgument("interval '", text,
                                     "': only seconds and smaller units may have a fraction");
    }
    long double value = 0;
    for (char c : whole) value = value * 10 + (c - '0');
    long double scale = 0.1L;
    for (char c : frac) {
      value += (c - '0') * scale;
      scale /= 10;
    }
    total_micros += (negative ? -value : value) * static_cast<long double>(unit);
  }
  if (total_micros < 0) {
    return Status::InvalidArgument("interval '", text, "' is negative");
  }
  if (total_micros > static_cast<long double>(std::numeric_limits<int64_t>::max())) {
    return Status::InvalidArgument("interval '", text, "' is too long");
  }
  return static_cast<int64_t>(std::floor(total_micros)) / 1000;
}

std::optional<std::string> GetTableProperty(const TableConfiguration& configuration,
                                            std::string_view key) {
  auto exact = configuration.find(std::string(key));
  if (exact != configuration.end()) return exact->second;
  for (const auto& [k, v] : configuration) {
    if (EqualsIgnoreCase(k, key)) return v;
  }
  return std::nullopt;
}

Result<bool> AppendOnly(const TableConfiguration& configuration) {
  auto v = GetTableProperty(configuration, kAppendOnly);
  return v ? ParseBool(kAppendOnly, *v) : Result<bool>(false);
}

Result<int64_t> CheckpointInterval(const TableConfiguration& configuration) {
  auto v = GetTableProperty(configuration, kCheckpointInterval);
  if (!v) return kDefaultCheckpointInterval;
  SILT_ASSIGN_OR_RETURN(int64_t n, ParseLong(kCheckpointInterval, *v));
  if (n <= 0) return BadValue(kCheckpointInterval, *v, "a positive integer");
  return n;
}

Result<int64_t> LogRetentionMs(const TableConfiguration& configuration) {
  auto v = GetTableProperty(configuration, kLogRetentionDuration);
  return v ? ParseDuration(kLogRetentionDuration, *v) : Result<int64_t>(kDefaultLogRetentionMs);
}

Result<int64_t> DeletedFileRetentionMs(const TableConfiguration& configuration) {
  auto v = GetTableProperty(configuration, kDeletedFileRetentionDuration);
  return v ? ParseDuration(kDeletedFileRetentionDuration, *v)
           : Result<int64_t>(kDefaultDeletedFileRetentionMs);
}

Result<bool> EnableExpiredLogCleanup(const TableConfiguration& configuration) {
  auto v = GetTableProperty(configuration, kEnableExpiredLogCleanup);
  return v ? ParseBool(kEnableExpiredLogCleanup, *v) : Result<bool>(true);
}

Result<bool> EnableInCommitTimestamps(const TableConfiguration& configuration) {
  auto v = GetTableProperty(configuration, kEnableInCommitTimestamps);
  if (!v) {
    // delta-spark 3.x previews used this name.
    v = GetTableProperty(configuration, "delta.enableInCommitTimestamps-preview");
  }
  return v ? ParseBool(kEnableInCommitTimestamps, *v) : Result<bool>(false);
}

Result<bool> EnableRowTracking(const TableConfiguration& configuration) {
  auto v = GetTableProperty(configuration, kEnableRowTracking);
  return v ? ParseBool(kEnableRowTracking, *v) : Result<bool>(false);
}

Result<bool> EnableTypeWidening(const TableConfiguration& configuration) {
  auto v = GetTableProperty(configuration, kEnableTypeWidening);
  return v ? ParseBool(kEnableTypeWidening, *v) : Result<bool>(false);
}

Result<bool> RowTrackingSuspended(const TableConfiguration& configuration) {
  auto v = GetTableProperty(configuration, kRowTrackingSuspended);
  return v ? ParseBool(kRowTrackingSuspended, *v) : Result<bool>(false);
}

Result<bool> EnableDeletionVectors(const TableConfiguration& configuration) {
  constexpr std::string_view kKey = "delta.enableDeletionVectors";
  auto v = GetTableProperty(configuration, kKey);
  return v ? ParseBool(kKey, *v) : Result<bool>(false);
}

Result<int> DataSkippingNumIndexedCols(const TableConfiguration& configuration) {
  auto v = GetTableProperty(configuration, kDataSkippingNumIndexedCols);
  if (!v) return kDefaultDataSkippingNumIndexedCols;
  SILT_ASSIGN_OR_RETURN(int64_t n, ParseLong(kDataSkippingNumIndexedCols, *v));
  if (n < -1 || n > std::numeric_limits<int>::max()) {
    return BadValue(kDataSkippingNumIndexedCols, *v, "-1 or a non-negative integer");
  }
  return static_cast<int>(n);
}

Result<std::optional<std::vector<std::string>>> DataSkippingStatsColumns(
    const TableConfiguration& configuration) {
  auto v = GetTableProperty(configuration, kDataSkippingStatsColumns);
  if (!v) return std::optional<std::vector<std::string>>();
  std::vector<std::string> names;
  std::string current;
  bool in_quotes = false;
  for (char c : *v) {
    if (c == '`') {
      in_quotes = !in_quotes;
      current.push_back(c);
    } else if (c == ',' && !in_quotes) {
      std::string_view name = TrimAscii(current);
      if (name.empty()) return BadValue(kDataSkippingStatsColumns, *v, "a list of column names");
      names.emplace_back(name);
      current.clear();
    } else {
      current.push_back(c);
    }
  }
  if (in_quotes) return BadValue(kDataSkippingStatsColumns, *v, "a list of column names");
  std::string_view last = TrimAscii(current);
  if (!last.empty()) names.emplace_back(last);
  return std::optional<std::vector<std::string>>(std::move(names));
}

Result<std::optional<int64_t>> SetTransactionRetentionMs(const TableConfiguration& configuration) {
  auto v = GetTableProperty(configuration, kSetTransactionRetentionDuration);
  if (!v) return std::optional<int64_t>();
  SILT_ASSIGN_OR_RETURN(int64_t ms, ParseDuration(kSetTransactionRetentionDuration, *v));
  return std::optional<int64_t>(ms);
}

Result<bool> CheckpointWriteStatsAsJson(const TableConfiguration& configuration) {
  auto v = GetTableProperty(configuration, kCheckpointWriteStatsAsJson);
  return v ? ParseBool(kCheckpointWriteStatsAsJson, *v) : Result<bool>(true);
}

Result<bool> CheckpointWriteStatsAsStruct(const TableConfiguration& configuration) {
  auto v = GetTableProperty(configuration, kCheckpointWriteStatsAsStruct);
  return v ? ParseBool(kCheckpointWriteStatsAsStruct, *v) : Result<bool>(false);
}

Result<bool> CheckpointPolicyV2(const TableConfiguration& configuration) {
  auto v = GetTableProperty(configuration, kCheckpointPolicy);
  if (!v) return false;
  const std::string_view policy = TrimAscii(*v);
  if (EqualsIgnoreCase(policy, "v2")) return true;
  if (EqualsIgnoreCase(policy, "classic")) return false;
  return Status::InvalidArgument("table property ", kCheckpointPolicy, " = '", *v,
                                 "' is not 'classic' or 'v2'");
}

Result<TableConfiguration> ValidateTableProperties(const TableConfiguration& configuration) {
  TableConfiguration out;
  for (const auto& [key, value] : configuration) {
    if (key.size() < 6 || !EqualsIgnoreCase(std::string_view(key).substr(0, 6), "delta.")) {
      out[key] = value;
      continue;
    }
    const KnownProperty* known = FindKnown(key);
    if (known == nullptr) {
      std::string_view lowered = key;
      if (lowered.size() > kFeaturePropertyPrefix.size() &&
          EqualsIgnoreCase(lowered.substr(0, kFeaturePropertyPrefix.size()),
                           kFeaturePropertyPrefix)) {
        const std::string_view feature = lowered.substr(kFeaturePropertyPrefix.size());
        static constexpr std::string_view kHonoured[] = {
            "appendOnly",          "invariants",        "domainMetadata",
            "deletionVectors",     "inCommitTimestamp", "rowTracking",
            "vacuumProtocolCheck", "typeWidening",      "timestampNtz"};
        const std::string_view* found = nullptr;
        for (const std::string_view& f : kHonoured) {
          if (EqualsIgnoreCase(f, feature)) found = &f;
        }
        if (found == nullptr) {
          return Status::NotSupported("table property ", key,
                                      ": silt does not write tables "
                                      "with the table feature ",
                                      feature);
        }
        if (!EqualsIgnoreCase(TrimAscii(value), "supported")) {
          return Status::InvalidArgument("table property ", key, " = '", value,
                                         "': the only value is 'supported'");
        }
        out[std::string(kFeaturePropertyPrefix) + std::string(*found)] = "supported";
        continue;
      }
      if (lowered.size() > 18 && EqualsIgnoreCase(lowered.substr(0, 18), "delta.constraints.")) {
        return Status::NotSupported("table property ", key,
                                    ": CHECK constraints are not enforced by silt");
      }
      const KnownProperty* closest = nullptr;
      size_t best = std::numeric_limits<size_t>::max();
      for (const KnownProperty& p : kKnownProperties) {
        size_t d = EditDistanceIgnoreCase(key, p.key);
        if (d < best) {
          best = d;
          closest = &p;
        }
      }
      if (closest != nullptr && best <= 4) {
        return Status::InvalidArgument("unknown table property ", key, " (did you mean ",
                                       closest->key, "?)");
      }
      return Status::InvalidArgument("unknown table property ", key,
                                     " (delta.* keys must be Delta table properties)");
    }
    SILT_RETURN_NOT_OK(CheckKind(*known, value));
    if (known->support == Support::kNotSupported) {
      return Status::NotSupported("table property ", known->key, " is not supported by silt");
    }
    if (known->support == Support::kOnlyDefault &&
        !EqualsIgnoreCase(TrimAscii(value), known->default_value)) {
      return Status::NotSupported("table property ", known->key, " = '", value,
                                  "' needs a table feature silt does not write (only '",
                                  known->default_value, "' is supported)");
    }
    out[std::string(known->key)] = value;
  }
  // Cross-checks that need the typed values.
  SILT_RETURN_NOT_OK(CheckpointInterval(out).status());
  SILT_RETURN_NOT_OK(DataSkippingNumIndexedCols(out).status());
  SILT_RETURN_NOT_OK(DataSkippingStatsColumns(out).status());
  SILT_RETURN_NOT_OK(CheckpointPolicyV2(out).status());
  Result<ColumnMappingMode> mapping = ColumnMappingModeOf(out);
  if (!mapping.ok()) {
    return Status::InvalidArgument("table property ", mapping.status().message());
  }
  return out;
}

bool IsKnownTableProperty(std::string_view key) {
  return FindKnown(key) != nullptr ||
         EqualsIgnoreCase(key, kRequireCheckpointProtectionBeforeVersion) ||
         EqualsIgnoreCase(key, kDropFeatureTruncateHistoryRetention) ||
         EqualsIgnoreCase(key, kRowTrackingSuspended);
}

}  // namespace silt::delta
