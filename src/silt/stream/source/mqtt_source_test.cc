#include "silt/stream/source/mqtt_source.h"

#include <gtest/gtest.h>

#include "silt/testing/gtest_util.h"

namespace silt::stream {
namespace {

Result<MqttSourceOptions> Parse(std::map<std::string, std::string> options) {
  SourceSpec spec;
  spec.format = "mqtt";
  spec.options = std::move(options);
  return MqttSourceOptions::FromSpec(spec);
}

std::string ErrorOf(std::map<std::string, std::string> options) {
  Result<MqttSourceOptions> parsed = Parse(std::move(options));
  return parsed.ok() ? "" : parsed.status().ToString();
}

TEST(MqttSourceOptionsTest, BahirNamesAndDefaults) {
  ASSERT_OK_AND_ASSIGN(MqttSourceOptions o,
                       Parse({{"brokerUrl", "tcp://127.0.0.1:1884"}, {"topic", "zigbee2mqtt/+"}}));
  EXPECT_EQ(o.host, "127.0.0.1");
  EXPECT_EQ(o.port, 1884);
  EXPECT_FALSE(o.tls);
  EXPECT_EQ(o.topics, std::vector<std::string>{"zigbee2mqtt/+"});
  EXPECT_EQ(o.qos, 1);
  EXPECT_FALSE(o.clean_session);
  EXPECT_EQ(o.mqtt_version, 4);

  ASSERT_OK_AND_ASSIGN(o, Parse({{"brokerUrl", "ssl://broker.local"},
                                 {"topics", "a/#, b/+/c ,d"},
                                 {"clientId", "pi"},
                                 {"qos", "0"},  // case-insensitive, as Spark's options
                                 {"username", "u"},
                                 {"password", "p"},
                                 {"cleanSession", "true"},
                                 {"keepAlive", "30"},
                                 {"mqttVersion", "5"},
                                 {"ssl.protocol", "TLSv1.3"},
                                 {"ssl.ca.file", "/etc/ca.pem"},
                                 {"ssl.cert.file", "/etc/c.pem"},
                                 {"ssl.key.file", "/etc/k.pem"},
                                 {"maxMessagesPerTrigger", "100"},
                                 {"maxWalBytes", "10485760"}}));
  EXPECT_TRUE(o.tls);
  EXPECT_EQ(o.port, 8883);
  EXPECT_EQ(o.topics, (std::vector<std::string>{"a/#", "b/+/c", "d"}));
  EXPECT_EQ(o.qos, 0);
  EXPECT_EQ(o.client_id, "pi");
  EXPECT_EQ(*o.username, "u");
  EXPECT_TRUE(o.clean_session);
  EXPECT_EQ(o.mqtt_version, 5);
  EXPECT_EQ(o.ssl_protocol, "tlsv1.3");
  EXPECT_EQ(*o.max_messages_per_trigger, 100);
  EXPECT_EQ(o.max_wal_bytes, 10485760);

  ASSERT_OK_AND_ASSIGN(o, Parse({{"path", "tcp://[::1]:1999"}, {"topic", "#"}}));
  EXPECT_EQ(o.host, "::1");
  EXPECT_EQ(o.port, 1999);
}

TEST(MqttSourceOptionsTest, ErrorsNameTheKey) {
  EXPECT_NE(ErrorOf({{"topic", "t"}}).find("source.options.brokerUrl: required"),
            std::string::npos);
  EXPECT_NE(ErrorOf({{"brokerUrl", "http://x:1"}, {"topic", "t"}}).find("source.options.brokerUrl"),
            std::string::npos);
  EXPECT_NE(ErrorOf({{"brokerUrl", "tcp://x:99999"}, {"topic", "t"}}).find("bad port"),
            std::string::npos);
  EXPECT_NE(ErrorOf({{"brokerUrl", "tcp://x"}}).find("source.options.topic: required"),
            std::string::npos);
  EXPECT_NE(ErrorOf({{"brokerUrl", "tcp://x"}, {"topic", "a/#/b"}}).find("'#'"), std::string::npos);
  EXPECT_NE(ErrorOf({{"brokerUrl", "tcp://x"}, {"topic", "a/b+"}}).find("'+'"), std::string::npos);
  EXPECT_NE(ErrorOf({{"brokerUrl", "tcp://x"}, {"topic", "t"}, {"QoS", "2"}}).find("QoS 2"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf({{"brokerUrl", "tcp://x"}, {"topic", "t"}, {"ssl.ca.file", "/c"}}).find("ssl://"),
      std::string::npos);
  EXPECT_NE(ErrorOf({{"brokerUrl", "ssl://x"}, {"topic", "t"}, {"ssl.trust.store", "/j"}})
                .find("not supported"),
            std::string::npos);
  EXPECT_NE(ErrorOf({{"brokerUrl", "tcp://x"}, {"topic", "t"}, {"clientID2", "x"}})
                .find("unknown option"),
            std::string::npos);
  EXPECT_NE(ErrorOf({{"brokerUrl", "tcp://x"}, {"topic", "t"}, {"mqttVersion", "6"}})
                .find("source.options.mqttVersion"),
            std::string::npos);
}

TEST(MqttSourceOptionsTest, OffsetsRoundTrip) {
  EXPECT_EQ(MqttOffsetToJson(42), "{\"walOffset\":42}");
  ASSERT_OK_AND_ASSIGN(int64_t v, MqttOffsetFromJson("{\"walOffset\":42}", "offsets/3"));
  EXPECT_EQ(v, 42);
  EXPECT_FALSE(MqttOffsetFromJson("{\"topic\":{\"0\":1}}", "offsets/3").ok());
  EXPECT_FALSE(MqttOffsetFromJson("{\"walOffset\":-1}", "offsets/3").ok());
}

}  // namespace
}  // namespace silt::stream
