// catalog-serve: the catalog's REST surface (docs/REST.md) over HTTP/1.1, with Boost.Beast.
//
//   catalog-serve [--port <n>] [--bind <address>] [--tls-cert <pem> --tls-key <pem>]
//                 [--access-log <file>] [--slow-ms <n>]
//                 [the flags of catalog-replay: --store, --jwt-*, --admin, ...]
//
// It listens on <address>:<port> (default 127.0.0.1:8585; port 0 picks a free one) and prints
// one line, `listening on <address>:<port>`, so that scripts can read the port; with a
// certificate and key it speaks HTTPS only. --threads threads (default: one per hardware thread)
// each run an io_context of their own, and each connection is a Session on one of them (taken in
// turn), so that its handlers never run at once and need no strand or lock. A Session reads a
// request, hands it to rest::Api::handle (which never throws and is thread-safe), writes the
// answer and, with keep-alive, reads the next. A read is answered on the connection's thread; a
// write, which may wait (LMDB's writer lock, PostgreSQL's writers' turn, a commit's flush), runs
// on one of as many worker threads, so that the connection's thread goes on serving its other
// connections. Connections are accepted, and signals handled, on a thread of their own: a
// server whose threads are all busy still takes new connections. SIGHUP opens the access log
// file again (log rotation). SIGINT or SIGTERM stops accepting, lets the requests in flight
// finish (what is left of their reading and writing gets 10 s), closes idle connections, and
// exits 0. A bad command line exits 2. A request whose
// length is ambiguous (any Transfer-Encoding but `chunked` alone) gets 400 and a close; when
// accept fails for want of descriptors the server closes the longest idle connections and tries
// again, and after other failures waits 100 ms first. HEAD is answered as GET without the body.
//
// All the catalog needs from a host is the conversion between its HTTP messages and
// rest::Request / rest::Response (`to_rest` and `Session::respond` below); the rest is Beast.
// What an operator needs beside it (an access log, GET /healthz, GET /metrics) is in
// serve_host.hpp.

#include "options.hpp"
#include "serve_host.hpp"

#include <catalog/rest/api.hpp>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>

#include <net/if.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace rest = catalog::rest;
using tcp = asio::ip::tcp;

