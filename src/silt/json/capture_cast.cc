#include "silt/json/capture_cast.h"

#include <vector>

#include "silt/json/dom_internal.h"

namespace silt::json {

const columnar::TypePtr& CapturedType() {
  static const columnar::TypePtr type = columnar::DataType::Struct({
      columnar::Field{"text", columnar::DataType::String(), true},
      columnar::Field{"kind", columnar::DataType::Byte(), true},
      columnar::Field{"bits", columnar::DataType::Long(), true},
  });
  return type;
}

const columnar::TypePtr& CapturedCastType(CaptureCast cast) {
  static const std::vector<columnar::TypePtr> types = [] {
    const columnar::TypePtr values[] = {columnar::DataType::Boolean(), columnar::DataType::Byte(),
                                        columnar::DataType::Short(),   columnar::DataType::Int(),
                                        columnar::DataType::Long(),    columnar::DataType::Float(),
                                        columnar::DataType::Double()};
    std::vector<columnar::TypePtr> out;
    for (const columnar::TypePtr& value : values) {
      out.push_back(columnar::DataType::Struct({
          columnar::Field{"text", columnar::DataType::String(), true},
          columnar::Field{"value", value, true},
      }));
    }
    return out;
  }();
  return types[static_cast<size_t>(cast) - 1];
}

void AppendCapturedText(CapturedKind kind, int64_t bits, std::string* out) {
  internal::JsonGen gen;
  gen.Reset(out);
  switch (kind) {
    case CapturedKind::kInt64: gen.Int64(bits); break;
    case CapturedKind::kUint64: gen.Uint64(std::bit_cast<uint64_t>(bits)); break;
    case CapturedKind::kDouble: gen.Double(std::bit_cast<double>(bits)); break;
    case CapturedKind::kBool: gen.Bool(bits != 0); break;
  }
}

}  // namespace silt::json
