#include "silt/base/status.h"

#include <gtest/gtest.h>

#include "silt/base/result.h"
#include "silt/base/uuid.h"
#include "silt/testing/gtest_util.h"

namespace silt {
namespace {

Result<int> ParsePositive(int v) {
  if (v <= 0) return Status::InvalidArgument("value ", v, " is not positive");
  return v;
}

Result<int> Doubled(int v) {
  SILT_ASSIGN_OR_RETURN_CTX(int x, ParsePositive(v), "doubling ", v);
  return x * 2;
}

Status Chain(int v) {
  SILT_RETURN_NOT_OK_CTX(ParsePositive(v).status(), "step ", 1);
  return Status::OK();
}

TEST(StatusTest, OkCarriesNoMessage) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.ToString(), "OK");
  EXPECT_FALSE(s.retryable());
}

TEST(StatusTest, ErrorsNameTheirObjectAndCode) {
  Status s = Status::NotFound("Cannot open '", std::string("/x"), "'");
  EXPECT_TRUE(s.IsNotFound());
  EXPECT_EQ(s.ToString(), "Not found: Cannot open '/x'");
}

TEST(StatusTest, ContextIsPrependedAndKeepsCodeAndRetryable) {
  Status s = Status::IOError("timeout").WithRetryable(true).WithContext("committing version 3");
  EXPECT_TRUE(s.IsIOError());
  EXPECT_TRUE(s.retryable());
  EXPECT_EQ(s.message(), "committing version 3: timeout");
}

TEST(StatusTest, CopiesAreIndependent) {
  Status a = Status::Corruption("bad");
  Status b = a;
  a = Status::OK();
  EXPECT_TRUE(b.IsCorruption());
  EXPECT_EQ(b.message(), "bad");
}

TEST(ResultTest, MacrosPropagateValuesAndErrorsWithContext) {
  ASSERT_OK_AND_ASSIGN(int v, Doubled(4));
  EXPECT_EQ(v, 8);
  Result<int> bad = Doubled(-1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "doubling -1: value -1 is not positive");
  ASSERT_RAISES(InvalidArgument, Chain(0));
  EXPECT_EQ(Chain(0).message(), "step 1: value 0 is not positive");
}

TEST(ResultDeathTest, ValueOfAnErrorAbortsWithTheStatus) {
  // Release builds too: the tests are built without assertions.
  Result<int> bad = ParsePositive(-3);
  EXPECT_DEATH((void)bad.ValueOrDie(),
               "ValueOrDie on an error: Invalid argument: value -3 is not positive");
  EXPECT_DEATH((void)*bad, "value -3 is not positive");
  EXPECT_DEATH((void)std::move(bad).ValueOrDie(), "value -3 is not positive");
  Result<std::string> missing = Status::NotFound("no table at /t");
  EXPECT_DEATH((void)missing->size(), "Not found: no table at /t");
}

TEST(ResultTest, OkStatusWithoutValueIsInternalError) {
  Result<int> r{Status::OK()};
  EXPECT_EQ(r.status().code(), StatusCode::kInternal);
}

TEST(UuidTest, NewUuidsAreCanonicalVersion4AndDistinct) {
  std::string a = NewUuid();
  std::string b = NewUuid();
  EXPECT_TRUE(IsUuid(a));
  EXPECT_NE(a, b);
  EXPECT_EQ(a[14], '4');
  EXPECT_TRUE(a[19] == '8' || a[19] == '9' || a[19] == 'a' || a[19] == 'b');
}

}  // namespace
}  // namespace silt
