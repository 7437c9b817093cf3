#include "silt/stream/job.h"

#include <yaml-cpp/yaml.h>

#include <string>

#include "silt/fs/file_system.h"
#include "silt/stream/job/parser_internal.h"

namespace silt::stream {

using job_internal::CheckNoDuplicateKeys;
using job_internal::JobParser;

Result<JobSpec> ParseJobYaml(std::string_view yaml_text, std::string_view source_name) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& e) {
    std::string where(source_name);
    if (!e.mark.is_null()) {
      where += ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1);
    }
    return Status::InvalidArgument(where, ": invalid YAML: ", e.msg);
  }
  // yaml-cpp reports type errors on node access by exception as well; the
  // parser checks node kinds first, so this only guards against surprises.
  try {
    SILT_RETURN_NOT_OK(CheckNoDuplicateKeys(root, "", source_name));
    return JobParser(source_name).Parse(root);
  } catch (const YAML::Exception& e) {
    std::string where(source_name);
    if (!e.mark.is_null()) where += ":" + std::to_string(e.mark.line + 1);
    return Status::InvalidArgument(where, ": ", e.msg);
  }
}

Result<JobSpec> LoadJobFile(const std::string& path) {
  SILT_ASSIGN_OR_RETURN(fs::FileSystemPtr fs, fs::FileSystemForPath(path));
  Result<std::string> text = fs->ReadFile(fs::NormalizePath(path));
  if (!text.ok()) return text.status().WithContextParts("cannot read job file '", path, "'");
  return ParseJobYaml(*text, path);
}

}  // namespace silt::stream
