#include "silt/parquet/thrift_compact.h"

#include <cstring>
#include <limits>

namespace silt::parquet::thrift {

namespace {

// Element type nibbles of collections use the same codes as fields, except
// that booleans may appear as either 1 or 2 (both mean "bool").
bool IsBoolType(CType t) { return t == CType::kBoolTrue || t == CType::kBoolFalse; }

}  // namespace

// ---------------------------------------------------------------------------
// CompactWriter

void CompactWriter::StructBegin() {
  last_field_id_stack_.push_back(last_field_id_);
  last_field_id_ = 0;
}

void CompactWriter::StructEnd() {
  out_->push_back(static_cast<char>(CType::kStop));
  last_field_id_ = last_field_id_stack_.back();
  last_field_id_stack_.pop_back();
}

void CompactWriter::FieldBegin(int16_t id, CType type) {
  int delta = id - last_field_id_;
  if (delta > 0 && delta <= 15) {
    out_->push_back(static_cast<char>((delta << 4) | static_cast<int>(type)));
  } else {
    out_->push_back(static_cast<char>(type));
    I16(id);
  }
  last_field_id_ = id;
}

void CompactWriter::FieldBool(int16_t id, bool value) {
  FieldBegin(id, value ? CType::kBoolTrue : CType::kBoolFalse);
}

void CompactWriter::FieldI8(int16_t id, int8_t value) {
  FieldBegin(id, CType::kByte);
  I8(value);
}

void CompactWriter::FieldI16(int16_t id, int16_t value) {
  FieldBegin(id, CType::kI16);
  I16(value);
}

void CompactWriter::FieldI32(int16_t id, int32_t value) {
  FieldBegin(id, CType::kI32);
  I32(value);
}

void CompactWriter::FieldI64(int16_t id, int64_t value) {
  FieldBegin(id, CType::kI64);
  I64(value);
}

void CompactWriter::FieldDouble(int16_t id, double value) {
  FieldBegin(id, CType::kDouble);
  Double(value);
}

void CompactWriter::FieldBinary(int16_t id, std::string_view value) {
  FieldBegin(id, CType::kBinary);
  Binary(value);
}

void CompactWriter::FieldStructBegin(int16_t id) {
  FieldBegin(id, CType::kStruct);
  StructBegin();
}

void CompactWriter::FieldListBegin(int16_t id, CType element_type, int64_t size) {
  FieldBegin(id, CType::kList);
  ListBegin(element_type, size);
}

void CompactWriter::ListBegin(CType element_type, int64_t size) {
  if (size < 15) {
    out_->push_back(static_cast<char>((size << 4) | static_cast<int>(element_type)));
  } else {
    out_->push_back(static_cast<char>(0xF0 | static_cast<int>(element_type)));
    Varint(static_cast<uint64_t>(size));
  }
}

void CompactWriter::Bool(bool value) {
  out_->push_back(static_cast<char>(value ? CType::kBoolTrue : CType::kBoolFalse));
}

void CompactWriter::I8(int8_t value) { out_->push_back(static_cast<char>(value)); }

void CompactWriter::Double(double value) {
  char bytes[8];
  std::memcpy(bytes, &value, 8);  // compact protocol doubles are little-endian
  out_->append(bytes, 8);
}

void CompactWriter::Binary(std::string_view value) {
  Varint(value.size());
  out_->append(value.data(), value.size());
}

void CompactWriter::Varint(uint64_t value) {
  while (value >= 0x80) {
    out_->push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out_->push_back(static_cast<char>(value));
}

// ---------------------------------------------------------------------------
// CompactReader

Status CompactReader::status() const {
  if (ok()) return Status::OK();
  return Status::Corruption(error_);
}

void CompactReader::Fail(std::string_view what) {
  if (!error_.empty()) return;
  error_ = Status::Concat("invalid Thrift data at byte ", pos_, ": ", what);
  pos_ = size_;  // stop every later read
}

uint64_t CompactReader::ReadVarint() {
  uint64_t result = 0;
  int shift = 0;
  while (true) {
    if (pos_ >= size_) {
      Fail("truncated varint");
      return 0;
    }
    uint8_t b = data_[pos_++];
    if (shift == 63 && (b & 0x7E) != 0) {
      Fail("varint overflows 64 bits");
      return 0;
    }
    result |= static_cast<uint64_t>(b & 0x7F) << shift;
    if ((b & 0x80) == 0) return result;
    shift += 7;
    if (shift > 63) {
      Fail("varint longer than 10 bytes");
      return 0;
    }
  }
}

void CompactReader::StructBegin() {
  if (last_field_id_stack_.size() >= static_cast<size_t>(kMaxDepth)) {
    Fail("structures nested too deeply");
    return;
  }
  last_field_id_stack_.push_back(last_field_id_);
  last_field_id_ = 0;
}

void CompactReader::StructEnd() {
  if (last_field_id_stack_.empty()) return;
  last_field_id_ = last_field_id_stack_.back();
  last_field_id_stack_.pop_back();
}

bool CompactReader::NextField(int16_t* id, CType* type) {
  if (!ok()) return false;
  if (pos_ >= size_) {
    Fail("truncated structure (missing stop byte)");
    return false;
  }
  uint8_t header = data_[pos_++];
  uint8_t type_nibble = header & 0x0F;
  if (type_nibble == static_cast<uint8_t>(CType::kStop)) {
    if (header != 0) {
      Fail("bad field header");
      return false;
    }
    return false;
  }
  if (type_nibble > static_cast<uint8_t>(CType::kStruct)) {
    Fail("unknown field type");
    return false;
  }
  *type = static_cast<CType>(type_nibble);
  int delta = header >> 4;
  if (delta != 0) {
    *id = static_cast<int16_t>(last_field_id_ + delta);
  } else {
    int64_t v = ReadI16(CType::kI16);
    if (!ok()) return false;
    *id = static_cast<int16_t>(v);
  }
  last_field_id_ = *id;
  return true;
}

bool CompactReader::Expect(CType actual, CType expected) {
  if (actual == expected) return true;
  Fail(Status::Concat("expected wire type ", static_cast<int>(expected), ", found ",
                      static_cast<int>(actual)));
  return false;
}

bool CompactReader::ExpectInt(CType actual) {
  if (actual == CType::kByte || actual == CType::kI16 || actual == CType::kI32 ||
      actual == CType::kI64) {
    return true;
  }
  Fail(Status::Concat("expected an integer, found wire type ", static_cast<int>(actual)));
  return false;
}

bool CompactReader::ReadBool(CType type) {
  if (!IsBoolType(type)) {
    Fail("expected a boolean");
    return false;
  }
  return type == CType::kBoolTrue;
}

bool CompactReader::ReadBoolElement() {
  if (pos_ >= size_) {
    Fail("truncated boolean");
    return false;
  }
  uint8_t b = data_[pos_++];
  // Writers disagree on false: the protocol says 2, some emit 0.
  return b == static_cast<uint8_t>(CType::kBoolTrue);
}

int8_t CompactReader::ReadI8(CType type) {
  int64_t v = ReadI64(type);
  if (v < std::numeric_limits<int8_t>::min() || v > std::numeric_limits<int8_t>::max()) {
    Fail("integer out of range for i8");
    return 0;
  }
  return static_cast<int8_t>(v);
}

int16_t CompactReader::ReadI16(CType type) {
  int64_t v = ReadI64(type);
  if (v < std::numeric_limits<int16_t>::min() || v > std::numeric_limits<int16_t>::max()) {
    Fail("integer out of range for i16");
    return 0;
  }
  return static_cast<int16_t>(v);
}

int32_t CompactReader::ReadI32(CType type) {
  int64_t v = ReadI64(type);
  if (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max()) {
    Fail("integer out of range for i32");
    return 0;
  }
  return static_cast<int32_t>(v);
}

int64_t CompactReader::ReadI64(CType type) {
  if (!ExpectInt(type)) return 0;
  if (type == CType::kByte) {
    if (pos_ >= size_) {
      Fail("truncated byte");
      return 0;
    }
    return static_cast<int8_t>(data_[pos_++]);
  }
  uint64_t u = ReadVarint();
  return static_cast<int64_t>(u >> 1) ^ -static_cast<int64_t>(u & 1);
}

double CompactReader::ReadDouble(CType type) {
  if (!Expect(type, CType::kDouble)) return 0;
  if (size_ - pos_ < 8) {
    Fail("truncated double");
    return 0;
  }
  double v;
  std::memcpy(&v, data_ + pos_, 8);
  pos_ += 8;
  return v;
}

std::string CompactReader::ReadBinary(CType type) {
  if (!Expect(type, CType::kBinary)) return {};
  uint64_t len = ReadVarint();
  if (!ok()) return {};
  if (len > static_cast<uint64_t>(size_ - pos_)) {
    Fail(Status::Concat("binary length ", len, " runs past the end of the data"));
    return {};
  }
  std::string s(reinterpret_cast<const char*>(data_ + pos_), static_cast<size_t>(len));
  pos_ += static_cast<int64_t>(len);
  return s;
}

int64_t CompactReader::ReadListBegin(CType type, CType* element_type) {
  *element_type = CType::kStop;
  if (type != CType::kList && type != CType::kSet) {
    Fail("expected a list");
    return 0;
  }
  if (pos_ >= size_) {
    Fail("truncated list header");
    return 0;
  }
  uint8_t header = data_[pos_++];
  uint8_t elem = header & 0x0F;
  if (elem > static_cast<uint8_t>(CType::kStruct) || elem == 0) {
    Fail("bad list element type");
    return 0;
  }
  *element_type = static_cast<CType>(elem);
  uint64_t size = header >> 4;
  if (size == 15) size = ReadVarint();
  if (!ok()) return 0;
  // Every element takes at least one byte (booleans, zero-length binaries,
  // small varints), so a count above the remaining bytes is corrupt; checking
  // here keeps callers from reserving absurd amounts of memory.
  if (size > static_cast<uint64_t>(size_ - pos_)) {
    Fail(Status::Concat("list of ", size, " elements runs past the end of the data"));
    return 0;
  }
  return static_cast<int64_t>(size);
}

void CompactReader::Skip(CType type) { SkipDepth(type, 0); }

void CompactReader::SkipDepth(CType type, int depth) {
  if (!ok()) return;
  if (depth > kMaxDepth) {
    Fail("values nested too deeply");
    return;
  }
  switch (type) {
    case CType::kBoolTrue:
    case CType::kBoolFalse: return;  // the value lives in the field header
    case CType::kByte:
      if (pos_ >= size_)
        Fail("truncated byte");
      else
        ++pos_;
      return;
    case CType::kI16:
    case CType::kI32:
    case CType::kI64: ReadVarint(); return;
    case CType::kDouble:
      if (size_ - pos_ < 8)
        Fail("truncated double");
      else
        pos_ += 8;
      return;
    case CType::kBinary: ReadBinary(type); return;
    case CType::kList:
    case CType::kSet: {
      CType elem;
      int64_t n = ReadListBegin(type, &elem);
      for (int64_t i = 0; i < n && ok(); ++i) {
        if (IsBoolType(elem)) {
          ReadBoolElement();
        } else {
          SkipDepth(elem, depth + 1);
        }
      }
      return;
    }
    case CType::kMap: {
      uint64_t n = ReadVarint();
      if (n == 0 || !ok()) return;
      if (pos_ >= size_) {
        Fail("truncated map header");
        return;
      }
      uint8_t kv = data_[pos_++];
      CType key = static_cast<CType>(kv >> 4);
      CType value = static_cast<CType>(kv & 0x0F);
      if (static_cast<uint8_t>(key) > static_cast<uint8_t>(CType::kStruct) ||
          static_cast<uint8_t>(value) > static_cast<uint8_t>(CType::kStruct) ||
          n > static_cast<uint64_t>(size_ - pos_)) {
        Fail("bad map header");
        return;
      }
      for (uint64_t i = 0; i < n && ok(); ++i) {
        if (IsBoolType(key))
          ReadBoolElement();
        else
          SkipDepth(key, depth + 1);
        if (IsBoolType(value))
          ReadBoolElement();
        else
          SkipDepth(value, depth + 1);
      }
      return;
    }
    case CType::kStruct: {
      StructBegin();
      int16_t id;
      CType ft;
      while (NextField(&id, &ft)) SkipDepth(ft, depth + 1);
      StructEnd();
      return;
    }
    case CType::kStop: Fail("unexpected stop"); return;
  }
  Fail("unknown wire type");
}

}  // namespace silt::parquet::thrift
