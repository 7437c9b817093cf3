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
#include "silt/expr/kernel/bind_session.h"
#include "silt/expr/kernel/bound.h"
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
  // With `capture_scalars`, Get returns json::CapturedType() columns, or
  // with a `cast` json::CapturedCastType(cast) columns (see
  // JsonMultiPathEvaluator::AddPath).
  // Each AddPath is one use of the path.
  Result<int> AddPath(std::string_view path, bool capture_scalars = false,
                      json::CaptureCast cast = json::CaptureCast::kNone, bool ansi = false) {
    SILT_ASSIGN_OR_RETURN(int index, evaluator_->AddPath(path, capture_scalars, cast, ansi));
    if (static_cast<size_t>(index) >= uses_.size()) uses_.resize(static_cast<size_t>(index) + 1);
    if (uses_[static_cast<size_t>(index)]++ == 0) evaluator_->SetActive(index, true);
    return index;
  }
  // Drops one use of path `path_index`; a path without uses is no longer
  // evaluated (Get returns NULLs for it).
  void ReleasePath(int path_index) {
    if (--uses_[static_cast<size_t>(path_index)] == 0) evaluator_->SetActive(path_index, false);
  }

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
  // AddPath calls minus ReleasePath calls, by path index.
  std::vector<int> uses_;
};

// A get_json_object call bound with a session, for a CAST over it to fuse
// with: once `fused`, the call's kernel only hands its input to the cast
// (through `input`), which reads the numbers of its path directly.
struct JsonCallLink {
  std::shared_ptr<JsonPathGroup> group;
  std::string path;
  int path_index = -1;  // of `path` (uncaptured) in `group`
  bool fused = false;
  columnar::ColumnPtr input;  // set by the call's kernel, taken by the cast
};

struct BindSession::State {
  std::unordered_map<std::string, std::shared_ptr<JsonPathGroup>> json_path_groups;
  std::shared_ptr<RowScope> row_scope = std::make_shared<RowScope>();
  // The get_json_object calls bound with the session, by node.
  std::unordered_map<const BoundNode*, std::shared_ptr<JsonCallLink>> json_calls;
  // CAST(get_json_object(x, 'path') AS numeric/boolean) reads JSON numbers
  // without printing and re-parsing them; false binds the plain cast over
  // the string (the reference the fused path is tested against).
  bool fuse_json_casts = true;
};

// The kernel of CAST(child AS to) when `child` is a get_json_object call
// bound with `session` over a literal path and `to` is a type the fused
// path handles (BOOLEAN, TINYINT..BIGINT, FLOAT, DOUBLE); null otherwise.
// The kernel keeps `child` as its argument (see JsonCallLink) and gives the
// same values and errors as CastColumn over get_json_object's strings with
// `ansi`, or, with `try_cast`, as TryCastColumn (Spark's TRY mode: ANSI
// rules, NULL where they fail; `ansi` is then ignored).
std::unique_ptr<Kernel> MakeJsonCastKernel(const BoundNode& child, const columnar::TypePtr& to,
                                           bool ansi, bool try_cast, std::string context,
                                           BindSession* session);

}  // namespace silt::expr
