// Path-splitting helpers shared by the fs implementations. Private to the fs
// module: other modules use the public helpers in file_system.h.
//
// A path's "root" is the part that is never split or stripped: "scheme://"
// for a URI ("memory://", "s3://") or the leading '/' of an absolute local
// path. Relative local paths have an empty root.
#pragma once

#include <cstddef>
#include <string_view>

namespace silt::fs::internal {

// Length of the root of `path`: the "scheme://" prefix, 1 for a leading '/',
// otherwise 0.
size_t RootLength(std::string_view path);

// The scheme of a URI ("s3" for "s3://bucket/key"), or empty when `path` has
// none.
std::string_view Scheme(std::string_view path);

// `path` without trailing '/' characters, never shortened into its root.
std::string_view StripTrailingSlashes(std::string_view path);

// A local path without a "file://" (or "file:") prefix; other inputs are
// returned unchanged.
std::string_view StripFileScheme(std::string_view path);

}  // namespace silt::fs::internal
