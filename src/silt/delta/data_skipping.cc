// FileSkipper: partition values are parsed with the partition reader's rules
// (partition_utils.h) and compared exactly; add.stats JSON is parsed with
// simdjson per file (no cache: a file is decided once per scan).

#include "silt/delta/data_skipping.h"

#include <simdjson.h>

#include <cmath>
#include <cstring>

#include "silt/base/strings.h"
#include "silt/columnar/temporal.h"
#include "silt/delta/partition_utils.h"

namespace silt::delta {

namespace {

using columnar::ColumnPredicate;
using columnar::PredicateOp;
using columnar::PredicateValue;
using columnar::TypeId;

bool ColumnMappingActive(const Metadata& metadata) {
  auto it = metadata.configuration.find("delta.columnMapping.mode");
  return it != metadata.configuration.end() && !it->second.empty() && it->second != "none" &&
         it->second != "NONE";
}

bool IsFloating(TypeId id) { return id == TypeId::kFloat || id == TypeId::kDouble; }

// Types whose add.stats bounds silt parses.
bool HasUsableStats(TypeId id) {
  switch (id) {
    case TypeId::kByte:
    case TypeId::kShort:
    case TypeId::kInt:
    case TypeId::kLong:
    case TypeId::kFloat:
    case TypeId::kDouble:
    case TypeId::kString:
    case TypeId::kDate:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: return true;
    default: return false;
  }
}

// A stats bound of `type` from its JSON value; nullopt when it does not
// parse (the bound is then unknown). `is_max` widens millisecond-truncated
// timestamps to the end of their millisecond.
std::optional<PredicateValue> ParseBound(const columnar::DataType& type,
                                         simdjson::dom::element value, bool is_max) {
  PredicateValue out;
  switch (type.id()) {
    case TypeId::kByte:
    case TypeId::kShort:
    case TypeId::kInt:
    case TypeId::kLong: {
      int64_t v = 0;
      if (value.get_int64().get(v) != simdjson::SUCCESS) return std::nullopt;
      out.i64 = v;
      return out;
    }
    case TypeId::kFloat:
    case TypeId::kDouble: {
      double v = 0;
      if (value.get_double().get(v) != simdjson::SUCCESS || std::isnan(v)) return std::nullopt;
      out.f64 = v;
      return out;
    }
    case TypeId::kString: {
      std::string_view s;
      if (value.get_string().get(s) != simdjson::SUCCESS) return std::nullopt;
      out.str = std::string(s);
      return out;
    }
    case TypeId::kDate: {
      std::string_view s;
      if (value.get_string().get(s) != simdjson::SUCCESS) return std::nullopt;
      std::optional<int32_t> days = columnar::ParseDate(s);
      if (!days) return std::nullopt;
      out.i64 = *days;
      return out;
    }
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: {
      std::string_view s;
      if (value.get_string().get(s) != simdjson::SUCCESS) return std::nullopt;
      std::optional<int64_t> micros = columnar::ParseTimestamp(s);
      if (!micros) return std::nullopt;
      out.i64 = *micros + (is_max ? 999 : 0);
      return out;
    }
    default: return std::nullopt;
  }
}

// The element at a dotted path under `root` (stats nest struct fields).
bool FindPath(simdjson::dom::element root, std::string_view key, std::string_view path,
              simdjson::dom::element* out) {
  simdjson::dom::element node;
  if (root.at_key(key).get(node) != simdjson::SUCCESS) return false;
  size_t start = 0;
  while (true) {
    size_t dot = path.find('.', start);
    std::string_view part =
        path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    simdjson::dom::object object;
    if (node.get_object().get(object) != simdjson::SUCCESS) return false;
    bool found = false;
    for (auto field : object) {
      if (EqualsIgnoreCase(field.key, part)) {
        node = field.value;
        found = true;
        break;
      }
    }
    if (!found) return false;
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  *out = node;
  return true;
}

// True when the stats prove that no row satisfies `predicate`.
bool StatsRuleOut(const ColumnPredicate& predicate, std::string_view path,
                  simdjson::dom::element root, std::optional<int64_t> num_records) {
  const columnar::DataType& type = *predicate.type;
  std::optional<int64_t> null_count;
  simdjson::dom::element element;
  if (FindPath(root, "nullCount", path, &element)) {
    int64_t n = 0;
    if (element.get_int64().get(n) == simdjson::SUCCESS) null_count = n;
  }
  const bool all_null = null_count && num_records && *null_count == *num_records;
  switch (predicate.op) {
    case PredicateOp::kIsNull: return null_count && *null_count == 0;
    case PredicateOp::kIsNotNull: return all_null;
    default: break;
  }
  // Comparisons are never true on a null.
  if (all_null) return true;
  if (!HasUsableStats(type.id())) return false;
  std::optional<PredicateValue> min;
  std::optional<PredicateValue> max;
  if (FindPath(root, "minValues", path, &element)) min = ParseBound(type, element, false);
  if (!IsFloating(type.id()) && FindPath(root, "maxValues", path, &element)) {
    max = ParseBound(type, element, true);
  }
  auto below_min = [&](const PredicateValue& v) {
    return min && ComparePredicateValues(type, v, *min) < 0;
  };
  auto above_max = [&](const PredicateValue& v) {
    return max && ComparePredicateValues(type, v, *max) > 0;
  };
  if (predicate.values.empty() && predicate.op != PredicateOp::kIn) return false;
  switch (predicate.op) {
    case PredicateOp::kEq: return below_min(predicate.values[0]) || above_max(predicate.values[0]);
    case PredicateOp::kIn:
      for (const PredicateValue& v : predicate.values) {
        if (!below_min(v) && !above_max(v)) return false;
      }
      return !predicate.values.empty();
    case PredicateOp::kLt:  // every row >= min >= v
      return min && ComparePredicateValues(type, *min, predicate.values[0]) >= 0;
    case PredicateOp::kLtEq:
      return min && ComparePredicateValues(type, *min, predicate.values[0]) > 0;
    case PredicateOp::kGt:
      return max && ComparePredicateValues(type, *max, predicate.values[0]) <= 0;
    case PredicateOp::kGtEq:
      return max && ComparePredicateValues(type, *max, predicate.values[0]) < 0;
    default: return false;
  }
}

template <typename T>
int Cmp(const T& a, const T& b) {
  return a < b ? -1 : (b < a ? 1 : 0);
}

// The dotted stats path of `name` (a top-level column `field`, or a path
// through its struct fields after `dot`), with physical names when column
// mapping is on; nullopt when a field is missing, has no physical name, or
// had its type widened.
std::optional<std::string> StatsPath(const columnar::Field& field, std::string_view name,
                                     size_t dot, bool mapping) {
  const columnar::Field* current = &field;
  std::string path;
  while (true) {
    if (current->metadata_json.find("delta.typeChanges") != std::string::npos) {
      return std::nullopt;
    }
    std::string segment = mapping ? PhysicalName(*current) : current->name;
    if (segment.empty()) return std::nullopt;
    if (!path.empty()) path += '.';
    path += segment;
    if (dot == std::string_view::npos) return path;
    size_t next = name.find('.', dot + 1);
    std::string_view child = name.substr(
        dot + 1, next == std::string_view::npos ? std::string_view::npos : next - dot - 1);
    if (current->type->id() != TypeId::kStruct) return std::nullopt;
    int idx = current->type->FieldIndex(child);
    if (idx < 0) return std::nullopt;
    current = &current->type->field(idx);
    dot = next;
  }
}

}  // namespace

std::optional<PredicateValue> PredicateValueAt(const columnar::Column& column, int64_t row) {
  if (column.IsNull(row)) return std::nullopt;
  PredicateValue v;
  switch (column.type->id()) {
    case TypeId::kBoolean: v.i64 = column.BoolValue(row) ? 1 : 0; return v;
    case TypeId::kByte: v.i64 = column.Value<int8_t>(row); return v;
    case TypeId::kShort: v.i64 = column.Value<int16_t>(row); return v;
    case TypeId::kInt:
    case TypeId::kDate: v.i64 = column.Value<int32_t>(row); return v;
    case TypeId::kLong:
    case TypeId::kTimestamp:
    case TypeId::kTimestampNtz: v.i64 = column.Value<int64_t>(row); return v;
    case TypeId::kFloat: v.f64 = column.Value<float>(row); return v;
    case TypeId::kDouble: v.f64 = column.Value<double>(row); return v;
    case TypeId::kDecimal: {
      __int128 unscaled;
      std::memcpy(&unscaled, column.values->data() + row * 16, 16);
      v.i128 = unscaled;
      return v;
    }
    case TypeId::kString:
    case TypeId::kBinary: v.str = std::string(column.StringValue(row)); return v;
    default: return std::nullopt;
  }
}

int ComparePredicateValues(const columnar::DataType& type, const PredicateValue& a,
                           const PredicateValue& b) {
  switch (type.id()) {
    case TypeId::kFloat:
    case TypeId::kDouble: {
      bool a_nan = std::isnan(a.f64);
      bool b_nan = std::isnan(b.f64);
      if (a_nan || b_nan) return Cmp(a_nan, b_nan);
      return Cmp(a.f64, b.f64);
    }
    case TypeId::kDecimal: return Cmp(a.i128, b.i128);
    case TypeId::kString:
    case TypeId::kBinary: {
      int c = a.str.compare(b.str);  // char_traits<char> compares as unsigned
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    default: return Cmp(a.i64, b.i64);
  }
}

bool PredicateMatches(const ColumnPredicate& predicate, const PredicateValue& v) {
  const columnar::DataType& type = *predicate.type;
  auto cmp = [&](size_t i) { return ComparePredicateValues(type, v, predicate.values[i]); };
  switch (predicate.op) {
    case PredicateOp::kIsNull: return false;
    case PredicateOp::kIsNotNull: return true;
    case PredicateOp::kIn:
      for (size_t i = 0; i < predicate.values.size(); ++i) {
        if (cmp(i) == 0) return true;
      }
      return false;
    default: break;
  }
  if (predicate.values.empty()) return true;
  switch (predicate.op) {
    case PredicateOp::kEq: return cmp(0) == 0;
    case PredicateOp::kNotEq: return cmp(0) != 0;
    case PredicateOp::kLt: return cmp(0) < 0;
    case PredicateOp::kLtEq: return cmp(0) <= 0;
    case PredicateOp::kGt: return cmp(0) > 0;
    case PredicateOp::kGtEq: return cmp(0) >= 0;
    default: return true;
  }
}

FileSkipper FileSkipper::Make(const Metadata& metadata, const columnar::Conjunction& predicate) {
  FileSkipper out;
  if (metadata.schema == nullptr) return out;
  const bool mapping = ColumnMappingActive(metadata);
  for (const ColumnPredicate& p : predicate) {
    if (p.type == nullptr) continue;
    std::string_view name = p.column;
    size_t dot = name.find('.');
    std::string_view top = name.substr(0, dot);
    int idx = metadata.schema->FieldIndex(top);
    if (idx < 0) continue;
    const columnar::Field& field = metadata.schema->field(idx);
    bool is_partition = false;
    for (const std::string& part : metadata.partition_columns) {
      if (EqualsIgnoreCase(part, field.name)) is_partition = true;
    }
    if (is_partition) {
      if (dot != std::string_view::npos) continue;
      std::string physical = mapping ? PhysicalName(field) : field.name;
      if (physical.empty()) continue;
      out.partition_.push_back(Bound{p, physical});
      continue;
    }
    // The stats path: physical names at every depth under column mapping.
    // Stats of files written before a type widening hold the old type, so
    // widened fields (delta.typeChanges) are not judged by stats.
    std::optional<std::string> path = StatsPath(field, name, dot, mapping);
    if (path) out.data_.push_back(Bound{p, std::move(*path)});
  }
  return out;
}

SkipDecision FileSkipper::Decide(const AddFile& file) const {
  for (const Bound& bound : partition_) {
    const ColumnPredicate& p = bound.predicate;
    std::optional<std::string> text =
        FindPartitionValue(file.partition_values, bound.physical_name);
    if (!text) {
      if (p.op != PredicateOp::kIsNull) return SkipDecision::kSkipByPartition;
      continue;
    }
    if (p.op == PredicateOp::kIsNull) return SkipDecision::kSkipByPartition;
    Result<columnar::ColumnPtr> column = MakePartitionColumn(p.type, text, 1);
    if (!column.ok()) continue;  // unparsable: keep (the scan reports it)
    std::optional<PredicateValue> value = PredicateValueAt(**column, 0);
    if (!value) continue;
    if (!PredicateMatches(p, *value)) return SkipDecision::kSkipByPartition;
  }
  if (data_.empty() || !file.stats || file.stats->empty()) return SkipDecision::kKeep;
  simdjson::dom::parser parser;
  simdjson::dom::element root;
  if (parser.parse(*file.stats).get(root) != simdjson::SUCCESS) return SkipDecision::kKeep;
  std::optional<int64_t> num_records;
  int64_t n = 0;
  if (root.at_key("numRecords").get_int64().get(n) == simdjson::SUCCESS) num_records = n;
  if (num_records && *num_records == 0) return SkipDecision::kSkipByStats;
  for (const Bound& bound : data_) {
    if (StatsRuleOut(bound.predicate, bound.physical_name, root, num_records)) {
      return SkipDecision::kSkipByStats;
    }
  }
  return SkipDecision::kKeep;
}

}  // namespace silt::delta
