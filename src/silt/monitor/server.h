// MonitorServer: the HTTP endpoint of a running query (cpp-httplib), on its
// own threads:
//   GET /metrics   Prometheus text exposition (text/plain; version=0.0.4)
//   GET /status    the query's status and recent progress as JSON
//   GET /healthz   200 "ok" while healthy, 503 with the reason otherwise
//   GET /          the status page (HTML, self-contained)
// Anything else is 404; methods other than GET/HEAD are 405.
//
// The server only calls the providers it is given; they must be safe to
// call from the server's threads and return quickly (copy a snapshot), so
// that a slow or stuck scraper never holds up the query.
//
// Thread safety: Start and the destructor from one thread; the providers
// are called concurrently from the server's worker threads.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "silt/base/result.h"
#include "silt/monitor/status.h"

namespace httplib {
class Server;
}

namespace silt::monitor {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 0;  // 0: any free port (see port())
  // Provide the text of /metrics and the status snapshot behind /status,
  // /healthz and /.
  std::function<std::string()> metrics;
  std::function<QueryStatus()> status;
};

class MonitorServer {
 public:
  // Binds host:port and starts serving. Errors: IOError naming the address
  // when it cannot be bound (in use, not a local address).
  static Result<std::unique_ptr<MonitorServer>> Start(ServerOptions options);
  // Stops accepting, finishes the requests in flight, joins the threads.
  ~MonitorServer();
  MonitorServer(const MonitorServer&) = delete;
  MonitorServer& operator=(const MonitorServer&) = delete;

  // The bound port (the chosen one when options.port was 0).
  int port() const { return port_; }
  const std::string& host() const { return options_.host; }

 private:
  explicit MonitorServer(ServerOptions options);

  ServerOptions options_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::atomic<bool> listen_returned_{false};
  int port_ = 0;
};

}  // namespace silt::monitor
