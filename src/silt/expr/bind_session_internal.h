// What a BindSession shares between the expressions bound with it
// (internal to expr):
//  - one JsonPathGroup per distinct get_json_object input (keyed by the
//    input's bound SQL and type), so all paths over that input are evaluated
//    with one parse per document;
//  - a RowScope that a BoundFilter bound with the session fills while it
//    runs: the rows still worth evaluating (the later conjuncts of a WHERE
//    only matter where the earlier ones were true), and after filtering the
//    kept rows, so the select list that follows reuses the parses of those
//    rows instead of parsing them again.
//
// Thread safety: as BindSession — one evaluating thread. Ownership: kernels
// hold the groups (and the groups the scope) through shared_ptr; the session
// only indexes them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "silt/base/result.h"
#include "silt/columnar/column.h"
#include "silt/expr/expression.h"
#include "silt/json/json_multi_path.h"

namespace silt::expr {

// Row hints shared by the expressions of one session.
struct RowScope {
  // While a filter evaluates a conjunct: a bitmap of the rows of the batch
  // being evaluated whose result matters (the others are dropped whatever
  // the value); null when every row matters. Expensive kernels may leave
  // the other rows NULL.
  const uint8_t* active_rows = nullptr;
  int64_t active_length = 0;
  // After a filter: the batch it produced holds rows `kept_rows` of its
  // input batch of `kept_from_rows` rows (empty when nothing was filtered).
  std::vector<int64_t> kept_rows;
  int64_t kept_from_rows = -1;
};

// The get_json_object paths over one input value, evaluated together and
// cached for the last input seen.
class JsonPathGroup {
 public:
  explicit JsonPathGroup(std::shared_ptr<RowScope> scope = nullptr)
      : evaluator_(json::JsonMultiPathEvaluator::Make()), scope_(std::move(scope)) {}

  // Adds `path`; returns its index for Get. Errors: InvalidArgument for a
  // malformed path.
  Result<int> AddPath(std::string_view path) { return evaluator_->AddPath(path); }

  // The result of path `path_index` over `input`. The first call for an
  // input evaluates every path of the group (for the scope's active rows
  // only, when set); later calls for the same data (the same buffers and
  // validity, possibly through a different Column object) return the cached
  // columns. An input that is the scope's kept rows of the cached input
  // (checked value by value) takes the cached results of those rows.
  Result<columnar::ColumnPtr> Get(int path_index, const columnar::ColumnPtr& input);

 private:
  // True when `input` holds rows kept_rows of cached_input_, each of them
  // evaluated.
  bool IsKeptRowsOfCached(const columnar::Column& input) const;

  std::unique_ptr<json::JsonMultiPathEvaluator> evaluator_;
  std::shared_ptr<RowScope> scope_;
  // Held so that the buffers compared in Get stay alive and their addresses
  // cannot be reused by a later batch.
  columnar::ColumnPtr cached_input_;
  std::vector<columnar::ColumnPtr> cached_results_;
  // The rows of cached_input_ that were evaluated (a bitmap); empty when
  // all were.
  std::vector<uint8_t> cached_rows_;
};

struct BindSession::State {
  std::unordered_map<std::string, std::shared_ptr<JsonPathGroup>> json_path_groups;
  std::shared_ptr<RowScope> row_scope = std::make_shared<RowScope>();
};

}  // namespace silt::expr
