#include "silt/parquet/parquet_metadata.h"

namespace silt::parquet {

using thrift::CompactReader;
using thrift::CompactWriter;
using thrift::CType;

namespace {

// Tracks required fields while decoding one struct: Set(id) when seen, then
// Check() fails the reader naming the first missing one.
class Required {
 public:
  Required(CompactReader* r, const char* struct_name) : r_(r), struct_name_(struct_name) {}
  void Set(int16_t id) {
    if (id >= 0 && id < 64) seen_ |= uint64_t{1} << id;
  }
  void Check(std::initializer_list<std::pair<int16_t, const char*>> fields) {
    for (const auto& [id, name] : fields) {
      if ((seen_ & (uint64_t{1} << id)) == 0) {
        r_->Fail(Status::Concat(struct_name_, " lacks required field ", name));
        return;
      }
    }
  }

 private:
  CompactReader* r_;
  const char* struct_name_;
  uint64_t seen_ = 0;
};

template <typename E>
E ReadEnum(CompactReader* r, CType t) {
  return static_cast<E>(r->ReadI32(t));
}

template <typename E>
void WriteEnumField(CompactWriter* w, int16_t id, E e) {
  w->FieldI32(id, static_cast<int32_t>(e));
}

template <typename T>
void ReadStructList(CompactReader* r, CType t, std::vector<T>* out) {
  CType elem;
  int64_t n = r->ReadListBegin(t, &elem);
  if (!r->ok()) return;
  if (n > 0 && elem != CType::kStruct) {
    r->Fail("expected a list of structures");
    return;
  }
  out->clear();
  out->reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n && r->ok(); ++i) {
    out->emplace_back();
    out->back().Read(r);
  }
}

template <typename T>
void WriteStructList(CompactWriter* w, int16_t id, const std::vector<T>& v) {
  w->FieldListBegin(id, CType::kStruct, static_cast<int64_t>(v.size()));
  for (const T& x : v) x.Write(w);
}

}  // namespace

std::string_view PhysicalTypeName(PhysicalType t) {
  switch (t) {
    case PhysicalType::kBoolean: return "BOOLEAN";
    case PhysicalType::kInt32: return "INT32";
    case PhysicalType::kInt64: return "INT64";
    case PhysicalType::kInt96: return "INT96";
    case PhysicalType::kFloat: return "FLOAT";
    case PhysicalType::kDouble: return "DOUBLE";
    case PhysicalType::kByteArray: return "BYTE_ARRAY";
    case PhysicalType::kFixedLenByteArray: return "FIXED_LEN_BYTE_ARRAY";
  }
  return "UNKNOWN_TYPE";
}

std::string_view EncodingName(Encoding e) {
  switch (e) {
    case Encoding::kPlain: return "PLAIN";
    case Encoding::kPlainDictionary: return "PLAIN_DICTIONARY";
    case Encoding::kRle: return "RLE";
    case Encoding::kBitPacked: return "BIT_PACKED";
    case Encoding::kDeltaBinaryPacked: return "DELTA_BINARY_PACKED";
    case Encoding::kDeltaLengthByteArray: return "DELTA_LENGTH_BYTE_ARRAY";
    case Encoding::kDeltaByteArray: return "DELTA_BYTE_ARRAY";
    case Encoding::kRleDictionary: return "RLE_DICTIONARY";
    case Encoding::kByteStreamSplit: return "BYTE_STREAM_SPLIT";
  }
  return "UNKNOWN_ENCODING";
}

std::string_view CodecName(CompressionCodec c) {
  switch (c) {
    case CompressionCodec::kUncompressed: return "UNCOMPRESSED";
    case CompressionCodec::kSnappy: return "SNAPPY";
    case CompressionCodec::kGzip: return "GZIP";
    case CompressionCodec::kLzo: return "LZO";
    case CompressionCodec::kBrotli: return "BROTLI";
    case CompressionCodec::kLz4: return "LZ4";
    case CompressionCodec::kZstd: return "ZSTD";
    case CompressionCodec::kLz4Raw: return "LZ4_RAW";
  }
  return "UNKNOWN_CODEC";
}

