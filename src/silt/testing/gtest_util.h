// GoogleTest helpers for Status/Result: ASSERT_OK, EXPECT_OK,
// ASSERT_OK_AND_ASSIGN, ASSERT_RAISES. Linked by tests only.
#pragma once

#include <gtest/gtest.h>

#include "silt/base/result.h"

#define ASSERT_OK(expr)                                              \
  do {                                                               \
    ::silt::Status _st = ::silt::testing::ToStatus((expr));          \
    ASSERT_TRUE(_st.ok()) << #expr << " failed: " << _st.ToString(); \
  } while (false)

#define EXPECT_OK(expr)                                              \
  do {                                                               \
    ::silt::Status _st = ::silt::testing::ToStatus((expr));          \
    EXPECT_TRUE(_st.ok()) << #expr << " failed: " << _st.ToString(); \
  } while (false)

#define ASSERT_OK_AND_ASSIGN(lhs, rexpr) \
  ASSERT_OK_AND_ASSIGN_IMPL(SILT_CONCAT(_silt_test_result_, __LINE__), lhs, rexpr)
#define ASSERT_OK_AND_ASSIGN_IMPL(tmp, lhs, rexpr)                           \
  auto tmp = (rexpr);                                                        \
  ASSERT_TRUE(tmp.ok()) << #rexpr << " failed: " << tmp.status().ToString(); \
  lhs = std::move(tmp).MoveValueUnsafe();

// Asserts that `expr` failed with StatusCode::k<code>.
#define ASSERT_RAISES(status_code, expr)                      \
  do {                                                        \
    ::silt::Status _st = ::silt::testing::ToStatus((expr));   \
    ASSERT_EQ(_st.code(), ::silt::StatusCode::k##status_code) \
        << #expr << " returned " << _st.ToString();           \
  } while (false)

// As ASSERT_RAISES, without ending the test.
#define EXPECT_RAISES(status_code, expr) \
  EXPECT_EQ(::silt::testing::ToStatus((expr)).code(), ::silt::StatusCode::k##status_code) << #expr

namespace silt::testing {
inline Status ToStatus(const Status& s) { return s; }
template <typename T>
Status ToStatus(const Result<T>& r) {
  return r.status();
}
}  // namespace silt::testing
