// A line over the import's line limit is refused without the import ever holding much more than
// the limit (a buffer that grows by doubling would reach twice it). The import
// runs in a child process, which reports how far its peak resident size rose; the input is made
// as it is read, so the only large thing in the child is the line being buffered.
#include <catalog/admin.hpp>
#include <catalog/store.hpp>

#include "child_process.hpp"

#include <catch2/catch.hpp>

#include <sys/resource.h>

#include <cstring>
#include <istream>
#include <streambuf>
#include <string>

namespace {

// The format line, then `x` without end: a line longer than any limit, made 64 KiB at a time.
class EndlessLine : public std::streambuf {
 public:
  EndlessLine() : block_(1 << 16, 'x') {
    const std::string header = R"({"format":"catalog-export","version":1})"
                               "\n";
    std::memcpy(block_.data(), header.data(), header.size());
    setg(block_.data(), block_.data(), block_.data() + block_.size());
  }

 protected:
  int_type underflow() override {
    std::memset(block_.data(), 'x', block_.size());
    setg(block_.data(), block_.data(), block_.data() + block_.size());
    return traits_type::to_int_type(block_[0]);
  }

 private:
  std::string block_;
};

long peak_kib() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

}  // namespace

TEST_CASE("a line over the import limit is refused holding at most the limit",
          "[admin][import][hardening]") {
  constexpr std::size_t limit = std::size_t{48} << 20;
  std::vector<int> fds;
  auto child = test::spawn(fds, [&](int fd) {
    auto target = catalog::Store::in_memory().value();
    EndlessLine source;
    std::istream in(&source);
    catalog::admin::ImportOptions options;
    options.max_line_bytes = limit;
    const long before = peak_kib();
    auto refused = catalog::admin::import_store(target, in, options);
    test::say(fd, std::to_string(peak_kib() - before));
    test::say(fd, refused ? std::string("imported") : refused.error().message());
    return 0;
  });
  std::string report;
  for (bool open = true; open;)
    for (auto& line : test::pump(child, open)) report += line + "\n";
  const int status = test::reap(child, fds);
  REQUIRE(WIFEXITED(status));
  const auto newline = report.find('\n');
  REQUIRE(newline != std::string::npos);
  const long rise_kib = std::stol(report.substr(0, newline));
  const std::string message = report.substr(newline + 1);
  INFO("peak rose by " << rise_kib << " KiB; " << message);
  CHECK(message == "line 2: longer than " + std::to_string(limit) + " bytes\n");
  const long limit_kib = static_cast<long>(limit >> 10);
  CHECK(rise_kib >= limit_kib / 2);          // it did buffer the line, up to the limit
  CHECK(rise_kib <= limit_kib + (8 << 10));  // and no more than that, the 1 MiB block and slack
}
