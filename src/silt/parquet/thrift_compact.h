// Thrift compact protocol: the byte format of Parquet's footer and page
// headers, written and read by hand (no generated code, no libthrift).
//
// CompactWriter appends an encoding to a std::string; callers emit fields in
// ascending id order inside StructBegin/StructEnd pairs. CompactReader decodes
// untrusted bytes: every read is bounds-checked, nesting depth and container
// sizes are capped, and the first problem is kept as a sticky error (later
// reads return zero values) so that struct decoders can be written as plain
// field loops and check ok() once at the end.
//
// Wire facts (Thrift compact protocol): integers are zigzag ULEB128 varints;
// a field header is one byte (id delta << 4 | type) when the id grows by 1..15
// over the previous field of the same struct, otherwise the type byte followed
// by the zigzag varint id; booleans fields carry their value in the type nibble
// (1 = true, 2 = false); lists start with (size << 4 | element type) for sizes
// below 15, else 0xF0 | element type followed by a varint size; binary is a
// varint length and the bytes; a struct ends with a 0 byte.
//
// Thread safety: instances are not shared between threads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "silt/base/status.h"

namespace silt::parquet::thrift {

enum class CType : uint8_t {
  kStop = 0,
  kBoolTrue = 1,
  kBoolFalse = 2,
  kByte = 3,
  kI16 = 4,
  kI32 = 5,
  kI64 = 6,
  kDouble = 7,
  kBinary = 8,
  kList = 9,
  kSet = 10,
  kMap = 11,
  kStruct = 12,
};

class CompactWriter {
 public:
  // Appends to `out`, which must outlive the writer.
  explicit CompactWriter(std::string* out) : out_(out) {}

  void StructBegin();
  // Writes the stop byte that closes the innermost open struct.
  void StructEnd();

  // Field headers; the value follows through the element writers below.
  // REQUIRES: ids strictly increase within one struct.
  void FieldBegin(int16_t id, CType type);

  void FieldBool(int16_t id, bool value);
  void FieldI8(int16_t id, int8_t value);
  void FieldI16(int16_t id, int16_t value);
  void FieldI32(int16_t id, int32_t value);
  void FieldI64(int16_t id, int64_t value);
  void FieldDouble(int16_t id, double value);
  void FieldBinary(int16_t id, std::string_view value);
  // Field header of a nested struct followed by StructBegin(); close it with
  // StructEnd().
  void FieldStructBegin(int16_t id);
  // Field header of a list followed by the list header; then write `size`
  // elements with the element writers.
  void FieldListBegin(int16_t id, CType element_type, int64_t size);

  // Element writers (list elements, or the value after FieldBegin).
  void ListBegin(CType element_type, int64_t size);
  void Bool(bool value);
  void I8(int8_t value);
  void I16(int16_t value) { Varint(ZigZag32(value)); }
  void I32(int32_t value) { Varint(ZigZag32(value)); }
  void I64(int64_t value) { Varint(ZigZag64(value)); }
  void Double(double value);
  void Binary(std::string_view value);

  void Varint(uint64_t value);

  static uint32_t ZigZag32(int32_t v) {
    return (static_cast<uint32_t>(v) << 1) ^ static_cast<uint32_t>(v >> 31);
  }
  static uint64_t ZigZag64(int64_t v) {
    return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
  }

 private:
  std::string* out_;
  std::vector<int16_t> last_field_id_stack_;
  int16_t last_field_id_ = 0;
};

class CompactReader {
 public:
  // Maximum struct/list nesting accepted from a file.
  static constexpr int kMaxDepth = 64;

  // Reads from [data, data + size); the bytes must outlive the reader.
  CompactReader(const uint8_t* data, int64_t size) : data_(data), size_(size) {}

  bool ok() const { return error_.empty(); }
  // Describes the first error, with the byte offset where it happened.
  const std::string& error() const { return error_; }
  Status status() const;
  // Bytes consumed so far.
  int64_t position() const { return pos_; }

  void StructBegin();
  void StructEnd();
  // Reads the next field header of the current struct. Returns false at the
  // struct's stop byte or after an error.
  bool NextField(int16_t* id, CType* type);

  // Value readers. `type` is the field's wire type (needed for booleans,
  // whose value lives in the header, and to validate the wire type).
  bool ReadBool(CType type);
  int8_t ReadI8(CType type);
  int16_t ReadI16(CType type);
  int32_t ReadI32(CType type);
  int64_t ReadI64(CType type);
  double ReadDouble(CType type);
  std::string ReadBinary(CType type);
  // Reads a list header; returns the element count (0 on error) and its
  // element type. REQUIRES: `type` is kList or kSet.
  int64_t ReadListBegin(CType type, CType* element_type);
  // Element readers for list elements.
  bool ReadBoolElement();

  // Skips a value of wire type `type`.
  void Skip(CType type);

  // Records an error (if none yet) at the current position.
  void Fail(std::string_view what);

 private:
  uint64_t ReadVarint();
  bool Expect(CType actual, CType expected);
  bool ExpectInt(CType actual);
  void SkipDepth(CType type, int depth);

  const uint8_t* data_;
  int64_t size_;
  int64_t pos_ = 0;
  std::string error_;
  std::vector<int16_t> last_field_id_stack_;
  int16_t last_field_id_ = 0;
};

}  // namespace silt::parquet::thrift
