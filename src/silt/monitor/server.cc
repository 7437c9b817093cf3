#include "silt/monitor/server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <chrono>

namespace silt::monitor {

namespace {

// Scrapes are small and few; two workers keep a slow client from blocking
// the next scrape without spending threads on an edge machine.
constexpr size_t kWorkerThreads = 2;

}  // namespace

MonitorServer::MonitorServer(ServerOptions options) : options_(std::move(options)) {}

MonitorServer::~MonitorServer() {
  if (server_ != nullptr) server_->stop();
  if (thread_.joinable()) thread_.join();
}

Result<std::unique_ptr<MonitorServer>> MonitorServer::Start(ServerOptions options) {
  std::unique_ptr<MonitorServer> self(new MonitorServer(std::move(options)));
  auto server = std::make_unique<httplib::Server>();
  server->new_task_queue = [] { return new httplib::ThreadPool(kWorkerThreads); };
  // A scraper that stops reading must not hold a worker for long.
  server->set_read_timeout(5, 0);
  server->set_write_timeout(5, 0);
  server->set_keep_alive_timeout(5);

  // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, which lets a
  // second process bind the same port and share its connections instead of
  // failing to start.
  server->set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, reinterpret_cast<const void*>(&yes), sizeof(yes));
  });

  const ServerOptions& opts = self->options_;
  server->Get("/metrics", [&opts](const httplib::Request&, httplib::Response& res) {
    res.set_content(opts.metrics ? opts.metrics() : std::string(),
                    "text/plain; version=0.0.4; charset=utf-8");
  });
  server->Get("/status", [&opts](const httplib::Request&, httplib::Response& res) {
    res.set_content(StatusToJson(opts.status()), "application/json");
  });
  server->Get("/healthz", [&opts](const httplib::Request&, httplib::Response& res) {
    QueryStatus status = opts.status();
    res.status = status.health.healthy ? 200 : 503;
    res.set_content((status.health.healthy ? "ok: " : "unhealthy: ") + status.health.reason + "\n",
                    "text/plain; charset=utf-8");
  });
  server->Get("/", [&opts](const httplib::Request&, httplib::Response& res) {
    res.set_content(StatusPageHtml(opts.status()), "text/html; charset=utf-8");
  });
  // Only GET (and HEAD, which httplib answers from the GET handlers).
  server->set_pre_routing_handler([](const httplib::Request& req, httplib::Response& res) {
    if (req.method == "GET" || req.method == "HEAD")
      return httplib::Server::HandlerResponse::Unhandled;
    res.status = 405;
    res.set_header("Allow", "GET, HEAD");
    res.set_content("method not allowed\n", "text/plain");
    return httplib::Server::HandlerResponse::Handled;
  });

  int port = opts.port;
  bool bound = false;
  if (port == 0) {
    port = server->bind_to_any_port(opts.host);
    bound = port > 0;
  } else {
    bound = server->bind_to_port(opts.host, port);
  }
  if (!bound) {
    return Status::IOError("metrics: cannot listen on ", opts.host, ":", opts.port,
                           " (address in use, or not an address of this machine)");
  }
  self->port_ = port;
  httplib::Server* raw = server.get();
  self->server_ = std::move(server);
  MonitorServer* me = self.get();
  self->thread_ = std::thread([raw, me] {
    raw->listen_after_bind();
    me->listen_returned_.store(true);
  });
  // httplib's stop() does nothing until the accept loop runs; wait for it,
  // so that a server stopped right after Start does not block in accept.
  while (!raw->is_running() && !self->listen_returned_.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return self;
}

}  // namespace silt::monitor