// ---------------------------------------------------------------------------
// LogicalType

LogicalType LogicalType::Decimal(int32_t precision, int32_t scale) {
  LogicalType t = Make(Kind::kDecimal);
  t.precision = precision;
  t.scale = scale;
  return t;
}

LogicalType LogicalType::Timestamp(bool utc, TimeUnit unit) {
  LogicalType t = Make(Kind::kTimestamp);
  t.is_adjusted_to_utc = utc;
  t.unit = unit;
  return t;
}

LogicalType LogicalType::Integer(int8_t bit_width, bool is_signed) {
  LogicalType t = Make(Kind::kInteger);
  t.bit_width = bit_width;
  t.is_signed = is_signed;
  return t;
}

namespace {

void WriteTimeUnit(CompactWriter* w, int16_t id, TimeUnit unit) {
  w->FieldStructBegin(id);
  w->FieldStructBegin(static_cast<int16_t>(unit));  // MILLIS=1, MICROS=2, NANOS=3
  w->StructEnd();
  w->StructEnd();
}

TimeUnit ReadTimeUnit(CompactReader* r, CType t, bool* known) {
  TimeUnit unit = TimeUnit::kMicros;
  *known = false;
  if (t != CType::kStruct) {
    r->Fail("TimeUnit is not a structure");
    return unit;
  }
  r->StructBegin();
  int16_t id;
  CType ft;
  while (r->NextField(&id, &ft)) {
    if (id >= 1 && id <= 3 && ft == CType::kStruct) {
      unit = static_cast<TimeUnit>(id);
      *known = true;
    }
    r->Skip(ft);
  }
  r->StructEnd();
  return unit;
}

}  // namespace

void LogicalType::Write(CompactWriter* w) const {
  w->StructBegin();
  int16_t id = static_cast<int16_t>(kind);
  switch (kind) {
    case Kind::kNone: break;
    case Kind::kDecimal:
      w->FieldStructBegin(id);
      w->FieldI32(1, scale);
      w->FieldI32(2, precision);
      w->StructEnd();
      break;
    case Kind::kTime:
    case Kind::kTimestamp:
      w->FieldStructBegin(id);
      w->FieldBool(1, is_adjusted_to_utc);
      WriteTimeUnit(w, 2, unit);
      w->StructEnd();
      break;
    case Kind::kInteger:
      w->FieldStructBegin(id);
      w->FieldI8(1, bit_width);
      w->FieldBool(2, is_signed);
      w->StructEnd();
      break;
    default:
      // Parameterless members are empty structs.
      w->FieldStructBegin(id);
      w->StructEnd();
      break;
  }
  w->StructEnd();
}

void LogicalType::Read(CompactReader* r) {
  *this = LogicalType();
  r->StructBegin();
  int16_t id;
  CType t;
  while (r->NextField(&id, &t)) {
    if (t != CType::kStruct) {
      r->Skip(t);
      continue;
    }
    kind = static_cast<Kind>(id);
    switch (kind) {
      case Kind::kDecimal: {
        Required req(r, "DecimalType");
        r->StructBegin();
        int16_t fid;
        CType ft;
        while (r->NextField(&fid, &ft)) {
          req.Set(fid);
          if (fid == 1)
            scale = r->ReadI32(ft);
          else if (fid == 2)
            precision = r->ReadI32(ft);
          else
            r->Skip(ft);
        }
        r->StructEnd();
        req.Check({{1, "scale"}, {2, "precision"}});
        break;
      }
      case Kind::kTime:
      case Kind::kTimestamp: {
        Required req(r, kind == Kind::kTime ? "TimeType" : "TimestampType");
        bool unit_known = false;
        r->StructBegin();
        int16_t fid;
        CType ft;
        while (r->NextField(&fid, &ft)) {
          req.Set(fid);
          if (fid == 1)
            is_adjusted_to_utc = r->ReadBool(ft);
          else if (fid == 2)
            unit = ReadTimeUnit(r, ft, &unit_known);
          else
            r->Skip(ft);
        }
        r->StructEnd();
        req.Check({{1, "isAdjustedToUTC"}, {2, "unit"}});
        // An unknown unit is an unsupported feature, not corruption; keep
        // the annotation but mark the unit out of range.
        if (!unit_known) unit = static_cast<TimeUnit>(0);
        break;
      }
      case Kind::kInteger: {
        Required req(r, "IntType");
        r->StructBegin();
        int16_t fid;
        CType ft;
        while (r->NextField(&fid, &ft)) {
          req.Set(fid);
          if (fid == 1)
            bit_width = r->ReadI8(ft);
          else if (fid == 2)
            is_signed = r->ReadBool(ft);
          else
            r->Skip(ft);
        }
        r->StructEnd();
        req.Check({{1, "bitWidth"}, {2, "isSigned"}});
        break;
      }
      default:
        // Parameterless members are empty structs, but may gain fields.
        r->Skip(t);
        break;
    }
  }
  r->StructEnd();
}

