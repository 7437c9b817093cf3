// Helpers shared by the json module's unit tests: an input column of JSON
// text built from optional strings (nullopt = a null row).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "silt/columnar/builder.h"

namespace silt::json::test_util {

using Rows = std::vector<std::optional<std::string>>;

inline columnar::ColumnPtr StringColumn(const Rows& rows) {
  columnar::ColumnBuilder builder(columnar::DataType::String());
  for (const auto& row : rows) {
    if (row.has_value()) {
      builder.AppendString(*row);
    } else {
      builder.AppendNull();
    }
  }
  return builder.Finish();
}

}  // namespace silt::json::test_util
