// What a BindSession shares between the expressions bound with it
// (internal to expr). Today: one JsonPathGroup per distinct get_json_object
// input (keyed by the input's bound SQL and type), so all paths over that
// input are evaluated with one parse per document.
//
// Thread safety: as BindSession — one evaluating thread. Ownership: kernels
// hold the groups through shared_ptr; the session only indexes them.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/expr/expression.h"
#include "silt/json/json_multi_path.h"

namespace silt::expr {

// The get_json_object paths over one input value, evaluated together and
// cached for the last input seen.
class JsonPathGroup {
 public:
  JsonPathGroup() : evaluator_(json::JsonMultiPathEvaluator::Make()) {}

  // Adds `path`; returns its index for Get. Errors: InvalidArgument for a
  // malformed path.
  Result<int> AddPath(std::string_view path) { return evaluator_->AddPath(path); }

  // The result of path `path_index` over `input`. The first call for an
  // input evaluates every path of the group; later calls for the same data
  // (the same buffers and validity, possibly through a different Column
  // object) return the cached column.
  Result<columnar::ColumnPtr> Get(int path_index, const columnar::ColumnPtr& input);

 private:
  std::unique_ptr<json::JsonMultiPathEvaluator> evaluator_;
  // Held so that the buffers compared in Get stay alive and their addresses
  // cannot be reused by a later batch.
  columnar::ColumnPtr cached_input_;
  std::vector<columnar::ColumnPtr> cached_results_;
};

struct BindSession::State {
  std::unordered_map<std::string, std::shared_ptr<JsonPathGroup>> json_path_groups;
};

}  // namespace silt::expr