// ---------------------------------------------------------------------------
// Statistics

void Statistics::Write(CompactWriter* w) const {
  w->StructBegin();
  if (max) w->FieldBinary(1, *max);
  if (min) w->FieldBinary(2, *min);
  if (null_count) w->FieldI64(3, *null_count);
  if (distinct_count) w->FieldI64(4, *distinct_count);
  if (max_value) w->FieldBinary(5, *max_value);
  if (min_value) w->FieldBinary(6, *min_value);
  if (is_max_value_exact) w->FieldBool(7, *is_max_value_exact);
  if (is_min_value_exact) w->FieldBool(8, *is_min_value_exact);
  if (nan_count) w->FieldI64(9, *nan_count);
  w->StructEnd();
}

void Statistics::Read(CompactReader* r) {
  *this = Statistics();
  r->StructBegin();
  int16_t id;
  CType t;
  while (r->NextField(&id, &t)) {
    switch (id) {
      case 1: max = r->ReadBinary(t); break;
      case 2: min = r->ReadBinary(t); break;
      case 3: null_count = r->ReadI64(t); break;
      case 4: distinct_count = r->ReadI64(t); break;
      case 5: max_value = r->ReadBinary(t); break;
      case 6: min_value = r->ReadBinary(t); break;
      case 7: is_max_value_exact = r->ReadBool(t); break;
      case 8: is_min_value_exact = r->ReadBool(t); break;
      case 9: nan_count = r->ReadI64(t); break;
      default: r->Skip(t); break;
    }
  }
  r->StructEnd();
}

// ---------------------------------------------------------------------------
// SchemaElement

void SchemaElement::Write(CompactWriter* w) const {
  w->StructBegin();
  if (type) WriteEnumField(w, 1, *type);
  if (type_length) w->FieldI32(2, *type_length);
  if (repetition_type) WriteEnumField(w, 3, *repetition_type);
  w->FieldBinary(4, name);
  if (num_children) w->FieldI32(5, *num_children);
  if (converted_type) WriteEnumField(w, 6, *converted_type);
  if (scale) w->FieldI32(7, *scale);
  if (precision) w->FieldI32(8, *precision);
  if (field_id) w->FieldI32(9, *field_id);
  if (logical_type) {
    w->FieldBegin(10, CType::kStruct);
    logical_type->Write(w);
  }
  w->StructEnd();
}

void SchemaElement::Read(CompactReader* r) {
  *this = SchemaElement();
  Required req(r, "SchemaElement");
  r->StructBegin();
  int16_t id;
  CType t;
  while (r->NextField(&id, &t)) {
    req.Set(id);
    switch (id) {
      case 1: type = ReadEnum<PhysicalType>(r, t); break;
      case 2: type_length = r->ReadI32(t); break;
      case 3: repetition_type = ReadEnum<Repetition>(r, t); break;
      case 4: name = r->ReadBinary(t); break;
      case 5: num_children = r->ReadI32(t); break;
      case 6: converted_type = ReadEnum<ConvertedType>(r, t); break;
      case 7: scale = r->ReadI32(t); break;
      case 8: precision = r->ReadI32(t); break;
      case 9: field_id = r->ReadI32(t); break;
      case 10:
        if (t != CType::kStruct) {
          r->Fail("SchemaElement.logicalType is not a structure");
          break;
        }
        logical_type.emplace();
        logical_type->Read(r);
        break;
      default: r->Skip(t); break;
    }
  }
  r->StructEnd();
  req.Check({{4, "name"}});
}

