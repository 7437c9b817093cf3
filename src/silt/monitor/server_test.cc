#include "silt/monitor/server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace silt::monitor {
namespace {

// A status the test changes while the server serves it, as the query does.
struct SharedStatus {
  std::mutex mutex;
  QueryStatus status;
  QueryStatus Get() {
    std::lock_guard<std::mutex> lock(mutex);
    return status;
  }
  void SetHealthy(bool healthy) {
    std::lock_guard<std::mutex> lock(mutex);
    status.health = {healthy, healthy ? "fine" : "stuck"};
  }
};

class MonitorServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    shared_.status.id = "q1";
    shared_.SetHealthy(true);
    ServerOptions options;
    options.metrics = [] { return std::string("# TYPE x counter\nx 1\n"); };
    options.status = [this] { return shared_.Get(); };
    Result<std::unique_ptr<MonitorServer>> server = MonitorServer::Start(options);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(*server);
    ASSERT_GT(server_->port(), 0);
  }

  httplib::Client Client() { return httplib::Client("127.0.0.1", server_->port()); }

  SharedStatus shared_;
  std::unique_ptr<MonitorServer> server_;
};

TEST_F(MonitorServerTest, ServesMetricsStatusAndPage) {
  httplib::Client client = Client();
  httplib::Result metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  EXPECT_EQ(metrics->body, "# TYPE x counter\nx 1\n");
  EXPECT_EQ(metrics->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  httplib::Result status = client.Get("/status");
  ASSERT_TRUE(status);
  EXPECT_EQ(status->body.rfind("{\"id\":\"q1\",", 0), 0u);
  httplib::Result page = client.Get("/");
  ASSERT_TRUE(page);
  EXPECT_NE(page->body.find("<!DOCTYPE html>"), std::string::npos);
  httplib::Result missing = client.Get("/nope");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  httplib::Result post = client.Post("/metrics", "x", "text/plain");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 405);
}

TEST_F(MonitorServerTest, HealthzFollowsTheStatus) {
  httplib::Client client = Client();
  httplib::Result ok = client.Get("/healthz");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(ok->body, "ok: fine\n");
  shared_.SetHealthy(false);
  httplib::Result bad = client.Get("/healthz");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 503);
  EXPECT_EQ(bad->body, "unhealthy: stuck\n");
}

TEST_F(MonitorServerTest, ConcurrentScrapesWhileTheStatusChanges) {
  std::atomic<bool> done{false};
  std::thread writer([&] {
    bool healthy = true;
    while (!done.load()) shared_.SetHealthy(healthy = !healthy);
  });
  std::vector<std::thread> readers;
  std::atomic<int> answered{0};
  for (int t = 0; t < 3; ++t) {
    readers.emplace_back([&] {
      httplib::Client client = Client();
      for (int i = 0; i < 20; ++i) {
        httplib::Result res = client.Get(i % 2 ? "/healthz" : "/status");
        if (res && (res->status == 200 || res->status == 503)) ++answered;
      }
    });
  }
  for (std::thread& reader : readers) reader.join();
  done = true;
  writer.join();
  EXPECT_EQ(answered.load(), 60);
}

// Under load: more clients than workers on every path, with keep-alive and
// fresh connections, while the status grows and changes as a running query's
// does (make tsan runs this under ThreadSanitizer).
TEST_F(MonitorServerTest, EveryPathUnderLoadWhileTheStatusChanges) {
  std::atomic<bool> done{false};
  std::thread writer([&] {
    for (int64_t batch = 0; !done.load(); ++batch) {
      std::lock_guard<std::mutex> lock(shared_.mutex);
      BatchRow row;
      row.batch_id = batch;
      row.input_rows = batch * 10;
      shared_.status.batches.push_back(row);
      if (shared_.status.batches.size() > 25) {
        shared_.status.batches.erase(shared_.status.batches.begin());
      }
      shared_.status.recent_progress_json.push_back("{\"batchId\":" + std::to_string(batch) + "}");
      if (shared_.status.recent_progress_json.size() > 100) {
        shared_.status.recent_progress_json.erase(shared_.status.recent_progress_json.begin());
      }
      shared_.status.lag = {{"events", 0, batch, batch + 3, 3}};
      shared_.status.last_error = batch % 2 ? "lookup failed " + std::to_string(batch) : "";
      shared_.status.health = {batch % 3 != 0, "batch " + std::to_string(batch)};
    }
  });
  const std::vector<std::string> paths = {"/metrics", "/status", "/healthz", "/"};
  constexpr int kClients = 6;
  constexpr int kRequests = 40;
  std::atomic<int> answered{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      httplib::Client keep_alive = Client();
      keep_alive.set_keep_alive(c % 2 == 0);
      for (int i = 0; i < kRequests; ++i) {
        const std::string& path = paths[(c + i) % paths.size()];
        httplib::Result res = keep_alive.Get(path);
        if (res && (res->status == 200 || res->status == 503) && !res->body.empty()) ++answered;
      }
    });
  }
  for (std::thread& client : clients) client.join();
  done = true;
  writer.join();
  EXPECT_EQ(answered.load(), kClients * kRequests);
}

TEST(MonitorServerBindTest, APortInUseIsAnErrorNamingTheAddress) {
  ServerOptions options;
  options.status = [] { return QueryStatus(); };
  Result<std::unique_ptr<MonitorServer>> first = MonitorServer::Start(options);
  ASSERT_TRUE(first.ok());
  options.port = (*first)->port();
  Result<std::unique_ptr<MonitorServer>> second = MonitorServer::Start(options);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("127.0.0.1:" + std::to_string(options.port)),
            std::string::npos);
}

}  // namespace
}  // namespace silt::monitor