namespace {

// What every connection shares: the Api, the store (for /metrics), the server's counters, the
// access log, if any, and the threads that run writes.
struct Host {
  catalog::Store& store;
  const rest::Api& api;
  std::size_t body_limit;
  catalog_examples::ServerCounters counters;
  std::unique_ptr<catalog_examples::AccessLog> access_log;
  asio::thread_pool& writers;
};

constexpr auto idle_timeout = std::chrono::seconds(60);        // also bounds reading and writing
constexpr auto stop_grace = std::chrono::seconds(10);  // at a stop: for reading and writing
constexpr auto accept_pause = std::chrono::milliseconds(100);  // after a failed accept
constexpr auto shed_pause = std::chrono::milliseconds(5);      // after idle connections closed
// After an answer to a request whose body was left unread: how long, and how many bytes, the
// server reads and drops before it closes (Session::linger).
constexpr auto linger_time = std::chrono::seconds(2);
constexpr std::size_t linger_bytes = 8 << 20;
// The most a connection's read buffer holds (Session::buffer_).
constexpr std::size_t read_buffer_limit = 64 << 10;

std::string str(beast::string_view s) { return std::string(s.data(), s.size()); }

// An endpoint as people write it: 127.0.0.1:8585, [::1]:8585.
std::string endpoint_text(const tcp::endpoint& e) {
  auto address = e.address().to_string();
  if (e.address().is_v6()) address = "[" + address + "]";
  return address + ":" + std::to_string(e.port());
}

// The request line and headers of `req`, without its body, as the plain data Api takes.
rest::Request head_of(const http::request<http::string_body>& req) {
  rest::Request r{str(req.method_string()), str(req.target()), {}, {}};
  for (const auto& field : req)
    r.headers.emplace_back(str(field.name_string()), str(field.value()));
  return r;
}

// A Beast request as the plain data Api takes.
rest::Request to_rest(http::request<http::string_body>&& req) {
  auto r = head_of(req);
  r.body = std::move(req.body());
  return r;
}

// A 400 for what never reaches Api (a malformed message, a body over the limit), in its shape.
rest::Response bad_request(const std::string& message) {
  return catalog_examples::error_response(400, "BAD_REQUEST", message);
}

// A request's parser that keeps the header's fields and drops a chunked body's trailer fields,
// as RFC 9110 6.5.1 allows. Beast's own adds a trailer's fields to the header's, where one would
// change how the request is handled after its header was checked: a second Authorization, an
// If-Match, a Content-Type.
class RequestParser final : public http::request_parser<http::string_body> {
  void on_field_impl(http::field name, beast::string_view name_string, beast::string_view value,
                     beast::error_code&) override {
    if (!is_header_done()) get().insert(name, name_string, value);
  }
};

// Why a request's length cannot be trusted, or nothing when it can (RFC 9112 6.1 and 6.3).
// Beast frames a request whose Transfer-Encoding does not end in `chunked` (`xchunked`,
// `chunked, identity`) by its Content-Length, or as bodiless when it has none; the body it was
// sent with is then parsed and run as the next request on the connection (request smuggling),
// and a proxy in front that frames it otherwise disagrees on where each request ends. So the
// only transfer coding taken is `chunked` alone, in HTTP/1.1 and without a Content-Length;
// anything else gets a 400, and the connection closes without reading further.
std::optional<std::string> framing_error(const http::request_parser<http::string_body>& parser) {
  const auto& header = parser.get();
  auto [first, last] = header.equal_range(http::field::transfer_encoding);
  if (first == last) return std::nullopt;
  if (header.version() < 11) return "Transfer-Encoding in an HTTP/1.0 request";
  if (header.count(http::field::content_length) != 0)
    return "Transfer-Encoding and Content-Length in one request";
  std::size_t codings = 0;
  bool chunked_only = true;
  for (; first != last; ++first) {
    beast::string_view list = first->value();
    while (!list.empty()) {  // a comma-separated list; empty elements count for nothing
      auto comma = list.find(',');
      auto element = list.substr(0, comma);
      list = comma == beast::string_view::npos ? beast::string_view{} : list.substr(comma + 1);
      while (!element.empty() && (element.front() == ' ' || element.front() == '\t'))
        element.remove_prefix(1);
      while (!element.empty() && (element.back() == ' ' || element.back() == '\t'))
        element.remove_suffix(1);
      if (element.empty()) continue;
      ++codings;
      chunked_only = chunked_only && beast::iequals(element, "chunked");
    }
  }
  // Beast must frame the body as chunked too, or the two readings could still differ.
  if (codings != 1 || !chunked_only || !parser.chunked())
    return "Transfer-Encoding other than chunked";
  return std::nullopt;
}

// Why an HTTP/1.1 request's Host is unusable (RFC 9112 3.2: none, or more than one, is 400), or
// nothing.
std::optional<std::string> host_error(const http::request<http::string_body>& header) {
  if (header.version() < 11) return std::nullopt;
  const auto hosts = header.count(http::field::host);
  if (hosts == 0) return "no Host header";
  if (hosts > 1) return "more than one Host header";
  return std::nullopt;
}

// What the server asks of a connection, whatever carries it (TCP, or TLS over TCP).
class Connection {
 public:
  virtual ~Connection() = default;
  virtual void start() = 0;
  // Since when the connection has waited for a request (steady clock ticks), 0 while a request
  // is in flight: what the server sheds first when descriptors run out.
  virtual std::int64_t idle_since() const noexcept = 0;
  // Closes the connection if it is still idle when this runs on its thread.
  virtual void shed() = 0;
  // Graceful stop: an idle connection closes now; a busy one after its response, given
  // stop_grace for what is left of its reading and writing (not for the Api's work).
  virtual void stop() = 0;
};

// One connection over `Stream` (beast::tcp_stream, or beast::ssl_stream over one): read a
// request, answer it, repeat while keep-alive. Every handler runs on the connection's thread,
// so `stop` (dispatched there) never races with them.
template <class Stream>
class Session final : public Connection, public std::enable_shared_from_this<Session<Stream>> {
  static constexpr bool tls = !std::is_same_v<Stream, beast::tcp_stream>;
  using std::enable_shared_from_this<Session<Stream>>::shared_from_this;

 public:
  // `peer`: the address accept gave, which a connection reset by then still has.
  template <class... TlsContext>
  Session(tcp::socket socket, const tcp::endpoint& peer, Host& host, TlsContext&... tls_context)
      : stream_(std::move(socket), tls_context...), host_(host), body_limit_(host.body_limit) {
    host_.counters.opened();
    if (host_.access_log) peer_ = endpoint_text(peer);
  }
  ~Session() override { host_.counters.closed(); }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // Over TLS the handshake comes first, bounded by the idle timeout like a read.
  void start() override {
    asio::dispatch(stream_.get_executor(), [self = shared_from_this()] {
      if constexpr (tls) {
        self->lowest().expires_after(idle_timeout);
        self->stream_.async_handshake(asio::ssl::stream_base::server, [self](beast::error_code ec) {
          if (ec) return self->close();
          self->read_header();
        });
      } else {
        self->read_header();
      }
    });
  }