// ---------------------------------------------------------------------------
// KeyValue, PageEncodingStats

void KeyValue::Write(CompactWriter* w) const {
  w->StructBegin();
  w->FieldBinary(1, key);
  if (value) w->FieldBinary(2, *value);
  w->StructEnd();
}

void KeyValue::Read(CompactReader* r) {
  *this = KeyValue();
  Required req(r, "KeyValue");
  r->StructBegin();
  int16_t id;
  CType t;
  while (r->NextField(&id, &t)) {
    req.Set(id);
    if (id == 1)
      key = r->ReadBinary(t);
    else if (id == 2)
      value = r->ReadBinary(t);
    else
      r->Skip(t);
  }
  r->StructEnd();
  req.Check({{1, "key"}});
}

void PageEncodingStats::Write(CompactWriter* w) const {
  w->StructBegin();
  WriteEnumField(w, 1, page_type);
  WriteEnumField(w, 2, encoding);
  w->FieldI32(3, count);
  w->StructEnd();
}

void PageEncodingStats::Read(CompactReader* r) {
  *this = PageEncodingStats();
  r->StructBegin();
  int16_t id;
  CType t;
  while (r->NextField(&id, &t)) {
    if (id == 1)
      page_type = ReadEnum<PageType>(r, t);
    else if (id == 2)
      encoding = ReadEnum<Encoding>(r, t);
    else if (id == 3)
      count = r->ReadI32(t);
    else
      r->Skip(t);
  }
  r->StructEnd();
}

// ---------------------------------------------------------------------------
// ColumnMetaData, ColumnChunk, RowGroup

void ColumnMetaData::Write(CompactWriter* w) const {
  w->StructBegin();
  WriteEnumField(w, 1, type);
  w->FieldListBegin(2, CType::kI32, static_cast<int64_t>(encodings.size()));
  for (Encoding e : encodings) w->I32(static_cast<int32_t>(e));
  w->FieldListBegin(3, CType::kBinary, static_cast<int64_t>(path_in_schema.size()));
  for (const std::string& p : path_in_schema) w->Binary(p);
  WriteEnumField(w, 4, codec);
  w->FieldI64(5, num_values);
  w->FieldI64(6, total_uncompressed_size);
  w->FieldI64(7, total_compressed_size);
  if (!key_value_metadata.empty()) WriteStructList(w, 8, key_value_metadata);
  w->FieldI64(9, data_page_offset);
  if (index_page_offset) w->FieldI64(10, *index_page_offset);
  if (dictionary_page_offset) w->FieldI64(11, *dictionary_page_offset);
  if (statistics) {
    w->FieldBegin(12, CType::kStruct);
    statistics->Write(w);
  }
  if (!encoding_stats.empty()) WriteStructList(w, 13, encoding_stats);
  if (bloom_filter_offset) w->FieldI64(14, *bloom_filter_offset);
  if (bloom_filter_length) w->FieldI32(15, *bloom_filter_length);
  w->StructEnd();
}

