#include "silt/expr/cast/cast_variant.h"

#include <map>
#include <memory>
#include <utility>

#include "silt/columnar/builder.h"
#include "silt/expr/cast/cast.h"
#include "silt/expr/kernel/kernel_util.h"
#include "silt/expr/kernel/type_util.h"

namespace silt::expr {

namespace {

using columnar::Column;
using columnar::ColumnBuilder;
using columnar::ColumnPtr;
using columnar::VariantBuilder;
using columnar::VariantMetadata;
using columnar::VariantType;
using columnar::VariantValue;

constexpr int64_t kMicrosPerSecond = 1000000;

int32_t ZoneOffset(const void* zone, int64_t micros) {
  return static_cast<const TimeZone*>(zone)->OffsetSecondsAt(micros);
}

// A validity bitmap from per-row flags; null when all are valid.
BufferPtr ValidityFrom(const std::vector<uint8_t>& valid, int64_t* null_count) {
  const int64_t n = static_cast<int64_t>(valid.size());
  int64_t nulls = 0;
  auto bits = std::make_shared<Buffer>();
  bits->Resize(BitmapBytes(n));
  uint8_t* data = bits->mutable_data();
  for (int64_t i = 0; i < n; ++i) {
    if (valid[static_cast<size_t>(i)]) {
      columnar::SetBit(data, i);
    } else {
      ++nulls;
    }
  }
  *null_count = nulls;
  return nulls > 0 ? bits : nullptr;
}

BufferPtr OffsetsFrom(const std::vector<int32_t>& offsets) {
  auto buffer = std::make_shared<Buffer>();
  buffer->Append(offsets.data(), static_cast<int64_t>(offsets.size() * sizeof(int32_t)));
  return buffer;
}

// Spark's (precision, scale) of a variant decimal: the value without
// trailing zeros (a negative scale brought back to 0), the precision at
// least the scale.
void NaturalDecimal(const VariantValue& v, __int128* unscaled, int* precision, int* scale) {
  v.GetDecimal(unscaled, scale);
  columnar::StripTrailingZeros(unscaled, scale);
  while (*scale < 0) {
    *unscaled *= 10;
    ++*scale;
  }
  *precision = std::max(columnar::DecimalDigits(*unscaled), *scale);
}

class FromVariant {
 public:
  FromVariant(const std::vector<VariantMetadata>& metas, const VariantCastArgs& args)
      : metas_(metas), args_(args) {}

  Result<ColumnPtr> Convert(const std::vector<VariantItem>& items, const TypePtr& to) {
    switch (to->id()) {
      case TypeId::kVariant: return ToVariant(items, to);
      case TypeId::kArray: return ToArray(items, to);
      case TypeId::kMap: return ToMap(items, to);
      case TypeId::kStruct: return ToStruct(items, to);
      default: return ToScalar(items, to);
    }
  }

 private:
  const VariantMetadata& Meta(const VariantItem& item) const {
    return metas_[static_cast<size_t>(item.metadata)];
  }

  std::string Json(const VariantItem& item) const {
    std::string out;
    columnar::AppendVariantJson(Meta(item), item.value, VariantJsonOptionsFor(*args_.zone), &out);
    return out;
  }

  // An invalid cast: the error, or OK when the place becomes NULL.
  Status Invalid(const VariantItem& item, const DataType& to) const {
    if (!args_.fail_on_error) return Status::OK();
    return Status::InvalidArgument(
        "[INVALID_VARIANT_CAST] The variant value `", Json(item), "` cannot be cast into `",
        TypeName(to), "`. Please use `try_variant_get` instead (in '", args_.context, "')");
  }

  static Status Malformed() {
    return Status::Corruption("[MALFORMED_VARIANT] Variant binary is malformed");
  }

  // Missing and variant-null items are SQL NULL (except for a VARIANT
  // target, where a variant null stays a value).
  static bool IsNullItem(const VariantItem& item, VariantType type) {
    return item.missing || type == VariantType::kNull;
  }

