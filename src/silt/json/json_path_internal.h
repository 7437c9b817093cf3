// Spark's get_json_object path grammar (JsonPathParser): the compiled
// instruction list and the parser, shared by JsonPathEvaluator (one path) and
// JsonMultiPathEvaluator (many paths over one parsed document).
//
// Thread safety: PathParser is used by one thread; Instr lists are values.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "silt/base/result.h"

namespace silt::json::internal {

enum class Op : uint8_t { kKey, kNamed, kWildcard, kSubscript, kIndex };

struct Instr {
  Op op;
  std::string name;   // kNamed
  int64_t index = 0;  // kIndex
};

// How a matched value is written (Spark's WriteStyle).
enum class Style : uint8_t {
  kRaw,      // top level: strings unquoted
  kQuoted,   // inside a [*] result array
  kFlatten,  // inside [*][*]: nested arrays spliced into the parent
};

// Java regex \s, which Scala's RegexParsers skips before literal and regex
// tokens (but not before single-character tokens such as '$', '.', '[').
inline bool IsJavaSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\x0B' || c == '\f' || c == '\r';
}

class PathParser {
 public:
  explicit PathParser(std::string_view path) : path_(path) {}

  Result<std::vector<Instr>> Parse() {
    std::vector<Instr> instrs;
    if (path_.empty() || path_[0] != '$') return Error(0, "expected '$' at the start");
    size_t pos = 1;
    while (true) {
      size_t end = 0;
      // Alternatives in Spark's order: wildcard | named | subscript.
      if (LiteralAt(pos, ".*", &end) || LiteralAt(pos, "['*']", &end)) {
        instrs.push_back({Op::kWildcard, {}, 0});
        pos = end;
        continue;
      }
      if (pos < path_.size() && path_[pos] == '.') {
        size_t begin = SkipSpace(pos + 1);
        size_t stop = begin;
        while (stop < path_.size() && path_[stop] != '.' && path_[stop] != '[') ++stop;
        if (stop > begin) {
          instrs.push_back({Op::kKey, {}, 0});
          instrs.push_back({Op::kNamed, std::string(path_.substr(begin, stop - begin)), 0});
          pos = stop;
          continue;
        }
      }
      if (LiteralAt(pos, "['", &end)) {
        size_t begin = SkipSpace(end);
        size_t stop = begin;
        while (stop < path_.size() && path_[stop] != '\'') ++stop;
        if (stop > begin && stop + 1 < path_.size() && path_[stop + 1] == ']') {
          instrs.push_back({Op::kKey, {}, 0});
          instrs.push_back({Op::kNamed, std::string(path_.substr(begin, stop - begin)), 0});
          pos = stop + 2;
          continue;
        }
      }
      if (pos < path_.size() && path_[pos] == '[') {
        if (pos + 2 < path_.size() && path_[pos + 1] == '*' && path_[pos + 2] == ']') {
          instrs.push_back({Op::kSubscript, {}, 0});
          instrs.push_back({Op::kWildcard, {}, 0});
          pos += 3;
          continue;
        }
        size_t begin = SkipSpace(pos + 1);
        size_t stop = begin;
        while (stop < path_.size() && path_[stop] >= '0' && path_[stop] <= '9') ++stop;
        if (stop > begin && stop < path_.size() && path_[stop] == ']') {
          int64_t index = 0;
          auto res = std::from_chars(path_.data() + begin, path_.data() + stop, index);
          if (res.ec != std::errc()) return Error(begin, "array index out of range");
          instrs.push_back({Op::kSubscript, {}, 0});
          instrs.push_back({Op::kIndex, {}, index});
          pos = stop + 1;
          continue;
        }
      }
      break;
    }
    if (SkipSpace(pos) != path_.size()) {
      return Error(pos, "expected .name, ['name'], [index], [*], .* or ['*']");
    }
    return instrs;
  }

 private:
  size_t SkipSpace(size_t pos) const {
    while (pos < path_.size() && IsJavaSpace(path_[pos])) ++pos;
    return pos;
  }

  bool LiteralAt(size_t pos, std::string_view literal, size_t* end) const {
    pos = SkipSpace(pos);
    if (path_.substr(pos, literal.size()) != literal) return false;
    *end = pos + literal.size();
    return true;
  }

  Status Error(size_t pos, std::string_view what) const {
    return Status::InvalidArgument("invalid JSON path '", path_, "' at position ",
                                   static_cast<int64_t>(pos), ": ", what);
  }

  std::string_view path_;
};

}  // namespace silt::json::internal
