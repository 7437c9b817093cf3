#include "silt/state/state_dir.h"

#include <algorithm>
#include <iterator>

namespace silt::state {

Result<StateDir> StateDir::List(fs::FileSystem* fs, const std::string& dir) {
  StateDir out;
  out.dir = dir;
  SILT_ASSIGN_OR_RETURN_CTX(auto entries, fs->ListDir(dir), "listing state dir ", dir);
  for (const fs::FileInfo& entry : entries) {
    if (entry.is_dir) continue;
    auto parsed = ParseStateFileName(fs::BaseName(entry.path));
    if (!parsed) continue;
    (parsed->kind == StateFileKind::kSnapshot ? out.snapshots : out.changelogs)
        .insert(parsed->version);
  }
  return out;
}

std::string StateDir::Path(int64_t version, StateFileKind kind) const {
  return fs::JoinPath(dir, StateFileName(version, kind));
}

std::vector<int64_t> StateDir::LoadableVersions() const {
  std::vector<int64_t> out;
  int64_t last = 0;
  if (!changelogs.empty()) last = *changelogs.rbegin();
  if (!snapshots.empty()) last = std::max(last, *snapshots.rbegin());
  bool reachable = true;  // version 0, the empty state
  for (int64_t v = 1; v <= last; ++v) {
    reachable = snapshots.count(v) > 0 || (reachable && changelogs.count(v) > 0);
    if (reachable) out.push_back(v);
  }
  return out;
}

Result<LoadPlan> StateDir::Plan(int64_t version, int64_t held) const {
  LoadPlan plan;
  if (version == 0) return plan;
  if (version != held && changelogs.count(version) == 0 && snapshots.count(version) == 0) {
    return Status::NotFound("no state file of version ", version, " in ", dir);
  }
  auto it = snapshots.upper_bound(version);
  if (it != snapshots.begin()) {
    plan.base = *std::prev(it);
    plan.from_snapshot = true;
  }
  // What the caller holds is never worse than a snapshot as old or older.
  if (held >= plan.base && held <= version) {
    plan.base = held;
    plan.from_snapshot = false;
  }
  for (int64_t v = plan.base + 1; v <= version; ++v) {
    if (changelogs.count(v) == 0) {
      return Status::Corruption("state file ", Path(v, StateFileKind::kChangelog),
                                " is missing (needed to rebuild version ", version, ")");
    }
    plan.changelogs.push_back(v);
  }
  return plan;
}

std::vector<std::string> StateDir::Purgeable(int64_t min_version) const {
  std::vector<std::string> out;
  auto it = snapshots.upper_bound(min_version);
  if (it == snapshots.begin()) return out;
  const int64_t keep = *std::prev(it);
  for (int64_t v : snapshots) {
    if (v >= keep) break;
    out.push_back(Path(v, StateFileKind::kSnapshot));
  }
  for (int64_t v : changelogs) {
    if (v > keep) break;
    out.push_back(Path(v, StateFileKind::kChangelog));
  }
  return out;
}

}  // namespace silt::state
