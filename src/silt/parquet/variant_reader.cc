#include "silt/parquet/variant_reader.h"

#include <string>
#include <vector>

#include "silt/columnar/builder.h"
#include "silt/columnar/variant.h"

namespace silt::parquet {

namespace {

using columnar::Column;
using columnar::ColumnBuilder;
using columnar::ColumnPtr;
using columnar::DataType;
using columnar::TypeId;
using columnar::VariantBuilder;
using columnar::VariantMetadata;
using columnar::VariantValue;

// The children of a (value, typed_value) group by name; null when absent.
struct Pair {
  const Column* value = nullptr;
  const Column* typed = nullptr;
};

Pair PairOf(const Column& group) {
  Pair p;
  const DataType& t = *group.type;
  for (int i = 0; i < t.num_fields(); ++i) {
    const std::string& name = t.field(i).name;
    if (name == "value") p.value = group.children[static_cast<size_t>(i)].get();
    if (name == "typed_value") p.typed = group.children[static_cast<size_t>(i)].get();
  }
  return p;
}

class Rebuilder {
 public:
  // Appends the variant stored at `row` of `pair`; *present = false (and
  // nothing appended) when both are null.
  Status Append(const Pair& pair, int64_t row, bool* present, int depth) {
    if (depth > 1000) return Status::Corruption("shredded variant nested too deeply");
    *present = true;
    const bool has_value = pair.value != nullptr && pair.value->IsValid(row);
    if (pair.typed != nullptr && pair.typed->IsValid(row)) {
      const Column& typed = *pair.typed;
      switch (typed.type->id()) {
        case TypeId::kStruct: return AppendObject(pair, row, has_value, depth);
        case TypeId::kArray: return AppendArray(typed, row, depth);
        default: return AppendScalar(typed, row);
      }
    }
    if (has_value) {
      Status st = builder_.AppendVariant(*metadata_, VariantValue(pair.value->StringValue(row)));
      if (!st.ok()) return Status::Corruption("malformed variant value: ", st.message());
      return Status::OK();
    }
    *present = false;
    return Status::OK();
  }

  void Start(const VariantMetadata* metadata) {
    metadata_ = metadata;
    builder_.Reset();
  }
  VariantBuilder* builder() { return &builder_; }

 private:
  Status AppendScalar(const Column& c, int64_t row) {
    const DataType& t = *c.type;
    switch (t.id()) {
      case TypeId::kBoolean: builder_.AppendBoolean(c.BoolValue(row)); return Status::OK();
      case TypeId::kByte: builder_.AppendLong(c.Value<int8_t>(row)); return Status::OK();
      case TypeId::kShort: builder_.AppendLong(c.Value<int16_t>(row)); return Status::OK();
      case TypeId::kInt: builder_.AppendLong(c.Value<int32_t>(row)); return Status::OK();
      case TypeId::kLong: builder_.AppendLong(c.Value<int64_t>(row)); return Status::OK();
      case TypeId::kFloat: builder_.AppendFloat(c.Value<float>(row)); return Status::OK();
      case TypeId::kDouble: builder_.AppendDouble(c.Value<double>(row)); return Status::OK();
      case TypeId::kDecimal:
        builder_.AppendDecimal(c.Value<__int128>(row), t.scale());
        return Status::OK();
      case TypeId::kDate: builder_.AppendDate(c.Value<int32_t>(row)); return Status::OK();
      case TypeId::kTimestamp: builder_.AppendTimestamp(c.Value<int64_t>(row)); return Status::OK();
      case TypeId::kTimestampNtz:
        builder_.AppendTimestampNtz(c.Value<int64_t>(row));
        return Status::OK();
      case TypeId::kString: builder_.AppendString(c.StringValue(row)); return Status::OK();
      case TypeId::kBinary: builder_.AppendBinary(c.StringValue(row)); return Status::OK();
      default:
        return Status::Corruption("a shredded variant typed_value of type ", t.ToDdl(),
                                  ", which the variant encoding has no place for");
    }
  }