  Result<ColumnPtr> ToVariant(const std::vector<VariantItem>& items, const TypePtr& to) {
    ColumnBuilder out(to);
    out.Reserve(static_cast<int64_t>(items.size()));
    std::string value;
    std::string metadata;
    for (const VariantItem& item : items) {
      if (item.missing) {
        out.AppendNull();
        continue;
      }
      // Rebuilt, which drops the dictionary entries the value does not use.
      builder_.Reset();
      SILT_RETURN_NOT_OK(builder_.AppendVariant(Meta(item), item.value));
      value.clear();
      metadata.clear();
      SILT_RETURN_NOT_OK(builder_.Finish(&value, &metadata));
      out.child(0)->AppendString(metadata);
      out.child(1)->AppendString(value);
      out.AppendValid();
    }
    return out.Finish();
  }

  // The walk the container casts share. Per item: a missing item or a
  // variant null is a NULL row; an item that is not a `kKind` container
  // (kArray or kObject) is an invalid cast (the error, or a NULL row);
  // otherwise each of its elements goes to `on_child(row, child, key)` (the
  // key empty for array elements) and the row is valid. `valid` gets one flag
  // per item; `offsets`, when not null, gets the running count of children
  // after each item (Arrow's list offsets after the 0 it starts with).
  // Errors: Corruption for a malformed variant; InvalidArgument as Invalid.
  template <VariantType kKind, typename OnChild>
  Status ForEachContainerItem(const std::vector<VariantItem>& items, const DataType& to,
                              std::vector<uint8_t>* valid, std::vector<int32_t>* offsets,
                              OnChild&& on_child) {
    static_assert(kKind == VariantType::kArray || kKind == VariantType::kObject);
    valid->assign(items.size(), 0);
    int32_t num_children = 0;
    for (size_t row = 0; row < items.size(); ++row) {
      const VariantItem& item = items[row];
      const VariantType type = item.missing ? VariantType::kNull : item.value.type();
      if (type == VariantType::kInvalid) return Malformed();
      if (IsNullItem(item, type)) {
        // A NULL row: no children.
      } else if (type != kKind) {
        SILT_RETURN_NOT_OK(Invalid(item, to));
      } else {
        VariantValue::Container c;
        item.value.GetContainer(&c);
        for (uint32_t child_idx = 0; child_idx < c.num_elements; ++child_idx) {
          VariantItem child;
          child.metadata = item.metadata;
          child.missing = false;
          std::string_view key;
          if constexpr (kKind == VariantType::kArray) {
            if (!item.value.ArrayElement(c, child_idx, &child.value)) return Malformed();
          } else {
            uint32_t id = 0;
            if (!item.value.ObjectField(c, child_idx, &id, &child.value) ||
                !Meta(item).Key(id, &key)) {
              return Malformed();
            }
          }
          on_child(row, child, key);
          ++num_children;
        }
        (*valid)[row] = 1;
      }
      if (offsets != nullptr) offsets->push_back(num_children);
    }
    return Status::OK();
  }

  Result<ColumnPtr> ToArray(const std::vector<VariantItem>& items, const TypePtr& to) {
    std::vector<VariantItem> elements;
    std::vector<int32_t> offsets{0};
    std::vector<uint8_t> valid;
    SILT_RETURN_NOT_OK(ForEachContainerItem<VariantType::kArray>(
        items, *to, &valid, &offsets, [&](size_t, const VariantItem& element, std::string_view) {
          elements.push_back(element);
        }));
    SILT_ASSIGN_OR_RETURN(ColumnPtr child, Convert(elements, to->element_type()));
    auto out = std::make_shared<Column>();
    out->type = to;
    out->length = static_cast<int64_t>(items.size());
    out->validity = ValidityFrom(valid, &out->null_count);
    out->values = OffsetsFrom(offsets);
    out->children.push_back(std::move(child));
    return ColumnPtr(std::move(out));
  }

