#include "silt/stream/sink/multi_sink.h"

namespace silt::stream {

MultiSink::~MultiSink() = default;

Result<std::unique_ptr<MultiSink>> MultiSink::Make(const std::vector<SinkSpec>& specs,
                                                   const SinkContext& context,
                                                   const ChildFactory& make_child) {
  auto sink = std::unique_ptr<MultiSink>(new MultiSink());
  for (const SinkSpec& spec : specs) {
    Child child;
    child.name = spec.name;
    SinkContext child_context = context;
    std::vector<TransformStep> steps;
    if (!spec.where.empty()) {
      TransformStep where;
      where.kind = "where";
      where.exprs = {spec.where};
      where.key_path = spec.key_path + ".where";
      steps.push_back(std::move(where));
    }
    if (!spec.select.empty()) {
      TransformStep select;
      select.kind = "select";
      select.exprs = spec.select;
      select.key_path = spec.key_path + ".select";
      steps.push_back(std::move(select));
    }
    if (!steps.empty()) {
      SILT_ASSIGN_OR_RETURN(child.route, Transform::Make(steps, context.schema, context.eval));
      child_context.schema = child.route->output_schema();
    }
    Result<std::unique_ptr<Sink>> made = make_child(spec, child_context);
    if (!made.ok()) return made.status().WithContextParts(spec.key_path, " (", spec.name, ")");
    child.sink = std::move(*made);
    if (!sink->target_.empty()) sink->target_ += ", ";
    sink->target_ += child.sink->target();
    sink->children_.push_back(std::move(child));
  }
  return sink;
}

std::string MultiSink::Description() const {
  std::string out = "MultiSink[";
  for (size_t i = 0; i < children_.size(); ++i) {
    if (i > 0) out += ", ";
    out += children_[i].name + "=" + children_[i].sink->Description();
  }
  return out + "]";
}

Result<bool> MultiSink::Begin(int64_t batch_id) {
  bool any = false;
  for (Child& child : children_) {
    child.rows = 0;
    Result<bool> active = child.sink->Begin(batch_id);
    if (!active.ok()) return active.status().WithContextParts(child.name);
    child.active = *active;
    any = any || child.active;
  }
  return any;
}

Status MultiSink::Write(const columnar::RecordBatch& batch) {
  for (Child& child : children_) {
    if (!child.active) continue;
    if (child.route == nullptr) {
      child.rows += batch.num_rows;
      SILT_RETURN_NOT_OK_CTX(child.sink->Write(batch), child.name);
      continue;
    }
    expr::EvalContext ctx;
    SILT_ASSIGN_OR_RETURN_CTX(
        columnar::RecordBatchPtr routed,
        child.route->Process(std::make_shared<columnar::RecordBatch>(batch), ctx), child.name);
    if (routed == nullptr || routed->num_rows == 0) continue;
    child.rows += routed->num_rows;
    SILT_RETURN_NOT_OK_CTX(child.sink->Write(*routed), child.name);
  }
  return Status::OK();
}

Result<SinkBatchResult> MultiSink::Commit() {
  SinkBatchResult total;
  total.skipped_duplicate = true;
  results_.clear();
  for (Child& child : children_) {
    // A skipping child's Commit reports the skip (the Sink contract).
    Result<SinkBatchResult> committed = child.sink->Commit();
    if (!committed.ok()) return committed.status().WithContextParts(child.name);
    child.active = false;
    total.skipped_duplicate = total.skipped_duplicate && committed->skipped_duplicate;
    if (committed->table_version >= 0) total.table_version = committed->table_version;
    total.rows_written += committed->rows_written;
    total.files_written += committed->files_written;
    results_.push_back({child.name, child.sink->Description(), *committed,
                        committed->skipped_duplicate ? 0 : child.rows});
  }
  return total;
}

std::vector<SinkProgress::Child> MultiSink::ChildProgress() const {
  std::vector<SinkProgress::Child> out;
  for (const ChildSinkResult& r : results_) out.push_back({r.name, r.description, r.rows});
  return out;
}

void MultiSink::Abort() {
  for (Child& child : children_) {
    child.sink->Abort();
    child.active = false;
  }
}

Status MultiSink::CheckHoldsCommitted(int64_t last_committed) {
  for (Child& child : children_) {
    SILT_RETURN_NOT_OK_CTX(child.sink->CheckHoldsCommitted(last_committed), child.name);
  }
  return Status::OK();
}

}  // namespace silt::stream
