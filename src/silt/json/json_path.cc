// JsonPathEvaluator: Spark's get_json_object for one path. The grammar and
// evaluation live once, in json_multi_path.cc (JsonMultiPathEvaluator); this
// is that evaluator with a single path.

#include <utility>
#include <vector>

#include "silt/json/json_decoder.h"
#include "silt/json/json_multi_path.h"

namespace silt::json {

struct JsonPathEvaluator::Impl {
  std::unique_ptr<JsonMultiPathEvaluator> evaluator;
};

JsonPathEvaluator::JsonPathEvaluator() : impl_(std::make_unique<Impl>()) {}
JsonPathEvaluator::~JsonPathEvaluator() = default;

Result<std::unique_ptr<JsonPathEvaluator>> JsonPathEvaluator::Make(std::string_view path) {
  std::unique_ptr<JsonPathEvaluator> evaluator(new JsonPathEvaluator());
  evaluator->impl_->evaluator = JsonMultiPathEvaluator::Make();
  SILT_RETURN_NOT_OK(evaluator->impl_->evaluator->AddPath(path).status());
  return evaluator;
}

Result<columnar::ColumnPtr> JsonPathEvaluator::Evaluate(const columnar::Column& json_strings) {
  SILT_ASSIGN_OR_RETURN(std::vector<columnar::ColumnPtr> columns,
                        impl_->evaluator->Evaluate(json_strings));
  return std::move(columns.front());
}

}  // namespace silt::json