  Result<ColumnPtr> ToMap(const std::vector<VariantItem>& items, const TypePtr& to) {
    std::vector<VariantItem> values;
    ColumnBuilder keys(DataType::String());
    std::vector<int32_t> offsets{0};
    std::vector<uint8_t> valid;
    SILT_RETURN_NOT_OK(ForEachContainerItem<VariantType::kObject>(
        items, *to, &valid, &offsets, [&](size_t, const VariantItem& field, std::string_view key) {
          keys.AppendString(key);
          values.push_back(field);
        }));
    SILT_ASSIGN_OR_RETURN(ColumnPtr value_column, Convert(values, to->value_type()));
    auto entries = std::make_shared<Column>();
    entries->type = to->map_entries_type();
    entries->length = static_cast<int64_t>(values.size());
    entries->children.push_back(keys.Finish());
    entries->children.push_back(std::move(value_column));
    auto out = std::make_shared<Column>();
    out->type = to;
    out->length = static_cast<int64_t>(items.size());
    out->validity = ValidityFrom(valid, &out->null_count);
    out->values = OffsetsFrom(offsets);
    out->children.push_back(std::move(entries));
    return ColumnPtr(std::move(out));
  }

  Result<ColumnPtr> ToStruct(const std::vector<VariantItem>& items, const TypePtr& to) {
    const size_t num_fields = static_cast<size_t>(to->num_fields());
    std::vector<std::vector<VariantItem>> fields(num_fields,
                                                 std::vector<VariantItem>(items.size()));
    std::vector<uint8_t> valid;
    SILT_RETURN_NOT_OK(ForEachContainerItem<VariantType::kObject>(
        items, *to, &valid, /*offsets=*/nullptr,
        [&](size_t row, const VariantItem& field, std::string_view key) {
          // StructType.getFieldIndex: the exact name.
          for (size_t k = 0; k < num_fields; ++k) {
            if (to->field(static_cast<int>(k)).name == key) {
              fields[k][row] = field;
              break;
            }
          }
        }));
    auto out = std::make_shared<Column>();
    out->type = to;
    out->length = static_cast<int64_t>(items.size());
    out->validity = ValidityFrom(valid, &out->null_count);
    for (size_t k = 0; k < num_fields; ++k) {
      SILT_ASSIGN_OR_RETURN(ColumnPtr child,
                            Convert(fields[k], to->field(static_cast<int>(k)).type));
      out->children.push_back(std::move(child));
    }
    return ColumnPtr(std::move(out));
  }

  // Scalars of one natural type, converted together.
  struct Group {
    TypePtr type;
    std::unique_ptr<ColumnBuilder> builder;
    std::vector<int64_t> rows;  // item index per group row
  };

  // The group of natural type `type`, or null when Spark's ANSI cast
  // cannot convert that type to the target at all.
  Group* GroupFor(const std::string& key, const TypePtr& type) {
    if (!type->Equals(*to_) && !CanCast(*type, *to_, /*ansi=*/true)) return nullptr;
    auto it = groups_.find(key);
    if (it == groups_.end()) {
      Group g;
      g.type = type;
      g.builder = std::make_unique<ColumnBuilder>(type);
      it = groups_.emplace(key, std::move(g)).first;
    }
    return &it->second;
  }

