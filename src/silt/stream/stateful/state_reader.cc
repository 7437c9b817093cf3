#include "silt/stream/stateful/state_reader.h"

#include <algorithm>
#include <charconv>

#include "silt/state/state_store.h"

namespace silt::stream {

namespace {

std::optional<int> OperatorId(const std::string& name) {
  int id = 0;
  auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), id);
  if (ec != std::errc() || end != name.data() + name.size() || id < 0) return std::nullopt;
  return id;
}

std::string BaseName(const std::string& path) {
  std::string trimmed = path;
  while (!trimmed.empty() && trimmed.back() == '/') trimmed.pop_back();
  size_t slash = trimmed.rfind('/');
  return slash == std::string::npos ? trimmed : trimmed.substr(slash + 1);
}

}  // namespace

Result<std::vector<StateOperatorInfo>> ListStateOperators(const fs::FileSystemPtr& fs,
                                                          const std::string& checkpoint) {
  std::vector<StateOperatorInfo> out;
  const std::string state_dir = fs::JoinPath(checkpoint, "state");
  Result<std::vector<fs::FileInfo>> entries = fs->ListDir(state_dir);
  if (!entries.ok()) {
    if (entries.status().IsNotFound()) return out;
    return entries.status();
  }
  for (const fs::FileInfo& entry : *entries) {
    std::optional<int> id = OperatorId(BaseName(entry.path));
    if (!id) continue;
    StateOperatorInfo info;
    info.operator_id = *id;
    info.dir = fs::JoinPath(state_dir, std::to_string(*id));
    Result<StatefulStep> step = ReadStatefulStep(fs, info.dir);
    if (!step.ok()) {
      if (step.status().IsNotFound()) continue;
      return step.status();
    }
    info.step = std::move(*step);
    // The operator's name as the query reports it.
    Result<std::unique_ptr<StatefulOperator>> op = MakeStatefulOperator(info.step, {}, nullptr);
    if (!op.ok()) return op.status().WithContextParts(StatefulStepFile(info.dir));
    info.operator_name = (*op)->progress().operator_name;
    Result<std::vector<int64_t>> versions =
        state::ListStateVersions(fs, fs::JoinPath(info.dir, "0"));
    if (versions.ok()) {
      info.versions = std::move(*versions);
    } else if (!versions.status().IsNotFound()) {
      return versions.status();
    }
    out.push_back(std::move(info));
  }
  std::sort(out.begin(), out.end(), [](const StateOperatorInfo& a, const StateOperatorInfo& b) {
    return a.operator_id < b.operator_id;
  });
  return out;
}

Result<StateRows> ReadStateRows(const fs::FileSystemPtr& fs, const StateOperatorInfo& op,
                                int64_t version) {
  SILT_ASSIGN_OR_RETURN(std::unique_ptr<StatefulOperator> decoder,
                        MakeStatefulOperator(op.step, {}, nullptr));
  std::vector<std::string> keys;
  std::vector<std::string> values;
  StateRows out;
  if (version > 0) {
    SILT_RETURN_NOT_OK(state::ReadStateVersion(
        fs, fs::JoinPath(op.dir, "0"), version, [&](std::string_view key, std::string_view value) {
          keys.emplace_back(key);
          values.emplace_back(value);
          out.bytes += static_cast<int64_t>(key.size() + value.size());
          return Status::OK();
        }));
  }
  std::vector<std::string_view> key_views(keys.begin(), keys.end());
  std::vector<std::string_view> value_views(values.begin(), values.end());
  Result<columnar::RecordBatchPtr> rows = decoder->DecodeState(key_views, value_views);
  if (!rows.ok()) {
    return rows.status().WithContextParts(op.dir, ": state version ", version);
  }
  out.rows = std::move(*rows);
  return out;
}

}  // namespace silt::stream