  std::int64_t idle_since() const noexcept override { return idle_since_.load(); }

  void shed() override {
    asio::dispatch(stream_.get_executor(), [self = shared_from_this()] {
      if (!self->busy_) self->close();
    });
  }

  // A request whose body is still arriving, or whose answer is still being written, has
  // stop_grace for it, then the connection closes: a client trickling a body or reading its
  // answer slowly would otherwise hold the stop for the whole timeout. A request the Api is
  // running finishes, and its answer then has stop_grace to be written (respond).
  void stop() override {
    asio::dispatch(stream_.get_executor(), [self = shared_from_this()] {
      self->stopping_ = true;
      if (!self->busy_) return self->close();  // cancels the read that waits for a request
      self->stop_timer_.emplace(self->stream_.get_executor(), stop_grace);
      self->stop_timer_->async_wait([self](beast::error_code ec) {
        if (!ec && !self->in_api_) self->close();
      });
    });
  }

 private:
  beast::tcp_stream& lowest() { return beast::get_lowest_layer(stream_); }

  void read_header() {
    busy_ = false;
    idle_since_.store(std::chrono::steady_clock::now().time_since_epoch().count());
    if (stopping_) return close();
    parser_.emplace();
    // No limit while the header is read: Beast would refuse a Content-Length past it before the
    // token is checked. on_header sets the Api's own limit before any body is read.
    parser_->body_limit(boost::none);
    lowest().expires_after(idle_timeout);
    http::async_read_header(
        stream_, buffer_, *parser_,
        [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_header(ec); });
  }

  void on_header(beast::error_code ec) {
    // A stop or shed closes a connection that waits for a request; a header that was already in
    // the buffer then completes the read. Its request is not run (a malformed one is not
    // answered): no answer could be sent.
    if (!lowest().socket().is_open()) return;
    if (ec) return on_error(ec);
    busy_ = true;  // a request is in flight: a stop waits for its response
    idle_since_.store(0);
    started_ = std::chrono::steady_clock::now();
    if (host_.access_log) {
      method_ = str(parser_->get().method_string());
      target_ = str(parser_->get().target());
    }
    if (auto framing = framing_error(*parser_)) return respond(bad_request(*framing), false);
    if (auto host = host_error(parser_->get()))
      return respond(bad_request("Malformed HTTP request: " + *host), false);
    // A body is read only for a client with a valid token: the Api's 401 comes first anyway
    // (docs/SEMANTICS.md §14, before a body too long), and without this a client with no token
    // could make the server hold a body up to the limit on every connection it opens. The
    // server's own routes take no body at all: they answer from the header. Either way the body
    // is left unread, so the connection closes after the answer (linger).
    auto length = parser_->content_length();
    if (parser_->chunked() || length.value_or(0) > 0) {
      auto head = head_of(parser_->get());
      if (catalog_examples::own_path(head.target)) {
        const bool head_only = head.method == "HEAD";
        if (head_only) head.method = "GET";
        auto own = catalog_examples::own_route(head, host_.api, host_.store, host_.counters);
        return respond(std::move(*own), false, head_only);
      }
      if (auto refused = host_.api.refuse_unauthenticated(head))
        return respond(std::move(*refused), false);
    }
    if (length && *length > body_limit_) return respond(body_too_large(), false);
    parser_->body_limit(body_limit_);  // a chunked body is counted as it comes: never buffered
    // An HTTP/1.0 client gets no 1xx answer, and its expectation is ignored (RFC 9110 10.1.1).
    if (parser_->get().version() >= 11 &&
        beast::iequals(parser_->get()[http::field::expect], "100-continue")) {
      // curl sends `Expect: 100-continue` before a large body and waits for this answer.
      auto go_on = std::make_shared<http::response<http::empty_body>>(http::status::continue_, 11);
      return http::async_write(
          stream_, *go_on, [self = shared_from_this(), go_on](beast::error_code ec, std::size_t) {
            if (ec) return self->close();
            self->read_body();
          });
    }
    read_body();
  }

  void read_body() {
    http::async_read(
        stream_, buffer_, *parser_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
          if (!self->lowest().socket().is_open()) return;  // a stop closed it
          if (ec) return self->on_error(ec);
          auto req = self->parser_->release();
          bool keep_alive = req.keep_alive(), head = req.method() == http::verb::head;
          auto request = to_rest(std::move(req));
          // HEAD is GET without the body (RFC 9110 9.3.2): the same status and
          // headers, Content-Length included.
          if (head) request.method = "GET";
          auto own = catalog_examples::own_route(request, self->host_.api, self->host_.store,
                                                 self->host_.counters);
          if (own) return self->respond(std::move(*own), keep_alive, head);
          if (request.method == "GET")
            return self->respond(self->host_.api.handle(request), keep_alive, head);
          self->write_elsewhere(std::move(request), keep_alive);
        });
  }