  Result<ColumnPtr> ToScalar(const std::vector<VariantItem>& items, const TypePtr& to) {
    groups_.clear();
    to_ = to;
    const int64_t n = static_cast<int64_t>(items.size());
    // Per item: (group, row in group); group -1 = NULL.
    std::vector<std::pair<Group*, int64_t>> where(items.size(), {nullptr, 0});
    const bool to_string = to->id() == TypeId::kString;
    std::string text;
    for (int64_t i = 0; i < n; ++i) {
      const VariantItem& item = items[static_cast<size_t>(i)];
      if (item.missing) continue;
      const VariantValue& v = item.value;
      const VariantType type = v.type();
      Group* g = nullptr;
      switch (type) {
        case VariantType::kInvalid: return Malformed();
        case VariantType::kNull: continue;
        case VariantType::kObject:
        case VariantType::kArray:
        case VariantType::kUuid:
          if (!to_string) {
            SILT_RETURN_NOT_OK(Invalid(item, *to));
            continue;
          }
          text.clear();
          if (!columnar::AppendVariantJson(Meta(item), v, VariantJsonOptionsFor(*args_.zone),
                                           &text)) {
            return Malformed();
          }
          if (type == VariantType::kUuid) text = text.substr(1, text.size() - 2);
          g = GroupFor("s", DataType::String());
          if (g == nullptr) {
            SILT_RETURN_NOT_OK(Invalid(item, *to));
            continue;
          }
          g->builder->AppendString(text);
          break;
        case VariantType::kBoolean:
          g = GroupFor("b", DataType::Boolean());
          if (g == nullptr) {
            SILT_RETURN_NOT_OK(Invalid(item, *to));
            continue;
          }
          g->builder->AppendBool(v.GetBoolean());
          break;
        case VariantType::kLong:
          if (to->id() == TypeId::kTimestamp) {
            int64_t micros = 0;
            if (__builtin_mul_overflow(v.GetLong(), kMicrosPerSecond, &micros)) {
              SILT_RETURN_NOT_OK(Invalid(item, *to));
              continue;
            }
            g = GroupFor("t", DataType::Timestamp());
            if (g == nullptr) {
              SILT_RETURN_NOT_OK(Invalid(item, *to));
              continue;
            }
            g->builder->Append<int64_t>(micros);
            break;
          }
          g = GroupFor("l", DataType::Long());
          if (g == nullptr) {
            SILT_RETURN_NOT_OK(Invalid(item, *to));
            continue;
          }
          g->builder->Append<int64_t>(v.GetLong());
          break;
        case VariantType::kDouble:
          if (to->id() == TypeId::kTimestamp) {
            // Spark's ANSI double-to-timestamp: seconds times 10^6 must be a
            // long exactly (NaN, infinities and overflow are invalid).
            const double micros = v.GetDouble() * static_cast<double>(kMicrosPerSecond);
            if (!(micros >= -9223372036854775808.0 && micros < 9223372036854775808.0)) {
              SILT_RETURN_NOT_OK(Invalid(item, *to));
              continue;
            }
            g = GroupFor("t", DataType::Timestamp());
            g->builder->Append<int64_t>(static_cast<int64_t>(micros));
            break;
          }
          g = GroupFor("d", DataType::Double());
          if (g == nullptr) {
            SILT_RETURN_NOT_OK(Invalid(item, *to));
            continue;
          }
          g->builder->Append<double>(v.GetDouble());
          break;
        case VariantType::kFloat:
          g = GroupFor("f", DataType::Float());
          if (g == nullptr) {
            SILT_RETURN_NOT_OK(Invalid(item, *to));
            continue;
          }
          g->builder->Append<float>(v.GetFloat());
          break;
        case VariantType::kDecimal: {
          __int128 unscaled = 0;
          int precision = 0;
          int scale = 0;
          NaturalDecimal(v, &unscaled, &precision, &scale);
          if (to->id() == TypeId::kTimestamp) {
            // Seconds with a fraction to micros, truncated toward zero, or
            // invalid when they do not fit a long (Spark's longValueExact).
            __int128 pow = 1;
            for (int s = 0; s < scale; ++s) pow *= 10;
            const __int128 seconds = unscaled / pow;
            __int128 fraction = unscaled % pow;
            for (int s = scale; s < 6; ++s) fraction *= 10;
            for (int s = 6; s < scale; ++s) fraction /= 10;
            __int128 micros = 0;
            bool fits = !__builtin_mul_overflow(seconds, __int128{kMicrosPerSecond}, &micros);
            if (fits) {
              micros += fraction;
              fits = micros <= INT64_MAX && micros >= INT64_MIN;
            }
            if (!fits) {
              SILT_RETURN_NOT_OK(Invalid(item, *to));
              continue;
            }
            g = GroupFor("t", DataType::Timestamp());
            g->builder->Append<int64_t>(static_cast<int64_t>(micros));
            break;
          }
          g = GroupFor("m" + std::to_string(precision) + "," + std::to_string(scale),
                       DataType::Decimal(precision, scale));
          if (g == nullptr) {
            SILT_RETURN_NOT_OK(Invalid(item, *to));
            continue;
          }
          g->builder->Append<__int128>(unscaled);
          break;
        }
        case VariantType::kString:
          g = GroupFor("s", DataType::String());
          if (g == nullptr) {
            SILT_RETURN_NOT_OK(Invalid(item, *to));
            continue;
          }
          g->builder->AppendString(v.GetString());
          break;
        case VariantType::kBinary:
          g = GroupFor("x", DataType::Binary());
          if (g == nullptr) {
            SILT_RETURN_NOT_OK(Invalid(item, *to));
            continue;
          }
          g->builder->AppendString(v.GetBinary());
          break;
        case VariantType::kDate:
          g = GroupFor("D", DataType::Date());
          if (g == nullptr) {
            SILT_RETURN_NOT_OK(Invalid(item, *to));
            continue;
          }
          g->builder->Append<int32_t>(static_cast<int32_t>(v.GetLong()));
          break;
        case VariantType::kTimestamp:
          g = GroupFor("t", DataType::Timestamp());
          if (g == nullptr) {
            SILT_RETURN_NOT_OK(Invalid(item, *to));
            continue;
          }
          g->builder->Append<int64_t>(v.GetLong());
          break;
        case VariantType::kTimestampNtz:
          g = GroupFor("n", DataType::TimestampNtz());
          if (g == nullptr) {
            SILT_RETURN_NOT_OK(Invalid(item, *to));
            continue;
          }
          g->builder->Append<int64_t>(v.GetLong());
          break;
      }
      where[static_cast<size_t>(i)] = {g, static_cast<int64_t>(g->rows.size())};
      g->rows.push_back(i);
    }
    // Convert each group with Spark's ANSI cast, failures collected per row.
    std::vector<ColumnPtr> parts{NullColumn(to, 1)};
    std::map<const Group*, int64_t> base;
    int64_t next = 1;
    for (auto& [key, g] : groups_) {
      ColumnPtr column = g.builder->Finish();
      std::vector<uint8_t> bad(g.rows.size(), 0);
      if (!g.type->Equals(*to)) {
        RowErrors errors;
        CastOptions options;
        options.ansi = true;
        options.zone = args_.zone;
        options.context = args_.context;
        options.row_errors = &errors;
        SILT_ASSIGN_OR_RETURN(column, CastColumn(*column, to, options));
        for (int64_t row : errors.rows) {
          const int64_t item = g.rows[static_cast<size_t>(row)];
          SILT_RETURN_NOT_OK(Invalid(items[static_cast<size_t>(item)], *to));
          bad[static_cast<size_t>(row)] = 1;
        }
      }
      for (size_t r = 0; r < g.rows.size(); ++r) {
        if (bad[r]) where[static_cast<size_t>(g.rows[r])].first = nullptr;
      }
      base[&g] = next;
      next += column->length;
      parts.push_back(std::move(column));
    }
    std::vector<int64_t> take(items.size(), 0);
    for (size_t i = 0; i < items.size(); ++i) {
      if (where[i].first != nullptr) take[i] = base[where[i].first] + where[i].second;
    }
    ColumnPtr all = columnar::ConcatColumns(parts);
    return columnar::TakeColumn(*all, take);
  }