void ColumnMetaData::Read(CompactReader* r) {
  *this = ColumnMetaData();
  Required req(r, "ColumnMetaData");
  r->StructBegin();
  int16_t id;
  CType t;
  while (r->NextField(&id, &t)) {
    req.Set(id);
    switch (id) {
      case 1: type = ReadEnum<PhysicalType>(r, t); break;
      case 2: {
        CType elem;
        int64_t n = r->ReadListBegin(t, &elem);
        for (int64_t i = 0; i < n && r->ok(); ++i) encodings.push_back(ReadEnum<Encoding>(r, elem));
        break;
      }
      case 3: {
        CType elem;
        int64_t n = r->ReadListBegin(t, &elem);
        for (int64_t i = 0; i < n && r->ok(); ++i) path_in_schema.push_back(r->ReadBinary(elem));
        break;
      }
      case 4: codec = ReadEnum<CompressionCodec>(r, t); break;
      case 5: num_values = r->ReadI64(t); break;
      case 6: total_uncompressed_size = r->ReadI64(t); break;
      case 7: total_compressed_size = r->ReadI64(t); break;
      case 8: ReadStructList(r, t, &key_value_metadata); break;
      case 9: data_page_offset = r->ReadI64(t); break;
      case 10: index_page_offset = r->ReadI64(t); break;
      case 11: dictionary_page_offset = r->ReadI64(t); break;
      case 12:
        if (t != CType::kStruct) {
          r->Fail("ColumnMetaData.statistics is not a structure");
          break;
        }
        statistics.emplace();
        statistics->Read(r);
        break;
      case 13: ReadStructList(r, t, &encoding_stats); break;
      case 14: bloom_filter_offset = r->ReadI64(t); break;
      case 15: bloom_filter_length = r->ReadI32(t); break;
      default: r->Skip(t); break;
    }
  }
  r->StructEnd();
  req.Check({{1, "type"},
             {2, "encodings"},
             {3, "path_in_schema"},
             {4, "codec"},
             {5, "num_values"},
             {6, "total_uncompressed_size"},
             {7, "total_compressed_size"},
             {9, "data_page_offset"}});
}

void ColumnChunk::Write(CompactWriter* w) const {
  w->StructBegin();
  if (file_path) w->FieldBinary(1, *file_path);
  w->FieldI64(2, file_offset);
  if (meta_data) {
    w->FieldBegin(3, CType::kStruct);
    meta_data->Write(w);
  }
  if (offset_index_offset) w->FieldI64(4, *offset_index_offset);
  if (offset_index_length) w->FieldI32(5, *offset_index_length);
  if (column_index_offset) w->FieldI64(6, *column_index_offset);
  if (column_index_length) w->FieldI32(7, *column_index_length);
  w->StructEnd();
}

void PageLocation::Write(CompactWriter* w) const {
  w->StructBegin();
  w->FieldI64(1, offset);
  w->FieldI32(2, compressed_page_size);
  w->FieldI64(3, first_row_index);
  w->StructEnd();
}

void PageLocation::Read(CompactReader* r) {
  *this = PageLocation();
  r->StructBegin();
  int16_t id;
  CType t;
  while (r->NextField(&id, &t)) {
    switch (id) {
      case 1: offset = r->ReadI64(t); break;
      case 2: compressed_page_size = r->ReadI32(t); break;
      case 3: first_row_index = r->ReadI64(t); break;
      default: r->Skip(t); break;
    }
  }
  r->StructEnd();
}

void OffsetIndex::Write(CompactWriter* w) const {
  w->StructBegin();
  WriteStructList(w, 1, page_locations);
  w->StructEnd();
}

void OffsetIndex::Read(CompactReader* r) {
  *this = OffsetIndex();
  r->StructBegin();
  int16_t id;
  CType t;
  while (r->NextField(&id, &t)) {
    if (id == 1) {
      ReadStructList(r, t, &page_locations);
    } else {
      r->Skip(t);
    }
  }
  r->StructEnd();
}

void ColumnIndex::Write(CompactWriter* w) const {
  w->StructBegin();
  w->FieldListBegin(1, CType::kBoolTrue, static_cast<int64_t>(null_pages.size()));
  for (bool b : null_pages) w->Bool(b);
  w->FieldListBegin(2, CType::kBinary, static_cast<int64_t>(min_values.size()));
  for (const std::string& v : min_values) w->Binary(v);
  w->FieldListBegin(3, CType::kBinary, static_cast<int64_t>(max_values.size()));
  for (const std::string& v : max_values) w->Binary(v);
  WriteEnumField(w, 4, boundary_order);
  w->FieldListBegin(5, CType::kI64, static_cast<int64_t>(null_counts.size()));
  for (int64_t n : null_counts) w->I64(n);
  w->StructEnd();
}

