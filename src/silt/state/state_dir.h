// The files of one state store directory and which of them rebuild a version.
// Used by the store (Load, Commit, Purge) and by the read-only functions.
//
// Thread safety: values; StateDir::List reads the file system only.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "silt/base/result.h"
#include "silt/fs/file_system.h"
#include "silt/state/state_file.h"

namespace silt::state {

// How to rebuild a version: start from `base` (0: the empty state; a
// snapshot's version when from_snapshot; otherwise a version the caller
// holds), then apply `changelogs` in order.
struct LoadPlan {
  int64_t base = 0;
  bool from_snapshot = false;
  std::vector<int64_t> changelogs;
};

struct StateDir {
  std::string dir;
  std::set<int64_t> changelogs;
  std::set<int64_t> snapshots;

  // Lists `dir` (a missing dir is empty). Names that are not state files are
  // ignored.
  static Result<StateDir> List(fs::FileSystem* fs, const std::string& dir);

  std::string Path(int64_t version, StateFileKind kind) const;
  // The versions >= 1 the files rebuild, ascending.
  std::vector<int64_t> LoadableVersions() const;
  // The plan for `version`. `held` is a version the caller holds (-1: none):
  // it is used as the base when no snapshot is newer. Errors: NotFound when
  // version > 0 has no file; Corruption naming the first missing changelog.
  // REQUIRES: version >= 0.
  Result<LoadPlan> Plan(int64_t version, int64_t held) const;
  // The files Purge(min_version) deletes.
  std::vector<std::string> Purgeable(int64_t min_version) const;
};

}  // namespace silt::state