  // Runs a write on a worker and answers it back on this connection's thread. The guard keeps
  // that thread's context running meanwhile: a stop lets the write finish and be answered.
  void write_elsewhere(rest::Request request, bool keep_alive) {
    in_api_ = true;
    auto back = asio::make_work_guard(stream_.get_executor());
    asio::post(host_.writers, [self = shared_from_this(), request = std::move(request), keep_alive,
                               back = std::move(back)]() mutable {
      auto response = self->host_.api.handle(request);
      asio::post(back.get_executor(), [self, response = std::move(response), keep_alive]() mutable {
        self->in_api_ = false;
        self->respond(std::move(response), keep_alive);
      });
    });
  }

  void on_error(beast::error_code ec) {
    if (ec == http::error::body_limit)  // a chunked body grew past the limit
      return respond(body_too_large(), false);
    if (ec != http::error::end_of_stream &&
        ec.category() == make_error_code(http::error::bad_target).category()) {
      // A request whose header never parsed is timed from when it was found malformed.
      if (!parser_->is_header_done()) started_ = std::chrono::steady_clock::now();
      return respond(bad_request("Malformed HTTP request: " + ec.message()), false);
    }
    close();  // the peer closed, a timeout, or a stop
  }

  // The Api's own words for a body over its limit (docs/REST.md).
  rest::Response body_too_large() const {
    return bad_request("Request body is larger than " + std::to_string(body_limit_) + " bytes");
  }

  // Writes the answer as one buffer: the status line, the Api's fields in their order, then
  // `Connection` where keep-alive is not the version's default, then `Content-Length` (none for
  // a 204, RFC 9110 8.6; a HEAD answer has the length but not the body), then the body. These
  // are the bytes Beast's serializer writes for such a message, made without its machinery.
  void respond(rest::Response r, bool keep_alive, bool head = false) {
    busy_ = true;
    idle_since_.store(0);
    status_ = r.status;
    const unsigned version = parser_->is_header_done() ? parser_->get().version() : 11;
    keep_alive_ = keep_alive && !stopping_;
    const auto reason = http::obsolete_reason(static_cast<http::status>(r.status));
    out_.clear();
    out_ += "HTTP/";
    out_ += static_cast<char>('0' + version / 10 % 10);
    out_ += '.';
    out_ += static_cast<char>('0' + version % 10);
    out_ += ' ';
    out_ += std::to_string(r.status);
    out_ += ' ';
    out_.append(reason.data(), reason.size());
    out_ += "\r\n";
    for (const auto& [name, value] : r.headers) {
      out_ += name;
      out_ += ": ";
      out_ += value;
      out_ += "\r\n";
    }
    if (version >= 11 && !keep_alive_) out_ += "Connection: close\r\n";
    if (version < 11 && keep_alive_) out_ += "Connection: keep-alive\r\n";
    body_bytes_ = 0;
    if (r.status != 204) {
      out_ += "Content-Length: ";
      out_ += std::to_string(r.body.size());
      out_ += "\r\n";
    }
    out_ += "\r\n";
    header_bytes_ = out_.size();
    if (r.status != 204 && !head) {
      out_ += r.body;
      body_bytes_ = r.body.size();
    }
    host_.counters.answered(r.status);
    lowest().expires_after(stopping_ ? stop_grace : idle_timeout);
    asio::async_write(stream_, asio::buffer(out_),
                      [self = shared_from_this()](beast::error_code ec, std::size_t written) {
                        // What reached the socket of the body: all of it, unless the write
                        // failed (the client went away) part way.
                        const std::size_t sent =
                            written > self->header_bytes_
                                ? std::min(written - self->header_bytes_, self->body_bytes_)
                                : 0;
                        self->host_.counters.sent(sent);  // a HEAD answer sends no body
                        self->log_request(sent);
                        if (ec) return self->close();
                        if (!self->keep_alive_)
                          return self->body_unread() ? self->linger() : self->close();
                        self->read_header();
                      });
  }

  // The access log's line for the request just answered, `sent` bytes of its body written.
  void log_request(std::size_t sent) {
    if (!host_.access_log) return;
    host_.access_log->write(peer_, method_.empty() ? "-" : method_, target_.empty() ? "-" : target_,
                            status_, sent, std::chrono::steady_clock::now() - started_);
    method_.clear();
    target_.clear();
  }

  // Whether the request answered has a body that was not read to its end (a 401 before it, a
  // 400 for its framing or its length).
  bool body_unread() const {
    return parser_ && parser_->is_header_done() && !parser_->is_done();
  }

