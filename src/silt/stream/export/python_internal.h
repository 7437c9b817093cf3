// Python source text for the PySpark export (export/*.cc): string literals,
// lists, dicts, docstring text, comment wrapping and Spark interval strings.
// Private to src/silt/stream/export/.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace silt::stream::pyspark {

// A Python string literal (double-quoted; UTF-8 passes through).
std::string Py(std::string_view text);

// The items as Python string literals, comma-separated ("a", "b").
std::string PyArgs(const std::vector<std::string>& items);

// The items as a Python list of string literals (["a", "b"]).
std::string PyList(const std::vector<std::string>& items);

// The entries as a Python dict of string literals ({"k": "v"}).
std::string PyDict(const std::vector<std::pair<std::string, std::string>>& entries);

// Text for inside a docstring.
std::string Escaped(std::string_view text);

// `text` broken at spaces into lines of at most `width` characters (a
// longer word stands alone on its line).
std::vector<std::string> Wrap(const std::string& text, size_t width);

// A duration as Spark's interval parser reads it ("5 minutes"), in the
// largest unit that holds it exactly.
std::string SparkInterval(int64_t micros);

}  // namespace silt::stream::pyspark
