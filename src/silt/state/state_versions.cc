// The read-only side of the state store: which versions the files rebuild,
// and the rows of one version by merging its files without RocksDB.
#include <memory>
#include <vector>

#include "silt/state/state_dir.h"
#include "silt/state/state_file.h"
#include "silt/state/state_store.h"

namespace silt::state {

namespace {

Result<std::unique_ptr<StateFileReader>> OpenNeeded(fs::FileSystem* fs, const StateDir& listing,
                                                    int64_t version, StateFileKind kind,
                                                    int64_t wanted) {
  const std::string path = listing.Path(version, kind);
  auto reader = StateFileReader::Open(fs, path, kind, version);
  if (reader.status().IsNotFound()) {
    return Status::Corruption("state file ", path, " is missing (needed to rebuild version ",
                              wanted, ")");
  }
  return reader;
}

}  // namespace

Result<std::vector<int64_t>> ListStateVersions(const fs::FileSystemPtr& fs,
                                               const std::string& dir) {
  SILT_ASSIGN_OR_RETURN(StateDir listing, StateDir::List(fs.get(), dir));
  return listing.LoadableVersions();
}

Status ReadStateVersion(
    const fs::FileSystemPtr& fs, const std::string& dir, int64_t version,
    const std::function<Status(std::string_view key, std::string_view value)>& fn) {
  if (version < 0) return Status::InvalidArgument("state version ", version, " < 0");
  SILT_ASSIGN_OR_RETURN(StateDir listing, StateDir::List(fs.get(), dir));
  SILT_ASSIGN_OR_RETURN(LoadPlan plan, listing.Plan(version, /*held=*/-1));
  // Oldest first: among readers at the same key the last one wins.
  std::vector<std::unique_ptr<StateFileReader>> readers;
  if (plan.from_snapshot) {
    SILT_ASSIGN_OR_RETURN(
        auto reader, OpenNeeded(fs.get(), listing, plan.base, StateFileKind::kSnapshot, version));
    readers.push_back(std::move(reader));
  }
  for (int64_t v : plan.changelogs) {
    SILT_ASSIGN_OR_RETURN(auto reader,
                          OpenNeeded(fs.get(), listing, v, StateFileKind::kChangelog, version));
    readers.push_back(std::move(reader));
  }
  if (readers.empty()) return Status::OK();  // version 0

  std::vector<bool> active(readers.size());
  for (size_t i = 0; i < readers.size(); ++i) {
    SILT_ASSIGN_OR_RETURN(bool more, readers[i]->Next());
    active[i] = more;
  }
  int64_t rows = 0;
  // A linear pass per key: there are snapshot_interval files or so.
  while (true) {
    int64_t winner = -1;
    for (size_t i = 0; i < readers.size(); ++i) {
      if (!active[i]) continue;
      if (winner < 0 || readers[i]->key() <= readers[static_cast<size_t>(winner)]->key()) {
        winner = static_cast<int64_t>(i);
      }
    }
    if (winner < 0) break;
    StateFileReader& top = *readers[static_cast<size_t>(winner)];
    if (top.op() == RecordOp::kPut) {
      SILT_RETURN_NOT_OK(fn(top.key(), top.value()));
      ++rows;
    }
    // Advance every reader at this key; the winner last, as its key is the
    // one compared against.
    for (size_t i = 0; i < readers.size(); ++i) {
      if (!active[i] || static_cast<int64_t>(i) == winner) continue;
      if (readers[i]->key() == top.key()) {
        SILT_ASSIGN_OR_RETURN(bool more, readers[i]->Next());
        active[i] = more;
      }
    }
    SILT_ASSIGN_OR_RETURN(bool more, top.Next());
    active[static_cast<size_t>(winner)] = more;
  }
  const StateFileReader& last = *readers.back();
  if (last.stats().num_rows != rows) {
    return Status::Corruption("state version ", version, " of ", dir, ": the files give ", rows,
                              " rows, ", last.path(), " says ", last.stats().num_rows);
  }
  return Status::OK();
}

}  // namespace silt::state