  // Ends a connection whose request body was left unread: with the answer sent, this side stops
  // sending and drops what the client still sends, for up to linger_time and linger_bytes,
  // then closes. Closing at once with unread bytes makes the kernel answer them with a reset,
  // which can destroy the answer before the client reads it (RFC 9112 9.6).
  void linger() {
    idle_since_.store(0);
    beast::error_code ignored;
    lowest().socket().shutdown(tcp::socket::shutdown_send, ignored);
    dropped_ = std::make_unique<char[]>(drop_size);
    lowest().expires_after(linger_time);
    drop(0);
  }

  void drop(std::size_t total) {
    lowest().async_read_some(
        asio::buffer(dropped_.get(), drop_size),
        [self = shared_from_this(), total](beast::error_code ec, std::size_t n) {
          if (ec || total + n >= linger_bytes) return self->close();
          self->drop(total + n);
        });
  }

  void close() {
    idle_since_.store(0);  // nothing left to shed
    if (stop_timer_) stop_timer_->cancel();  // it holds the session
    beast::error_code ignored;
    lowest().socket().shutdown(tcp::socket::shutdown_send, ignored);
    lowest().socket().close(ignored);
  }

  Stream stream_;
  Host& host_;
  std::size_t body_limit_;
  std::string peer_;    // for the access log
  std::string method_;  // of the request in flight, for the access log
  std::string target_;
  int status_ = 0;
  std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
  // Bounded: what it holds at once is a header (Beast's limit, 8 KiB), a chunk's size line or
  // a trailer; one that keeps growing (a chunk extension without end) is a 400, not memory.
  beast::flat_buffer buffer_{read_buffer_limit};
  static constexpr std::size_t drop_size = 16384;
  std::unique_ptr<char[]> dropped_;  // what linger() reads, to drop
  std::optional<RequestParser> parser_;
  std::string out_;              // the answer's bytes, while they are written
  std::size_t header_bytes_ = 0;  // of the answer being written: its status line and fields
  std::size_t body_bytes_ = 0;    // of the body in the answer being written
  bool keep_alive_ = false;      // of the answer being written
  bool busy_ = false;
  bool in_api_ = false;  // a worker runs the request: a stop lets it finish
  std::optional<asio::steady_timer> stop_timer_;  // a stop's limit on the reading and writing
  bool stopping_ = false;
  std::atomic<std::int64_t> idle_since_{0};
};

// What a failed accept says. Asio gives accept's errno in the system category; it is read with
// strerror rather than ec.message(), a virtual call that UBSan's vptr check verifies by writing
// to a pipe, which cannot be made while the descriptors are exhausted (a false report).
std::string accept_error_text(beast::error_code ec) {
  if (ec.category() == boost::system::system_category()) return std::strerror(ec.value());
  return "error " + std::to_string(ec.value());
}

// The io_contexts the threads run, one each: the acceptor's, and one per connection thread; a
// connection's context keeps its thread running until `release`. Beside them, the workers that
// run writes.
class Threads {
 public:
  Threads(int n, asio::thread_pool& writers) : writers_(writers) {
    for (int i = 0; i < n; ++i) {
      contexts_.push_back(std::make_unique<asio::io_context>(1));
      guards_.emplace_back(contexts_.back()->get_executor());
    }
  }
  asio::io_context& acceptor() { return acceptor_; }
  // The context of the next connection, in turn.
  asio::io_context& next() { return *contexts_[next_++ % contexts_.size()]; }
  // Lets each connection context's run() return once its work is done.
  void release() {
    for (auto& guard : guards_) guard.reset();
  }
  // Runs every context on a thread of its own until all are released and done (the acceptor's
  // until the server stops), then lets the workers end.
  void run() {
    std::vector<std::thread> pool;
    pool.emplace_back([this] { acceptor_.run(); });
    for (auto& io : contexts_) pool.emplace_back([&io = *io] { io.run(); });
    for (auto& t : pool) t.join();
    writers_.join();
  }

 private:
  asio::io_context acceptor_{1};
  std::vector<std::unique_ptr<asio::io_context>> contexts_;
  std::vector<asio::executor_work_guard<asio::io_context::executor_type>> guards_;
  asio::thread_pool& writers_;
  std::size_t next_ = 0;
};