  const std::vector<VariantMetadata>& metas_;
  const VariantCastArgs& args_;
  VariantBuilder builder_;
  std::map<std::string, Group> groups_;
  TypePtr to_;
};

// castToVariant of one value.
Status AppendTyped(const Column& c, int64_t row, VariantBuilder* b,
                   std::vector<VariantMetadata>* scratch) {
  if (c.IsNull(row)) {
    b->AppendNull();
    return Status::OK();
  }
  const DataType& t = *c.type;
  switch (t.id()) {
    case TypeId::kNull: b->AppendNull(); return Status::OK();
    case TypeId::kBoolean: b->AppendBoolean(c.BoolValue(row)); return Status::OK();
    case TypeId::kByte: b->AppendLong(c.Value<int8_t>(row)); return Status::OK();
    case TypeId::kShort: b->AppendLong(c.Value<int16_t>(row)); return Status::OK();
    case TypeId::kInt: b->AppendLong(c.Value<int32_t>(row)); return Status::OK();
    case TypeId::kLong: b->AppendLong(c.Value<int64_t>(row)); return Status::OK();
    case TypeId::kFloat: b->AppendFloat(c.Value<float>(row)); return Status::OK();
    case TypeId::kDouble: b->AppendDouble(c.Value<double>(row)); return Status::OK();
    case TypeId::kDecimal: b->AppendDecimal(c.Value<__int128>(row), t.scale()); return Status::OK();
    case TypeId::kString: b->AppendString(c.StringValue(row)); return Status::OK();
    case TypeId::kBinary: b->AppendBinary(c.StringValue(row)); return Status::OK();
    case TypeId::kDate: b->AppendDate(c.Value<int32_t>(row)); return Status::OK();
    case TypeId::kTimestamp: b->AppendTimestamp(c.Value<int64_t>(row)); return Status::OK();
    case TypeId::kTimestampNtz: b->AppendTimestampNtz(c.Value<int64_t>(row)); return Status::OK();
    case TypeId::kVariant: {
      VariantMetadata m;
      if (!m.Init(c.children[0]->StringValue(row))) {
        return Status::Corruption("[MALFORMED_VARIANT] Variant binary is malformed");
      }
      return b->AppendVariant(m, VariantValue(c.children[1]->StringValue(row)));
    }
    case TypeId::kArray: {
      const size_t start = b->position();
      std::vector<uint32_t> offsets;
      const int32_t* off = c.offsets();
      for (int32_t e = off[row]; e < off[row + 1]; ++e) {
        offsets.push_back(static_cast<uint32_t>(b->position() - start));
        SILT_RETURN_NOT_OK(AppendTyped(*c.children[0], e, b, scratch));
      }
      b->FinishArray(start, offsets);
      return Status::OK();
    }
    case TypeId::kStruct: {
      const size_t start = b->position();
      std::vector<VariantBuilder::FieldEntry> fields;
      for (int f = 0; f < t.num_fields(); ++f) {
        const uint32_t id = b->AddKey(t.field(f).name);
        fields.push_back({id, static_cast<uint32_t>(b->position() - start)});
        SILT_RETURN_NOT_OK(AppendTyped(*c.children[static_cast<size_t>(f)], row, b, scratch));
      }
      return b->FinishObject(start, &fields);
    }
    case TypeId::kMap: {
      const size_t start = b->position();
      std::vector<VariantBuilder::FieldEntry> fields;
      const Column& entries = *c.children[0];
      const int32_t* off = c.offsets();
      for (int32_t e = off[row]; e < off[row + 1]; ++e) {
        const uint32_t id = b->AddKey(entries.children[0]->StringValue(e));
        fields.push_back({id, static_cast<uint32_t>(b->position() - start)});
        SILT_RETURN_NOT_OK(AppendTyped(*entries.children[1], e, b, scratch));
      }
      return b->FinishObject(start, &fields);
    }
  }
  return Status::Internal("cannot cast ", t.ToDdl(), " to VARIANT");
}

}  // namespace

columnar::VariantJsonOptions VariantJsonOptionsFor(const TimeZone& zone) {
  columnar::VariantJsonOptions options;
  if (!(zone.is_fixed() && zone.fixed_offset_seconds() == 0)) {
    options.offset_seconds = &ZoneOffset;
    options.zone = &zone;
  }
  return options;
}

bool CanCastFromVariant(const DataType& to) {
  switch (to.id()) {
    case TypeId::kNull: return false;
    case TypeId::kArray: return CanCastFromVariant(*to.element_type());
    case TypeId::kMap:
      return to.key_type()->id() == TypeId::kString && CanCastFromVariant(*to.value_type());
    case TypeId::kStruct:
      for (const columnar::Field& f : to.fields()) {
        if (!CanCastFromVariant(*f.type)) return false;
      }
      return true;
    default: return true;
  }
}

bool CanCastToVariant(const DataType& from, bool structs_and_maps) {
  switch (from.id()) {
    case TypeId::kArray: return CanCastToVariant(*from.element_type(), structs_and_maps);
    case TypeId::kMap:
      return structs_and_maps && from.key_type()->id() == TypeId::kString &&
             CanCastToVariant(*from.value_type(), structs_and_maps);
    case TypeId::kStruct:
      if (!structs_and_maps) return false;
      for (const columnar::Field& f : from.fields()) {
        if (!CanCastToVariant(*f.type, structs_and_maps)) return false;
      }
      return true;
    default: return true;
  }
}

Result<ColumnPtr> VariantItemsToType(const std::vector<VariantItem>& items,
                                     const std::vector<VariantMetadata>& metas, const TypePtr& to,
                                     const VariantCastArgs& args) {
  FromVariant converter(metas, args);
  return converter.Convert(items, to);
}

Result<ColumnPtr> CastVariantColumn(const Column& input, const TypePtr& to,
                                    const VariantCastArgs& args) {
  std::vector<VariantMetadata> metas(static_cast<size_t>(input.length));
  std::vector<VariantItem> items(static_cast<size_t>(input.length));
  for (int64_t row = 0; row < input.length; ++row) {
    if (input.IsNull(row)) continue;
    VariantItem& item = items[static_cast<size_t>(row)];
    if (!metas[static_cast<size_t>(row)].Init(input.children[0]->StringValue(row))) {
      return Status::Corruption("[MALFORMED_VARIANT] Variant binary is malformed (row ", row, ")");
    }
    item.metadata = static_cast<int32_t>(row);
    item.value = VariantValue(input.children[1]->StringValue(row));
    item.missing = false;
  }
  return VariantItemsToType(items, metas, to, args);
}

Result<ColumnPtr> CastToVariantColumn(const Column& input) {
  ColumnBuilder out(DataType::Variant());
  out.Reserve(input.length);
  VariantBuilder builder;
  std::vector<VariantMetadata> scratch;
  std::string value;
  std::string metadata;
  for (int64_t row = 0; row < input.length; ++row) {
    if (input.IsNull(row)) {
      out.AppendNull();
      continue;
    }
    builder.Reset();
    SILT_RETURN_NOT_OK(AppendTyped(input, row, &builder, &scratch));
    value.clear();
    metadata.clear();
    SILT_RETURN_NOT_OK(builder.Finish(&value, &metadata));
    out.child(0)->AppendString(metadata);
    out.child(1)->AppendString(value);
    out.AppendValid();
  }
  return out.Finish();
}

bool AppendVariantRowJson(const Column& variant, int64_t row, const TimeZone& zone,
                          std::string* out) {
  VariantMetadata m;
  if (!m.Init(variant.children[0]->StringValue(row))) return false;
  return columnar::AppendVariantJson(m, VariantValue(variant.children[1]->StringValue(row)),
                                     VariantJsonOptionsFor(zone), out);
}

Result<ColumnPtr> VariantColumnToJson(const Column& input, const TimeZone& zone) {
  ColumnBuilder out(DataType::String());
  out.Reserve(input.length);
  std::string text;
  for (int64_t row = 0; row < input.length; ++row) {
    if (input.IsNull(row)) {
      out.AppendNull();
      continue;
    }
    text.clear();
    if (!AppendVariantRowJson(input, row, zone, &text)) {
      return Status::Corruption("[MALFORMED_VARIANT] Variant binary is malformed (row ", row, ")");
    }
    out.AppendString(text);
  }
  return out.Finish();
}

}  // namespace silt::expr
