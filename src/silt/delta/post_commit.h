// What a writer does after a commit landed, internal to delta/commit.cc: the
// checkpoint every delta.checkpointInterval versions (inline, or on the
// handle's checkpoint worker: decisions 152, 161, 162) and the expired log
// cleanup after it. Both are maintenance: a failure is logged and never
// fails the commit, which is already durable.
//
// Thread safety: called by the committing thread; the background task they
// submit runs on the handle's checkpoint worker, one at a time.
#pragma once

#include <cstdint>

#include "silt/delta/actions.h"
#include "silt/delta/table.h"

namespace silt::delta::post_commit_internal {

// After committing `version` on the commit path: the due checkpoint (after
// any background checkpoint of the handle, which writes the same handle
// state: sidecar plan, cleanup cutoff), then log cleanup. `snapshot_hint`
// (may be null) is the state at `version` when the committer knows it, else
// the state the commit was made on: either spares re-reading the previous
// checkpoint. Returns false when a checkpoint was due and not written.
bool PostCommitInline(DeltaTable* table, const SnapshotPtr& snapshot_hint, const Metadata& metadata,
                      int64_t version);

// After CommitAndAdvance moved the writer's state to `committed` (at
// `version`): the due checkpoint in the handle's background thread when the
// handle asks for it (DeltaTable::set_background_checkpoints) and the state
// does not drop the checkpoint's files afterwards; else PostCommitInline.
// The worker shares `committed`, so the writer's next ApplyCommit copies the
// state once instead of moving it (StartFromSnapshot); nothing else is
// copied. `commit_bytes` is the size of the commit file just written: with
// background checkpoints a due checkpoint is skipped while the commits since
// the last one hold too few bytes (CheckpointWorker's byte pacing, decision
// 189). Returns as PostCommitInline (true when no checkpoint is missing that
// the writer's state needs).
bool PostCommitAdvanced(DeltaTable* table, const SnapshotPtr& committed, const Metadata& metadata,
                        int64_t version, int64_t commit_bytes);

}  // namespace silt::delta::post_commit_internal