  Status AppendObject(const Pair& pair, int64_t row, bool has_value, int depth) {
    const Column& typed = *pair.typed;
    const DataType& t = *typed.type;
    const size_t start = builder_.position();
    std::vector<VariantBuilder::FieldEntry> fields;
    for (int k = 0; k < t.num_fields(); ++k) {
      const Column& group = *typed.children[static_cast<size_t>(k)];
      if (group.type->id() != TypeId::kStruct || group.IsNull(row)) continue;
      const uint32_t id = builder_.AddKey(t.field(k).name);
      const uint32_t offset = static_cast<uint32_t>(builder_.position() - start);
      bool present = false;
      SILT_RETURN_NOT_OK(Append(PairOf(group), row, &present, depth + 1));
      if (present) fields.push_back({id, offset});
    }
    if (has_value) {
      // A partially shredded object: the fields that were not shredded.
      VariantValue rest(pair.value->StringValue(row));
      VariantValue::Container c;
      if (rest.type() != columnar::VariantType::kObject || !rest.GetContainer(&c)) {
        return Status::Corruption("a shredded variant object whose value is not an object");
      }
      for (uint32_t i = 0; i < c.num_elements; ++i) {
        uint32_t key_id = 0;
        VariantValue child;
        std::string_view key;
        if (!rest.ObjectField(c, i, &key_id, &child) || !metadata_->Key(key_id, &key)) {
          return Status::Corruption("malformed variant object");
        }
        const uint32_t id = builder_.AddKey(key);
        fields.push_back({id, static_cast<uint32_t>(builder_.position() - start)});
        Status st = builder_.AppendVariant(*metadata_, child);
        if (!st.ok()) return Status::Corruption("malformed variant value: ", st.message());
      }
    }
    Status st = builder_.FinishObject(start, &fields);
    if (!st.ok()) return Status::Corruption("a shredded variant object: ", st.message());
    return Status::OK();
  }

  Status AppendArray(const Column& typed, int64_t row, int depth) {
    const Column& elements = *typed.children[0];
    if (elements.type->id() != TypeId::kStruct) {
      return Status::Corruption("a shredded variant array whose elements are not groups");
    }
    const Pair element = PairOf(elements);
    const size_t start = builder_.position();
    std::vector<uint32_t> offsets;
    const int32_t* off = typed.offsets();
    for (int32_t e = off[row]; e < off[row + 1]; ++e) {
      offsets.push_back(static_cast<uint32_t>(builder_.position() - start));
      bool present = false;
      SILT_RETURN_NOT_OK(Append(element, e, &present, depth + 1));
      // Elements are never missing; a writer that left one out meant null.
      if (!present) builder_.AppendNull();
    }
    builder_.FinishArray(start, offsets);
    return Status::OK();
  }

  const VariantMetadata* metadata_ = nullptr;
  VariantBuilder builder_;
};

}  // namespace

bool IsVariantStorage(const DataType& type) {
  if (type.id() != TypeId::kStruct) return false;
  bool metadata = false;
  bool value = false;
  bool typed = false;
  for (const columnar::Field& f : type.fields()) {
    if (f.name == "metadata" && f.type->id() == TypeId::kBinary) {
      metadata = true;
    } else if (f.name == "value" && f.type->id() == TypeId::kBinary) {
      value = true;
    } else if (f.name == "typed_value") {
      typed = true;
    } else {
      return false;
    }
  }
  return metadata && (value || typed);
}

Result<ColumnPtr> VariantFromParquet(const Column& storage) {
  const Column* metadata = nullptr;
  const DataType& t = *storage.type;
  for (int i = 0; i < t.num_fields(); ++i) {
    if (t.field(i).name == "metadata") metadata = storage.children[static_cast<size_t>(i)].get();
  }
  const Pair top = PairOf(storage);
  // Unshredded, with both binaries in every valid row: they are the
  // variant's own children.
  bool whole = top.typed == nullptr && metadata != nullptr && top.value != nullptr;
  if (whole && (top.value->null_count > 0 || metadata->null_count > 0)) {
    for (int64_t row = 0; row < storage.length && whole; ++row) {
      whole = storage.IsNull(row) || (top.value->IsValid(row) && metadata->IsValid(row));
    }
  }
  if (whole) {
    auto out = std::make_shared<Column>();
    out->type = DataType::Variant();
    out->length = storage.length;
    out->null_count = storage.null_count;
    out->validity = storage.validity;
    out->children = {storage.children[static_cast<size_t>(t.FieldIndex("metadata"))],
                     storage.children[static_cast<size_t>(t.FieldIndex("value"))]};
    return ColumnPtr(std::move(out));
  }
  ColumnBuilder out(DataType::Variant());
  out.Reserve(storage.length);
  Rebuilder rebuilder;
  std::string value;
  std::string meta_out;
  for (int64_t row = 0; row < storage.length; ++row) {
    if (storage.IsNull(row)) {
      out.AppendNull();
      continue;
    }
    VariantMetadata meta;
    if (metadata == nullptr || metadata->IsNull(row) || !meta.Init(metadata->StringValue(row))) {
      return Status::Corruption("variant row ", row, " has no valid metadata");
    }
    rebuilder.Start(&meta);
    bool present = false;
    SILT_RETURN_NOT_OK_CTX(rebuilder.Append(top, row, &present, 0), "variant row ", row);
    if (!present) rebuilder.builder()->AppendNull();
    value.clear();
    meta_out.clear();
    SILT_RETURN_NOT_OK(rebuilder.builder()->Finish(&value, &meta_out));
    out.child(0)->AppendString(meta_out);
    out.child(1)->AppendString(value);
    out.AppendValid();
  }
  return out.Finish();
}

}  // namespace silt::parquet
