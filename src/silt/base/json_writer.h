// JsonWriter: builds compact JSON text (no spaces), as Spark and Delta write
// their log and checkpoint files. Values are written in call order; the
// writer inserts commas and escapes strings per RFC 8259 (non-ASCII UTF-8 is
// written as is, control characters as \uXXXX, like Jackson).
//
//   JsonWriter w;
//   w.BeginObject(); w.Key("add"); w.BeginObject(); w.Member("path", p); ...
//
// Thread safety: one writer per thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace silt {

class JsonWriter {
 public:
  void BeginObject();
  void EndObject();
  void BeginArray();
  void EndArray();
  void Key(std::string_view key);
  void String(std::string_view value);
  void Int(int64_t value);
  void UInt(uint64_t value);
  // Java's Double.toString digits; NaN/Infinity written as strings "NaN",
  // "Infinity", "-Infinity" (Jackson's non-numeric form is not JSON).
  void Double(double value);
  void Bool(bool value);
  void Null();
  // Inserts already-serialized JSON as one value.
  void Raw(std::string_view json);

  // Key(key) and then the value, as one call: a string, an integer (signed
  // types as Int, unsigned as UInt, bool as Bool), a double (as Double) or
  // nullptr (as Null).
  void Member(std::string_view key, std::string_view value) {
    Key(key);
    String(value);
  }
  void Member(std::string_view key, const char* value) { Member(key, std::string_view(value)); }
  template <typename T>
  requires std::is_integral_v<T>
  void Member(std::string_view key, T value) {
    Key(key);
    if constexpr (std::is_same_v<T, bool>) {
      Bool(value);
    } else if constexpr (std::is_signed_v<T>) {
      Int(value);
    } else {
      UInt(value);
    }
  }
  void Member(std::string_view key, double value) {
    Key(key);
    Double(value);
  }
  void Member(std::string_view key, std::nullptr_t) {
    Key(key);
    Null();
  }

  const std::string& str() const { return out_; }
  std::string Take() { return std::move(out_); }
  void Clear() {
    out_.clear();
    need_comma_.clear();
  }

 private:
  void BeforeValue();
  std::string out_;
  std::vector<bool> need_comma_;
  bool after_key_ = false;
};

// Appends `s` JSON-escaped (without quotes) to `out`.
void AppendJsonEscaped(std::string* out, std::string_view s);
// Java's Double.toString / Float.toString as JDK 8..18 print them (the JDKs
// Spark 3.5 runs on): "84.3", "1.0", "1.0E10", "NaN", "-Infinity". These
// JDKs do not always print the shortest round-trip digits (exp(42) is
// "1.73927494152050099E18"); see java_number_format.cc. Defined there.
std::string FormatDoubleJava(double v);
std::string FormatFloatJava(float v);
// Appends FormatDoubleJava(v) to `out` without a temporary string.
void AppendDoubleJava(std::string* out, double v);

}  // namespace silt