void ColumnIndex::Read(CompactReader* r) {
  *this = ColumnIndex();
  r->StructBegin();
  int16_t id;
  CType t;
  while (r->NextField(&id, &t)) {
    CType elem;
    switch (id) {
      case 1: {
        const int64_t n = r->ReadListBegin(t, &elem);
        for (int64_t i = 0; i < n && r->ok(); ++i) null_pages.push_back(r->ReadBoolElement());
        break;
      }
      case 2:
      case 3: {
        std::vector<std::string>& out = id == 2 ? min_values : max_values;
        const int64_t n = r->ReadListBegin(t, &elem);
        for (int64_t i = 0; i < n && r->ok(); ++i) out.push_back(r->ReadBinary(elem));
        break;
      }
      case 4: boundary_order = ReadEnum<BoundaryOrder>(r, t); break;
      case 5: {
        const int64_t n = r->ReadListBegin(t, &elem);
        for (int64_t i = 0; i < n && r->ok(); ++i) null_counts.push_back(r->ReadI64(elem));
        break;
      }
      default: r->Skip(t); break;
    }
  }
  r->StructEnd();
}

void ColumnChunk::Read(CompactReader* r) {
  *this = ColumnChunk();
  r->StructBegin();
  int16_t id;
  CType t;
  while (r->NextField(&id, &t)) {
    switch (id) {
      case 1: file_path = r->ReadBinary(t); break;
      case 2: file_offset = r->ReadI64(t); break;
      case 3:
        if (t != CType::kStruct) {
          r->Fail("ColumnChunk.meta_data is not a structure");
          break;
        }
        meta_data.emplace();
        meta_data->Read(r);
        break;
      case 4: offset_index_offset = r->ReadI64(t); break;
      case 5: offset_index_length = r->ReadI32(t); break;
      case 6: column_index_offset = r->ReadI64(t); break;
      case 7: column_index_length = r->ReadI32(t); break;
      default: r->Skip(t); break;
    }
  }
  r->StructEnd();
}

void RowGroup::Write(CompactWriter* w) const {
  w->StructBegin();
  WriteStructList(w, 1, columns);
  w->FieldI64(2, total_byte_size);
  w->FieldI64(3, num_rows);
  if (file_offset) w->FieldI64(5, *file_offset);
  if (total_compressed_size) w->FieldI64(6, *total_compressed_size);
  if (ordinal) w->FieldI16(7, *ordinal);
  w->StructEnd();
}

void RowGroup::Read(CompactReader* r) {
  *this = RowGroup();
  Required req(r, "RowGroup");
  r->StructBegin();
  int16_t id;
  CType t;
  while (r->NextField(&id, &t)) {
    req.Set(id);
    switch (id) {
      case 1: ReadStructList(r, t, &columns); break;
      case 2: total_byte_size = r->ReadI64(t); break;
      case 3: num_rows = r->ReadI64(t); break;
      case 5: file_offset = r->ReadI64(t); break;
      case 6: total_compressed_size = r->ReadI64(t); break;
      case 7: ordinal = r->ReadI16(t); break;
      default: r->Skip(t); break;
    }
  }
  r->StructEnd();
  req.Check({{1, "columns"}, {2, "total_byte_size"}, {3, "num_rows"}});
}

// ---------------------------------------------------------------------------
// FileMetaData

void FileMetaData::Write(CompactWriter* w) const {
  w->StructBegin();
  w->FieldI32(1, version);
  WriteStructList(w, 2, schema);
  w->FieldI64(3, num_rows);
  WriteStructList(w, 4, row_groups);
  if (!key_value_metadata.empty()) WriteStructList(w, 5, key_value_metadata);
  if (created_by) w->FieldBinary(6, *created_by);
  if (!column_orders.empty()) {
    w->FieldListBegin(7, CType::kStruct, static_cast<int64_t>(column_orders.size()));
    for (ColumnOrder order : column_orders) {
      w->StructBegin();
      w->FieldStructBegin(static_cast<int16_t>(order));
      w->StructEnd();
      w->StructEnd();
    }
  }
  w->StructEnd();
}