// Accepts connections until SIGINT or SIGTERM, pausing after a failed accept. The acceptor, its
// pause timer, the signal set and the session list live on the acceptor's context, so they need
// no lock.
class Server {
 public:
  // With `tls`, every connection speaks TLS with that context.
  Server(Threads& threads, Host& host, const asio::ip::address& address, unsigned short port,
         asio::ssl::context* tls)
      : threads_(threads), acceptor_(threads.acceptor()), accept_timer_(threads.acceptor()),
        signals_(threads.acceptor(), SIGINT, SIGTERM), hangup_(threads.acceptor(), SIGHUP),
        host_(host), tls_(tls) {
    tcp::endpoint endpoint(address, port);
    acceptor_.open(endpoint.protocol());
    acceptor_.set_option(asio::socket_base::reuse_address(true));
    acceptor_.bind(endpoint);
    acceptor_.listen();
    signals_.async_wait([this](beast::error_code, int) { stop(); });
    on_hangup();
    accept();
  }

  tcp::endpoint endpoint() const { return acceptor_.local_endpoint(); }

 private:
  void accept() {
    acceptor_.async_accept(threads_.next(), peer_, [this](beast::error_code ec, tcp::socket socket) {
      if (!acceptor_.is_open()) return;  // stopped
      if (ec) return pause_accepting(ec);
      std::erase_if(sessions_, [](const auto& s) { return s.expired(); });
      std::shared_ptr<Connection> session;
      if (tls_)
        session = std::make_shared<Session<beast::ssl_stream<beast::tcp_stream>>>(
            std::move(socket), peer_, host_, *tls_);
      else
        session = std::make_shared<Session<beast::tcp_stream>>(std::move(socket), peer_, host_);
      sessions_.push_back(session);
      session->start();
      accept();
    });
  }

  // An accept that fails (EMFILE or ENFILE when out of descriptors, ENOBUFS, ENOMEM) leaves the
  // pending connection in the queue, so the listening socket stays ready and an immediate retry
  // fails again at once: a busy loop for as long as the shortage lasts, which is as long as the
  // open connections stay (up to the idle timeout). Waiting a moment lets connections close and
  // costs a queued client at most that moment. A line on stderr says so, at most once a minute.
  //
  // Out of descriptors, idle connections give theirs back: the longest idle quarter of them (at
  // least one) is closed, so that connections held open without a request (a slow client, or
  // one that means harm) cannot keep every new client out for the whole idle timeout.
  void pause_accepting(beast::error_code ec) {
    auto now = std::chrono::steady_clock::now();
    const bool out_of_descriptors =
        ec == asio::error::no_descriptors ||
        (ec.category() == boost::system::system_category() && ec.value() == ENFILE);
    const std::size_t shed = out_of_descriptors ? shed_idle() : 0;
    // Said at most once a minute; shedding apart, so that a failure said before any connection
    // was idle does not silence the first shedding.
    auto& reported = shed > 0 ? shed_reported_ : accept_reported_;
    if (!reported || now - *reported >= std::chrono::minutes(1)) {
      reported = now;
      std::cerr << "catalog-serve: accept failed (" << accept_error_text(ec) << "); ";
      if (shed > 0) std::cerr << "closing the " << shed << " longest idle connections; ";
      if (shed > 0)
        std::cerr << "retrying in " << shed_pause.count() << " ms\n";
      else
        std::cerr << "retrying every " << accept_pause.count() << " ms\n";
    }
    accept_timer_.expires_after(shed > 0 ? shed_pause : accept_pause);
    accept_timer_.async_wait([this](beast::error_code ec) {
      if (ec || !acceptor_.is_open()) return;  // stopped
      accept();
    });
  }

  // Closes the longest idle quarter of the idle connections (at least one); returns how many
  // were asked to close.
  std::size_t shed_idle() {
    std::vector<std::pair<std::int64_t, std::shared_ptr<Connection>>> idle;
    for (auto& weak : sessions_)
      if (auto session = weak.lock())
        if (auto since = session->idle_since(); since != 0) idle.emplace_back(since, session);
    if (idle.empty()) return 0;
    const std::size_t n = std::max<std::size_t>(1, idle.size() / 4);
    std::partial_sort(idle.begin(), idle.begin() + static_cast<std::ptrdiff_t>(n), idle.end(),
                      [](const auto& a, const auto& b) { return a.first < b.first; });
    for (std::size_t i = 0; i < n; ++i) idle[i].second->shed();
    return n;
  }

  // SIGHUP reopens the access log file (after logrotate moved it away), as often as it comes.
  void on_hangup() {
    hangup_.async_wait([this](beast::error_code ec, int) {
      // Stopped: cancelled, or SIGHUP handed over with a SIGTERM before it (then the cancel came
      // too late, and waiting again would keep the acceptor's context, and the process, alive).
      if (ec || !acceptor_.is_open()) return;
      if (!host_.access_log || host_.access_log->path().empty()) {
        std::cerr << "catalog-serve: SIGHUP: no access log file to reopen\n";
      } else if (auto failed = host_.access_log->reopen()) {
        std::cerr << "catalog-serve: SIGHUP: " << *failed << "; the log goes on where it was\n";
      } else {
        std::cerr << "catalog-serve: SIGHUP: reopened the access log " << host_.access_log->path()
                  << '\n';
      }
      on_hangup();
    });
  }

