// SigV4 against AWS's published examples, the XML subset S3 uses, URI
// encoding and the backoff policy.

#include "silt/fs/s3_internal.h"

#include <gtest/gtest.h>

#include "silt/testing/gtest_util.h"

namespace silt::fs::s3 {
namespace {

constexpr char kEmptySha256[] = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

TEST(S3HashTest, Sha256OfEmptyInputIsTheWellKnownDigest) { EXPECT_EQ(Sha256Hex(""), kEmptySha256); }

TEST(S3HashTest, Md5Base64MatchesRfc1864Example) {
  // MD5("") = d41d8cd98f00b204e9800998ecf8427e, base64 1B2M2Y8AsgTpgAmY7PhCfg==.
  EXPECT_EQ(Md5Base64(""), "1B2M2Y8AsgTpgAmY7PhCfg==");
}

// AWS Signature Version 4 test suite, "get-vanilla" and
// "get-vanilla-query-order-key-case" (credentials AKIDEXAMPLE, service
// "service", 20150830T123600Z).
TEST(SigV4Test, GetVanillaMatchesAwsTestSuite) {
  SigningRequest request;
  request.method = "GET";
  request.canonical_uri = "/";
  request.headers = {{"Host", "example.amazonaws.com"}, {"X-Amz-Date", "20150830T123600Z"}};
  request.payload_hash = kEmptySha256;
  EXPECT_EQ(CanonicalRequest(request),
            "GET\n/\n\nhost:example.amazonaws.com\nx-amz-date:20150830T123600Z\n\n"
            "host;x-amz-date\n" +
                std::string(kEmptySha256));
  SigningKeyParts key{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "us-east-1",
                      "service"};
  EXPECT_EQ(AuthorizationHeader(request, key, "20150830T123600Z"),
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
            "SignedHeaders=host;x-amz-date, "
            "Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31");
}

TEST(SigV4Test, QueryParametersAreSortedBeforeSigning) {
  SigningRequest request;
  request.method = "GET";
  request.canonical_uri = "/";
  request.query = {{"Param2", "value2"}, {"Param1", "value1"}};
  request.headers = {{"Host", "example.amazonaws.com"}, {"X-Amz-Date", "20150830T123600Z"}};
  request.payload_hash = kEmptySha256;
  SigningKeyParts key{"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "us-east-1",
                      "service"};
  EXPECT_EQ(AuthorizationHeader(request, key, "20150830T123600Z"),
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, "
            "SignedHeaders=host;x-amz-date, "
            "Signature=b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500");
}

// The S3 developer guide's "GET Object" example: the first 10 bytes of
// examplebucket/test.txt, signed on 20130524.
TEST(SigV4Test, S3GetObjectExampleMatchesAwsDocumentation) {
  SigningRequest request;
  request.method = "GET";
  request.canonical_uri = "/test.txt";
  request.headers = {{"Host", "examplebucket.s3.amazonaws.com"},
                     {"Range", "bytes=0-9"},
                     {"x-amz-content-sha256", kEmptySha256},
                     {"x-amz-date", "20130524T000000Z"}};
  request.payload_hash = kEmptySha256;
  SigningKeyParts key{"AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
                      "us-east-1", "s3"};
  std::string scope = CredentialScope("20130524", key);
  EXPECT_EQ(scope, "20130524/us-east-1/s3/aws4_request");
  EXPECT_EQ(StringToSign("20130524T000000Z", scope, CanonicalRequest(request)),
            "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n"
            "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972");
  EXPECT_EQ(AuthorizationHeader(request, key, "20130524T000000Z"),
            "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/"
            "aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, "
            "Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

TEST(SigV4Test, HeaderValuesAreTrimmedAndInnerSpacesCollapsed) {
  SigningRequest request;
  request.method = "PUT";
  request.canonical_uri = "/b/k";
  request.headers = {{"X-Amz-Meta-A", "  one   two  "}, {"host", "h"}};
  request.payload_hash = "UNSIGNED-PAYLOAD";
  EXPECT_EQ(CanonicalRequest(request),
            "PUT\n/b/k\n\nhost:h\nx-amz-meta-a:one two\n\nhost;x-amz-meta-a\nUNSIGNED-PAYLOAD");
}

TEST(SigV4Test, AmzDateFormatsUtcSeconds) { EXPECT_EQ(AmzDate(1440938160), "20150830T123600Z"); }

TEST(UriEncodeTest, KeepsUnreservedAndEncodesTheRestUpperCase) {
  EXPECT_EQ(UriEncode("a-b_c.d~e", true), "a-b_c.d~e");
  EXPECT_EQ(UriEncode("dir/file name+x=1", false), "dir/file%20name%2Bx%3D1");
  EXPECT_EQ(UriEncode("dir/file", true), "dir%2Ffile");
  EXPECT_EQ(UriEncode("\xc3\xa9", true), "%C3%A9");
}

TEST(UriEncodeTest, CanonicalQueryEncodesAndSortsNamesAndValues) {
  EXPECT_EQ(CanonicalQueryString({{"prefix", "a/b c"}, {"list-type", "2"}, {"uploads", ""}}),
            "list-type=2&prefix=a%2Fb%20c&uploads=");
}

TEST(S3XmlTest, ParsesListObjectsV2WithPrefixesAndToken) {
  std::string xml =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">"
      "<Name>b</Name><Prefix>t/</Prefix><KeyCount>3</KeyCount><MaxKeys>2</MaxKeys>"
      "<Delimiter>/</Delimiter><IsTruncated>true</IsTruncated>"
      "<NextContinuationToken>tok&amp;1</NextContinuationToken>"
      "<Contents><Key>t/a&amp;b.json</Key><LastModified>2026-11-29T15:30:44.123Z</LastModified>"
      "<ETag>&quot;x&quot;</ETag><Size>42</Size><StorageClass>STANDARD</StorageClass></Contents>"
      "<Contents><Key>t/c</Key><LastModified>1970-01-01T00:00:01.000Z</LastModified>"
      "<Size>0</Size></Contents>"
      "<CommonPrefixes><Prefix>t/_delta_log/</Prefix></CommonPrefixes>"
      "</ListBucketResult>";
  ASSERT_OK_AND_ASSIGN(ListPage page, ParseListObjectsV2(xml));
  ASSERT_EQ(page.objects.size(), 2u);
  EXPECT_EQ(page.objects[0].key, "t/a&b.json");
  EXPECT_EQ(page.objects[0].size, 42);
  EXPECT_EQ(page.objects[0].modification_time_ms, 1795966244123);
  EXPECT_EQ(page.objects[1].modification_time_ms, 1000);
  ASSERT_EQ(page.common_prefixes.size(), 1u);
  EXPECT_EQ(page.common_prefixes[0], "t/_delta_log/");
  EXPECT_TRUE(page.truncated);
  EXPECT_EQ(page.next_continuation_token, "tok&1");
}

TEST(S3XmlTest, EmptyListingHasNoEntries) {
  ASSERT_OK_AND_ASSIGN(ListPage page,
                       ParseListObjectsV2("<ListBucketResult><Name>b</Name><KeyCount>0</KeyCount>"
                                          "<IsTruncated>false</IsTruncated></ListBucketResult>"));
  EXPECT_TRUE(page.objects.empty());
  EXPECT_FALSE(page.truncated);
}

TEST(S3XmlTest, RejectsAnswersThatAreNotListings) {
  ASSERT_RAISES(Corruption, ParseListObjectsV2("<html>proxy error</html>"));
  ASSERT_RAISES(Corruption, ParseListObjectsV2("<ListBucketResult><IsTruncated>true</IsTruncated>"
                                               "</ListBucketResult>"));
}

TEST(S3XmlTest, ParsesErrorCodeAndMessage) {
  S3ErrorBody error = ParseErrorBody(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>NoSuchBucket</Code>"
      "<Message>The specified bucket does not exist</Message><BucketName>x</BucketName></Error>");
  EXPECT_EQ(error.code, "NoSuchBucket");
  EXPECT_EQ(error.message, "The specified bucket does not exist");
  EXPECT_EQ(ParseErrorBody("").code, "");
}

TEST(S3XmlTest, DecodesEntitiesAndEscapesText) {
  EXPECT_EQ(XmlDecode("a&lt;b&gt;&amp;&#65;&#x42;&apos;&quot;&bogus;"), "a<b>&AB'\"&bogus;");
  EXPECT_EQ(XmlDecode("&#xE9;"), "\xc3\xa9");
  EXPECT_EQ(XmlEscape("<a&'\">"), "&lt;a&amp;&apos;&quot;&gt;");
}

TEST(S3XmlTest, Iso8601RejectsMalformedTimes) {
  EXPECT_FALSE(ParseIso8601Ms("2026-13-01T00:00:00Z").has_value());
  EXPECT_FALSE(ParseIso8601Ms("yesterday").has_value());
  EXPECT_EQ(ParseIso8601Ms("2000-03-01T00:00:00Z"), 951868800000);
}

TEST(S3XmlTest, HttpDatesParseToMilliseconds) {
  EXPECT_EQ(ParseHttpDateMs("Wed, 01 Mar 2000 00:00:00 GMT"), 951868800000);
  EXPECT_EQ(ParseHttpDateMs("Sun, 06 Nov 1994 08:49:37 GMT"), 784111777000);
  EXPECT_FALSE(ParseHttpDateMs("Sun, 06 Foo 1994 08:49:37 GMT").has_value());
  EXPECT_FALSE(ParseHttpDateMs("Sunday, 06-Nov-94 08:49:37 GMT").has_value());
}

TEST(RetryPolicyTest, RetriesServerErrorsAndThrottlingOnly) {
  EXPECT_TRUE(IsRetryableHttp(500, "InternalError"));
  EXPECT_TRUE(IsRetryableHttp(503, "SlowDown"));
  EXPECT_TRUE(IsRetryableHttp(429, ""));
  EXPECT_TRUE(IsRetryableHttp(499, ""));  // MinIO shutting down
  EXPECT_TRUE(IsRetryableHttp(400, "RequestTimeout"));
  EXPECT_FALSE(IsRetryableHttp(403, "SignatureDoesNotMatch"));
  EXPECT_FALSE(IsRetryableHttp(404, "NoSuchBucket"));
  EXPECT_FALSE(IsRetryableHttp(412, "PreconditionFailed"));
}

TEST(RetryPolicyTest, BackoffStaysWithinTheGrowingCap) {
  RetryPolicy policy{10, 50, 400};
  std::mt19937_64 rng(7);
  for (int round = 0; round < 200; ++round) {
    EXPECT_LE(BackoffDelayMs(policy, 1, rng), 50);
    EXPECT_LE(BackoffDelayMs(policy, 3, rng), 200);
    int64_t late = BackoffDelayMs(policy, 9, rng);
    EXPECT_GE(late, 1);
    EXPECT_LE(late, 400);
  }
}

TEST(RetryPolicyTest, BackoffIsJittered) {
  RetryPolicy policy{10, 50, 2000};
  std::mt19937_64 rng(11);
  int64_t first = BackoffDelayMs(policy, 6, rng);
  bool differs = false;
  for (int round = 0; round < 20 && !differs; ++round) {
    differs = BackoffDelayMs(policy, 6, rng) != first;
  }
  EXPECT_TRUE(differs);
}

}  // namespace
}  // namespace silt::fs::s3