void FileMetaData::Read(CompactReader* r) {
  *this = FileMetaData();
  Required req(r, "FileMetaData");
  r->StructBegin();
  int16_t id;
  CType t;
  while (r->NextField(&id, &t)) {
    req.Set(id);
    switch (id) {
      case 1: version = r->ReadI32(t); break;
      case 2: ReadStructList(r, t, &schema); break;
      case 3: num_rows = r->ReadI64(t); break;
      case 4: ReadStructList(r, t, &row_groups); break;
      case 5: ReadStructList(r, t, &key_value_metadata); break;
      case 6: created_by = r->ReadBinary(t); break;
      case 7: {
        CType elem;
        int64_t n = r->ReadListBegin(t, &elem);
        for (int64_t i = 0; i < n && r->ok(); ++i) {
          ColumnOrder order = ColumnOrder::kUnknown;
          r->StructBegin();
          int16_t fid;
          CType ft;
          while (r->NextField(&fid, &ft)) {
            if (fid >= 1 && fid <= 3) order = static_cast<ColumnOrder>(fid);
            r->Skip(ft);
          }
          r->StructEnd();
          column_orders.push_back(order);
        }
        break;
      }
      case 8:
        encrypted = true;
        r->Skip(t);
        break;
      default: r->Skip(t); break;
    }
  }
  r->StructEnd();
  req.Check({{1, "version"}, {2, "schema"}, {3, "num_rows"}, {4, "row_groups"}});
}

// ---------------------------------------------------------------------------
// Page headers

void DataPageHeader::Write(CompactWriter* w) const {
  w->StructBegin();
  w->FieldI32(1, num_values);
  WriteEnumField(w, 2, encoding);
  WriteEnumField(w, 3, definition_level_encoding);
  WriteEnumField(w, 4, repetition_level_encoding);
  if (statistics) {
    w->FieldBegin(5, CType::kStruct);
    statistics->Write(w);
  }
  w->StructEnd();
}

void DataPageHeader::Read(CompactReader* r) {
  *this = DataPageHeader();
  Required req(r, "DataPageHeader");
  r->StructBegin();
  int16_t id;
  CType t;
  while (r->NextField(&id, &t)) {
    req.Set(id);
    switch (id) {
      case 1: num_values = r->ReadI32(t); break;
      case 2: encoding = ReadEnum<Encoding>(r, t); break;
      case 3: definition_level_encoding = ReadEnum<Encoding>(r, t); break;
      case 4: repetition_level_encoding = ReadEnum<Encoding>(r, t); break;
      default: r->Skip(t); break;  // page statistics are not used when reading
    }
  }
  r->StructEnd();
  req.Check({{1, "num_values"}, {2, "encoding"}});
}

void DictionaryPageHeader::Write(CompactWriter* w) const {
  w->StructBegin();
  w->FieldI32(1, num_values);
  WriteEnumField(w, 2, encoding);
  if (is_sorted) w->FieldBool(3, *is_sorted);
  w->StructEnd();
}

void DictionaryPageHeader::Read(CompactReader* r) {
  *this = DictionaryPageHeader();
  Required req(r, "DictionaryPageHeader");
  r->StructBegin();
  int16_t id;
  CType t;
  while (r->NextField(&id, &t)) {
    req.Set(id);
    switch (id) {
      case 1: num_values = r->ReadI32(t); break;
      case 2: encoding = ReadEnum<Encoding>(r, t); break;
      case 3: is_sorted = r->ReadBool(t); break;
      default: r->Skip(t); break;
    }
  }
  r->StructEnd();
  req.Check({{1, "num_values"}});
}

void DataPageHeaderV2::Write(CompactWriter* w) const {
  w->StructBegin();
  w->FieldI32(1, num_values);
  w->FieldI32(2, num_nulls);
  w->FieldI32(3, num_rows);
  WriteEnumField(w, 4, encoding);
  w->FieldI32(5, definition_levels_byte_length);
  w->FieldI32(6, repetition_levels_byte_length);
  w->FieldBool(7, is_compressed);
  if (statistics) {
    w->FieldBegin(8, CType::kStruct);
    statistics->Write(w);
  }
  w->StructEnd();
}