  void stop() {
    beast::error_code ignored;
    acceptor_.close(ignored);
    accept_timer_.cancel();
    hangup_.cancel(ignored);
    for (auto& weak : sessions_)
      if (auto session = weak.lock()) session->stop();
    threads_.release();  // each thread ends when its connections have
  }

  Threads& threads_;
  tcp::acceptor acceptor_;
  tcp::endpoint peer_;  // of the connection being accepted (one accept at a time)
  asio::steady_timer accept_timer_;
  std::optional<std::chrono::steady_clock::time_point> accept_reported_;
  std::optional<std::chrono::steady_clock::time_point> shed_reported_;
  asio::signal_set signals_;
  asio::signal_set hangup_;
  Host& host_;
  asio::ssl::context* tls_;
  std::vector<std::weak_ptr<Connection>> sessions_;
};

}  // namespace

int main(int argc, char** argv) {
  // A reader of the access log or of standard error that goes away (a log pipe restarted) costs
  // the lines written to it, not the server: without this, the write would end the process with
  // SIGPIPE. SIGHUP reopens the access log once the server listens (Server); until then, while
  // the store opens, it is ignored rather than ending the process.
  ::signal(SIGPIPE, SIG_IGN);
  ::signal(SIGHUP, SIG_IGN);
  CLI::App app("Serves the catalog's REST API over HTTP/1.1 (docs/REST.md). GET /healthz answers "
               "anyone; GET /metrics (Prometheus text) answers admins.",
               "catalog-serve");
  catalog_examples::add_standard_flags(app);
  std::string port_text = "8585";
  std::string bind_text = "127.0.0.1";
  std::optional<std::string> access_log;
  std::optional<std::string> tls_cert;
  std::optional<std::string> tls_key;
  std::string slow_text = "0";
  std::string threads_text = std::to_string(std::max(1u, std::thread::hardware_concurrency()));
  const std::string group = "Serving";
  app.add_option("--port", port_text, "The port to listen on (default 8585; 0: any free port)")
      ->type_name("<n>")
      ->group(group);
  app.add_option("--bind", bind_text, "The IPv4 or IPv6 address to listen on (default 127.0.0.1)")
      ->type_name("<address>")
      ->group(group);
  auto* cert = app.add_option("--tls-cert", "A PEM certificate chain: speak HTTPS only (TLS 1.2 "
                                            "or later); needs --tls-key")
                   ->type_name("<pem>")
                   ->group(group);
  auto* key = app.add_option("--tls-key", "The PEM private key of --tls-cert")
                  ->type_name("<pem>")
                  ->group(group);
  auto* log = app.add_option("--access-log",
                             "Append one line per request to <file> (- for standard output)")
                  ->type_name("<file>")
                  ->group(group);
  app.add_option("--slow-ms", slow_text,
                 "Log operations of the store slower than <n> ms to standard error (0: none)")
      ->type_name("<n>")
      ->group(group);
  app.add_option("--threads", threads_text,
                 "Threads answering requests, and as many running writes (default: one per "
                 "hardware thread)")
      ->type_name("<n>")
      ->group(group);
  catalog_examples::StoreFlags flags(app);
  catalog_examples::Options options;
  int threads = 1;
  unsigned short port = 0;
  asio::ip::address address;
  std::int64_t slow_ms = 0;
  if (auto status = catalog_examples::parse(app, argc, argv, [&] {
        port = static_cast<unsigned short>(catalog_examples::read_integer(port_text, "--port", 65535));
        // An IPv6 address may come in brackets, as URLs and the listening line write it.
        if (bind_text.size() > 2 && bind_text.front() == '[' && bind_text.back() == ']')
          bind_text = bind_text.substr(1, bind_text.size() - 2);
        beast::error_code ec;
        address = asio::ip::make_address(bind_text, ec);
        if (ec)
          throw catalog_examples::BadOption{"--bind: not an IPv4 or IPv6 address: " + bind_text};
        // An IPv6 zone names an interface or is its number: asio reads an unknown name as zone 0,
        // which would listen elsewhere than asked without a word.
        if (const auto percent = bind_text.find('%'); percent != std::string::npos) {
          const auto zone = bind_text.substr(percent + 1);
          const bool number =
              !zone.empty() && std::all_of(zone.begin(), zone.end(),
                                           [](char c) { return c >= '0' && c <= '9'; });
          if (!number && ::if_nametoindex(zone.c_str()) == 0)
            throw catalog_examples::BadOption{"--bind: no network interface named '" + zone +
                                              "' (the zone of " + bind_text + ")"};
        }
        if (log->count() > 0) {
          access_log = log->as<std::string>();
          if (access_log->empty())
            throw catalog_examples::BadOption{"--access-log needs a file"};
        }
        // TLS: both files or neither.
        if (cert->count() != key->count())
          throw catalog_examples::BadOption{"--tls-cert and --tls-key go together"};
        if (cert->count() > 0) {
          tls_cert = cert->as<std::string>();
          tls_key = key->as<std::string>();
        }
        slow_ms = catalog_examples::read_integer(slow_text, "--slow-ms", 86'400'000);
        threads = static_cast<int>(
            catalog_examples::read_integer(threads_text, "--threads", 256, /*min=*/1));
        options = flags.options();
      }))
    return *status;
  // A certificate or key that does not load is a bad command line. A key encrypted with a
  // passphrase is refused: OpenSSL would otherwise ask for the passphrase on the terminal, and a
  // service has none.
  bool encrypted = false;
  std::optional<asio::ssl::context> tls;
  if (tls_cert) {
    tls.emplace(asio::ssl::context::tls_server);
    tls->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                     asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                     asio::ssl::context::no_tlsv1_1 | asio::ssl::context::single_dh_use);
    tls->set_password_callback(
        [&encrypted](std::size_t, asio::ssl::context::password_purpose) {
          encrypted = true;
          return std::string();
        });
    beast::error_code ec;
    tls->use_certificate_chain_file(*tls_cert, ec);
    if (ec) {
      std::cerr << "catalog-serve: --tls-cert: cannot load " << *tls_cert << ": " << ec.message()
                << '\n';
      return 2;
    }
    tls->use_private_key_file(*tls_key, asio::ssl::context::pem, ec);  // must match the cert
    if (ec && encrypted) {
      std::cerr << "catalog-serve: --tls-key: " << *tls_key
                << " is encrypted with a passphrase; give the key unencrypted (openssl pkey -in "
                   "KEY -out PLAIN), readable by the service only\n";
      return 2;
    }
    if (ec) {
      std::cerr << "catalog-serve: --tls-key: cannot use " << *tls_key << ": " << ec.message()
                << '\n';
      return 2;
    }
    // OpenSSL compares a key with the certificate of its own type only: an EC key beside an RSA
    // certificate loads, and every handshake would then fail.
    if (SSL_CTX_check_private_key(tls->native_handle()) != 1) {
      std::cerr << "catalog-serve: --tls-key: " << *tls_key << " is not the private key of "
                << *tls_cert << '\n';
      return 2;
    }
  }
  // An access log that cannot be opened is a bad command line, found before the store opens.
  std::unique_ptr<catalog_examples::AccessLog> opened_log;
  if (access_log) {
    try {
      opened_log = std::make_unique<catalog_examples::AccessLog>(*access_log);
    } catch (const std::exception& e) {
      std::cerr << "catalog-serve: " << e.what() << '\n';
      return 2;
    }
  }
  // What the store says of its own work (a store converted or indexed on open, a map grown,
  // retries; slow operations with --slow-ms) goes to standard error.
  options.store.log = catalog_examples::stderr_log("catalog-serve");
  if (slow_ms > 0) options.store.slow_operation = std::chrono::milliseconds(slow_ms);
  auto store = catalog_examples::open_store(std::move(options));
  if (!store) {
    // Keys, leeway or admin names the store refuses are bad options too.
    if (store.error().kind() == catalog::ErrorKind::bad_request) {
      return catalog_examples::bad_usage("catalog-serve", store.error().message());
    }
    std::cerr << "catalog-serve: cannot open the store: " << store.error().message() << '\n';
    return 1;
  }
  rest::ApiOptions api_options;
  rest::Api api(*store, api_options);
  asio::thread_pool writers(static_cast<std::size_t>(threads));
  Host host{*store, api, api_options.max_body_bytes, {}, std::move(opened_log), writers};

  Threads pool(threads, writers);
  std::optional<Server> server;
  try {
    server.emplace(pool, host, address, port, tls ? &*tls : nullptr);
  } catch (const boost::system::system_error& e) {
    // The error's words alone: what() adds Boost's source location.
    std::cerr << "catalog-serve: cannot listen on " << endpoint_text(tcp::endpoint(address, port))
              << ": " << e.code().message() << '\n';
    return 1;
  }
  std::cout << "listening on " << endpoint_text(server->endpoint()) << std::endl;

  pool.run();
  // The server's signal sets give SIGHUP its default back: ignored again while the store closes.
  server.reset();
  ::signal(SIGHUP, SIG_IGN);
  return 0;
}
