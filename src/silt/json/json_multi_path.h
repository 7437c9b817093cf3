// JsonMultiPathEvaluator: several get_json_object paths over one string
// column, parsing each document once per row for all of them. A select list
// such as the seed job's, with eight get_json_object(e.payload, '$.x') calls,
// pays one simdjson parse per row instead of eight.
//
// Each path behaves exactly like JsonPathEvaluator (json_decoder.h): the same
// grammar, the same Spark 3.5 results, NULL for a missing path, a JSON null,
// a NULL input or malformed JSON.
//
// Thread safety: one evaluator per thread. Ownership: the evaluator owns its
// compiled paths and scratch buffers; returned columns are independent of it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/json/capture_cast.h"

namespace silt::json {

// The path AddPath() takes for json_tuple's field `key`: the value of the
// root object's last member named exactly `key` that is not JSON null (a
// string unquoted, anything else as compact JSON), NULL when the root is not
// an object or has no such member (Spark's JsonTuple). Not a get_json_object
// path: it starts with a control character no path can start with.
std::string JsonTupleFieldPath(std::string_view key);

class JsonMultiPathEvaluator {
 public:
  // An evaluator with no paths yet.
  static std::unique_ptr<JsonMultiPathEvaluator> Make();
  ~JsonMultiPathEvaluator();

  // Compiles `path` and returns its index among this evaluator's paths (a
  // path added twice gets the index of its first addition).
  //
  // With `capture_scalars`, the path's result column is a struct column
  // (CapturedType()): when the path (without wildcards) selects a JSON
  // number or boolean, `kind` and `bits` hold it (a CapturedKind and the
  // int64 value, the uint64 or double bit pattern, or 0/1) and `text` is
  // NULL, so a consumer that wants a number reads it without the text round
  // trip; any other result is in `text` exactly as without capture (kind
  // NULL). AppendCapturedText() gives a captured value's text.
  //
  // With capture_scalars and a `cast` other than kNone, the result column is
  // a CapturedCastType(cast) struct instead: `value` holds Spark's
  // CAST(text AS type) (ANSI when `ansi`; TRY_CAST reads as non-ANSI) of
  // the text the path gives, on the rows whose number or boolean converts
  // without the text, and `text` holds the path's text on every other
  // non-NULL row (strings, objects, and the numbers whose text decides: an
  // overflow, a fraction under ANSI, an exponent, a float's rounding tie),
  // for the caller to cast; both NULL where the path's result is NULL. So a
  // batch whose `text` is all NULL needs no pass of the cast's own.
  // Errors: InvalidArgument for a malformed path, naming the path and the
  // position, as JsonPathEvaluator::Make.
  Result<int> AddPath(std::string_view path, bool capture_scalars = false,
                      CaptureCast cast = CaptureCast::kNone, bool ansi = false);
  int num_paths() const;
  // An inactive path is not evaluated: its result is an all-NULL column.
  // Paths start active.
  void SetActive(int path_index, bool active);

  // `json_strings`: a string or binary column. Returns one string column per
  // path (in AddPath order), each of json_strings.length rows. `rows`, when
  // not null, is a bitmap of the rows to evaluate: the others are not parsed
  // and read NULL.
  // Errors: InvalidArgument for another input type.
  Result<std::vector<columnar::ColumnPtr>> Evaluate(const columnar::Column& json_strings,
                                                    const uint8_t* rows = nullptr);

 private:
  JsonMultiPathEvaluator();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace silt::json