void DataPageHeaderV2::Read(CompactReader* r) {
  *this = DataPageHeaderV2();
  Required req(r, "DataPageHeaderV2");
  r->StructBegin();
  int16_t id;
  CType t;
  while (r->NextField(&id, &t)) {
    req.Set(id);
    switch (id) {
      case 1: num_values = r->ReadI32(t); break;
      case 2: num_nulls = r->ReadI32(t); break;
      case 3: num_rows = r->ReadI32(t); break;
      case 4: encoding = ReadEnum<Encoding>(r, t); break;
      case 5: definition_levels_byte_length = r->ReadI32(t); break;
      case 6: repetition_levels_byte_length = r->ReadI32(t); break;
      case 7: is_compressed = r->ReadBool(t); break;
      default: r->Skip(t); break;
    }
  }
  r->StructEnd();
  req.Check({{1, "num_values"},
             {2, "num_nulls"},
             {3, "num_rows"},
             {4, "encoding"},
             {5, "definition_levels_byte_length"},
             {6, "repetition_levels_byte_length"}});
}

void PageHeader::Write(CompactWriter* w) const {
  w->StructBegin();
  WriteEnumField(w, 1, type);
  w->FieldI32(2, uncompressed_page_size);
  w->FieldI32(3, compressed_page_size);
  if (crc) w->FieldI32(4, *crc);
  if (data_page_header) {
    w->FieldBegin(5, CType::kStruct);
    data_page_header->Write(w);
  }
  if (dictionary_page_header) {
    w->FieldBegin(7, CType::kStruct);
    dictionary_page_header->Write(w);
  }
  if (data_page_header_v2) {
    w->FieldBegin(8, CType::kStruct);
    data_page_header_v2->Write(w);
  }
  w->StructEnd();
}

void PageHeader::Read(CompactReader* r) {
  *this = PageHeader();
  Required req(r, "PageHeader");
  r->StructBegin();
  int16_t id;
  CType t;
  while (r->NextField(&id, &t)) {
    req.Set(id);
    switch (id) {
      case 1: type = ReadEnum<PageType>(r, t); break;
      case 2: uncompressed_page_size = r->ReadI32(t); break;
      case 3: compressed_page_size = r->ReadI32(t); break;
      case 4: crc = r->ReadI32(t); break;
      case 5:
        if (t != CType::kStruct) {
          r->Fail("PageHeader.data_page_header is not a structure");
          break;
        }
        data_page_header.emplace();
        data_page_header->Read(r);
        break;
      case 7:
        if (t != CType::kStruct) {
          r->Fail("PageHeader.dictionary_page_header is not a structure");
          break;
        }
        dictionary_page_header.emplace();
        dictionary_page_header->Read(r);
        break;
      case 8:
        if (t != CType::kStruct) {
          r->Fail("PageHeader.data_page_header_v2 is not a structure");
          break;
        }
        data_page_header_v2.emplace();
        data_page_header_v2->Read(r);
        break;
      default: r->Skip(t); break;
    }
  }
  r->StructEnd();
  req.Check({{1, "type"}, {2, "uncompressed_page_size"}, {3, "compressed_page_size"}});
  if (r->ok() && (uncompressed_page_size < 0 || compressed_page_size < 0)) {
    r->Fail("negative page size");
  }
}

Result<FileMetaData> ParseFileMetaData(std::string_view bytes) {
  CompactReader r(reinterpret_cast<const uint8_t*>(bytes.data()),
                  static_cast<int64_t>(bytes.size()));
  FileMetaData md;
  md.Read(&r);
  SILT_RETURN_NOT_OK(r.status());
  return md;
}

Result<ParsedPageHeader> ParsePageHeader(std::string_view bytes) {
  CompactReader r(reinterpret_cast<const uint8_t*>(bytes.data()),
                  static_cast<int64_t>(bytes.size()));
  ParsedPageHeader parsed;
  parsed.header.Read(&r);
  SILT_RETURN_NOT_OK(r.status());
  parsed.header_size = r.position();
  return parsed;
}

}  // namespace silt::parquet
