#include "silt/delta/table_root.h"

#include <vector>

#include "silt/delta/partition_utils.h"

namespace silt::delta {

namespace {

// "file:///a", "file://localhost/a", "file://a" (no authority in practice)
// and "file:/a" name /a.
std::string_view StripFileScheme(std::string_view p, std::string* storage) {
  if (p.substr(0, 17) == "file://localhost/") return p.substr(16);
  if (p.substr(0, 7) == "file://") {
    p.remove_prefix(7);
    if (p.empty() || p.front() != '/') {
      *storage = "/" + std::string(p);
      return *storage;
    }
    return p;
  }
  if (p.substr(0, 5) == "file:") p.remove_prefix(5);
  return p;
}

// Length of the part that ".." cannot climb above: "scheme://authority",
// "/" (kept as the separator before the first segment), or nothing.
size_t PrefixLength(std::string_view p) {
  size_t scheme_end = p.find("://");
  if (scheme_end != std::string_view::npos && scheme_end > 0 &&
      p.substr(0, scheme_end).find('/') == std::string_view::npos) {
    size_t authority_end = p.find('/', scheme_end + 3);
    return authority_end == std::string_view::npos ? p.size() : authority_end;
  }
  return 0;
}

}  // namespace

std::optional<std::string> NormalizeStoragePath(std::string_view path) {
  std::string storage;
  std::string_view p = StripFileScheme(path, &storage);
  const size_t prefix_length = PrefixLength(p);
  std::string out(p.substr(0, prefix_length));
  std::string_view rest = p.substr(prefix_length);
  const bool absolute = !rest.empty() && rest.front() == '/';
  std::vector<std::string_view> segments;
  size_t start = 0;
  while (start <= rest.size()) {
    size_t slash = rest.find('/', start);
    if (slash == std::string_view::npos) slash = rest.size();
    std::string_view segment = rest.substr(start, slash - start);
    if (segment == "..") {
      if (segments.empty()) return std::nullopt;
      segments.pop_back();
    } else if (!segment.empty() && segment != ".") {
      segments.push_back(segment);
    }
    start = slash + 1;
  }
  for (size_t segment_idx = 0; segment_idx < segments.size(); ++segment_idx) {
    if (segment_idx > 0 || absolute || prefix_length > 0) out += '/';
    out += segments[segment_idx];
  }
  if (out.empty() && absolute) out = "/";
  return out;
}

Result<std::string> CheckInsideTable(std::string_view table_root, std::string_view file) {
  std::optional<std::string> root = NormalizeStoragePath(table_root);
  std::optional<std::string> normalized = NormalizeStoragePath(file);
  if (root && normalized) {
    std::string_view f = *normalized;
    const bool below = root->empty() ? !f.empty() && f.front() != '/' && PrefixLength(f) == 0
                                     : f.size() > root->size() + 1 && f.starts_with(*root) &&
                                           (root->back() == '/' || f[root->size()] == '/');
    if (below) return *std::move(normalized);
  }
  return Status::InvalidArgument("path ", file, " is outside the table root ", table_root);
}

Result<std::string> ResolvePathInsideTable(std::string_view table_root, std::string_view log_path) {
  SILT_ASSIGN_OR_RETURN(std::string file, ResolveDataFilePath(table_root, log_path));
  Result<std::string> inside = CheckInsideTable(table_root, file);
  if (!inside.ok()) {
    return Status::InvalidArgument("the log's path ", log_path, " resolves to ", file,
                                   ", outside the table root ", table_root);
  }
  return inside;
}

}  // namespace silt::delta
