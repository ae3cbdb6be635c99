// catalog-bench: measures the cost model of ARCHITECTURE.md on LMDB and prints one line per
// measurement. Not a test: the numbers are reported (BENCHMARKS.md), never asserted; the program
// exits 0 whenever every operation it runs succeeds, whatever the numbers are.
//
//   catalog-bench [--scale small|full] [--dir <dir>] [--keep] [--only <digits>]
//                 [--store lmdb|postgresql:<conninfo>] [--admin-entities <n>] [--json <file>]
//
//   --scale small  quick sizes, for the ctest smoke run (the default)
//   --scale full   the sizes whose numbers we report
//   --dir <dir>    where the LMDB environments go (created; must not exist, or be empty).
//                  Default: a fresh directory under /tmp, removed at the end.
//   --keep         do not remove the directory at the end
//   --only <digits> run only the measurements named (e.g. --only 14); default all but 7
//   --corpus <file> the Debian corpus of measurement 9 (search against SQLite FTS5); default
//                  ../shared/corpus/debian-packages.jsonl.gz beside the project; 9 is skipped
//                  when it is missing
//   --store lmdb | postgresql:<conninfo>  where the catalogs go (default lmdb). On PostgreSQL
//                  each measurement's catalog is a schema named after it (bench_<name>, dropped
//                  first, and at the end unless --keep), measurement 1 compares with raw libpq
//                  running the same statements (bench_postgres.hpp), `sync` and `no_sync` mean
//                  synchronous_commit on and off, and 3 caps the followers at 1,000 (every
//                  follow renders every follower, each sent by the server). At --scale small
//                  the stores are smaller there (100 followers, 1,000 search indexes and tree
//                  terms), so the ctest smoke run stays short.
//   --admin-entities <n>  the size of measurement 6's larger store (small: 2,000; full:
//                  1,000,000)
//   --search-entities <n>  the glossary terms of measurement 9 (small: 1,000; full: every
//                  package of the corpus, 63,436). More than the corpus holds: every package
//                  and then copies of them with suffixed names (`<name>-s1`, ...), as the
//                  corpus README suggests, e.g. 1000000 for the 1,000,000-entity scale
//   --search-queries <n>  timed queries per class in measurement 9 (small: 30; full: 500)
//   --json <file>  also write every figure the run measured to <file>, as JSON: an object with
//                  "program", "scale", "store", "seconds", "measurements" and "verdicts".
//                  Each measurement has "section" ("1" to "8", or "build"), "name" (as printed),
//                  "mode" (sync, no_sync, read; sync_turns or sync_concurrent for 7 on
//                  PostgreSQL), "n", "statistic" ("median" of n timings, or "mean": total / n),
//                  "median_us" (the figure per operation), "total_us", "baseline" (what it was
//                  compared with: raw LMDB doing the same puts and erases, raw libpq running the
//                  same statements, mdb_dump or mdb_load; else null), "baseline_median_us" and
//                  "ratio" (median_us / baseline_median_us; both null without a baseline),
//                  "detail" (the rest of the printed line), and for 7 "processes",
//                  "ops_per_s", "retries", "retry_rate" and "ran_alone". Each verdict has
//                  "holds" and "claim". The printed report is the same with or without it.
//
// Measurements (each in its own LMDB directory under --dir):
//   1. durable single operations (create a glossary term, patch its description, follow it),
//      median and p90 latency, against a raw LMDB write transaction that reads one key and
//      writes the same bytes, with Durability::sync and again with Durability::no_sync;
//   2. list pages of limit 10 at the start, middle and end of n search indexes of one service
//      (half soft-deleted), for each `include`, and limit=0 totals, at n and n/10;
//   3. follow and vote on an entity with many followers against one with 10;
//   4. recursive soft delete, restore, and hard delete of a glossary tree, at N and N/10 terms:
//      time and memory;
//   7. writers: 1, 2 and 4 processes creating in one collection and following one entity, each
//      with its own Store on the same catalog: throughput and retries (bench_postgres.hpp);
//   5. a list walk over every search index with limit 100: time and memory, at n and n/10;
//   6. catalog-admin's export, import and verify (catalog::admin) of a store of N entities with
//      histories and followers, at N/10 and N: time and memory, against mdb_dump and mdb_load of
//      the same store (lmdb-utils) when they are installed;
//   8. the stored encoding: every entity record of 2's larger store decoded and encoded as the
//      JSON text it is stored as, and as a compact binary form (a prototype, bench_encoding.hpp):
//      bytes and time per record.
//
// Memory: "peak RSS" is the growth of getrusage(RUSAGE_SELF).ru_maxrss over the RSS at the start
// of the measurement, after resetting the high-water mark (writing 5 to /proc/self/clear_refs;
// if the kernel refuses, the delta is against the process's earlier peak and is marked '*').
// RSS counts the pages of LMDB's memory map that a read touched (file-backed page cache,
// reclaimable), so "peak anon" is also shown: the largest anonymous (heap) RSS seen by a thread
// sampling /proc/self/statm every millisecond, minus the anonymous RSS at the start. Heap growth
// is what "memory bounded by the page or batch" is about.

#include <catalog/admin.hpp>
#include <catalog/storage/backend.hpp>
#include <catalog/storage/lmdb_backend.hpp>
#include <catalog/store.hpp>
#ifdef CATALOG_EXAMPLES_POSTGRES
#include <catalog/storage/postgres_backend.hpp>
#endif

#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include <fcntl.h>
#include <lmdb.h>
#include <malloc.h>
#include <sqlite3.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "bench_encoding.hpp"
#include "options.hpp"

using namespace catalog;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// ---------------------------------------------------------------------------------------------
// Failures, timing, formatting

struct BenchFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <class T>
T need(Result<T> r, std::string_view doing) {
  if (!r) throw BenchFailure(std::string(doing) + ": " + r.error().message());
  return std::move(*r);
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// "12.3 us", "4.56 ms", "7.89 s".
std::string human(double s) {
  std::ostringstream o;
  o << std::fixed;
  if (s < 1e-3)
    o << std::setprecision(1) << s * 1e6 << " us";
  else if (s < 1.0)
    o << std::setprecision(2) << s * 1e3 << " ms";
  else
    o << std::setprecision(2) << s << " s";
  return o.str();
}

std::string mib(double bytes) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(1) << bytes / (1024.0 * 1024.0) << " MiB";
  return o.str();
}

std::string fixed(double v, int digits = 2) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(digits) << v;
  return o.str();
}

// The q-quantile (0..1) of `v` (nearest rank on a sorted copy).
double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  auto i = static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}
double median(const std::vector<double>& v) { return quantile(v, 0.5); }

// Every figure the run measured, for --json: each report line, and the figures a line prints as
// a comparison (a list page at n/10, a call on the entity with 10 followers), with the section,
// the durability it ran with, and the raw baseline it was compared with where there is one.
struct Figure {
  std::string section;  // the number of the heading it came under ("1", ..., or "build")
  std::string name;
  std::string mode;  // sync, no_sync, read (no write transaction), ...
  std::int64_t n = 0;
  double total_s = 0, per_op_s = 0;
  bool median = false;   // per_op_s is a median of n timings, else total / n
  std::string baseline;  // what per_op_s was compared with, empty when nothing raw
  std::optional<double> baseline_s;
  std::string detail;  // the rest of the printed line
  // Other numbers of the line, by name.
  std::vector<std::pair<std::string, double>> values;
};
std::vector<Figure> figures;
std::string section_now = "build";  // set by heading()
std::string mode_now;               // set where a section picks its durability

// Records a figure without printing it; returns its index.
std::size_t figure(std::string_view name, std::int64_t n, double total_s, double per_op_s,
                   std::string_view detail = {}) {
  Figure f;
  f.section = section_now;
  f.name = name;
  f.mode = mode_now;
  f.n = n;
  f.total_s = total_s;
  f.per_op_s = per_op_s;
  f.detail = detail;
  figures.push_back(std::move(f));
  return figures.size() - 1;
}

// The figure just recorded is a median (of its n timings).
void as_median() { figures.back().median = true; }

// Figure `i` was compared with `what`, which took `s` (median, or per operation as it is).
void compared_with(std::size_t i, std::string_view what, double s) {
  figures[i].baseline = what;
  figures[i].baseline_s = s;
}

// One report line: name, n, total time, per-op time, and whatever else. Recorded as a figure
// (returns its index).
std::size_t line(std::string_view name, std::int64_t n, double total_s, double per_op_s,
                 std::string_view extra = {}) {
  std::cout << "  " << std::left << std::setw(46) << name << " n=" << std::setw(8) << n << " total "
            << std::right << std::setw(10) << human(total_s) << "  per-op " << std::setw(10)
            << human(per_op_s);
  if (!extra.empty()) std::cout << "  " << extra;
  std::cout << '\n' << std::flush;
  return figure(name, n, total_s, per_op_s, extra);
}

void heading(std::string_view title) {
  std::cout << "\n== " << title << " ==\n" << std::flush;
  // "1. Single operations ..." -> "1"; "build: stores ..." -> "build"
  const auto end = title.find_first_of(".:");
  section_now = std::string(title.substr(0, end));
}

// ---------------------------------------------------------------------------------------------
// Memory

long page_bytes() { return ::sysconf(_SC_PAGESIZE); }

// {resident, anonymous resident} in bytes, from /proc/self/statm (resident - shared = anon).
std::pair<double, double> rss_now() {
  std::ifstream in("/proc/self/statm");
  long size = 0, resident = 0, shared = 0;
  in >> size >> resident >> shared;
  return {static_cast<double>(resident) * page_bytes(),
          static_cast<double>(resident - shared) * page_bytes()};
}

double max_rss_bytes() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) * 1024.0;  // Linux: kilobytes
}

bool reset_peak_rss() {
  std::ofstream out("/proc/self/clear_refs");
  if (!out) return false;
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

// Measures one phase's memory: peak RSS growth (getrusage) and sampled peak anonymous growth.
class MemoryProbe {
 public:
  MemoryProbe() {
    reset_ok_ = reset_peak_rss();
    auto [rss, anon] = rss_now();
    start_rss_ = reset_ok_ ? rss : max_rss_bytes();
    start_anon_ = anon;
    peak_anon_ = anon;
    sampler_ = std::thread([this] {
      while (!stop_.load()) {
        auto a = rss_now().second;
        if (a > peak_anon_.load()) peak_anon_.store(a);
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    });
  }
  ~MemoryProbe() { stop(); }
  MemoryProbe(const MemoryProbe&) = delete;
  MemoryProbe& operator=(const MemoryProbe&) = delete;

  void stop() {
    if (sampler_.joinable()) {
      stop_.store(true);
      sampler_.join();
      auto a = rss_now().second;
      if (a > peak_anon_.load()) peak_anon_.store(a);
      rss_growth_ = std::max(0.0, max_rss_bytes() - start_rss_);
    }
  }
  double rss_growth() {
    stop();
    return rss_growth_;
  }
  double anon_growth() {
    stop();
    return std::max(0.0, peak_anon_.load() - start_anon_);
  }
  std::string text() {
    return "peak RSS +" + mib(rss_growth()) + (reset_ok_ ? "" : "*") + ", peak anon +" +
           mib(anon_growth());
  }

 private:
  bool reset_ok_ = false;
  double start_rss_ = 0, start_anon_ = 0, rss_growth_ = 0;
  std::atomic<double> peak_anon_{0};
  std::atomic<bool> stop_{false};
  std::thread sampler_;
};

// ---------------------------------------------------------------------------------------------
// A Backend that counts what the catalog reads and writes, around the LMDB backend. The bytes a
// catalog operation wrote are the difference of `put_bytes` (key + value of every put) across
// the operation; with `record` on, the size of every put and erase is kept too, so the raw
// baseline can replay the same writes.

struct IoStats {
  std::uint64_t txns = 0, gets = 0, puts = 0, put_bytes = 0, erases = 0, scans = 0;
};

// One storage call of a catalog operation, kept (with `record` on) for the raw libpq baseline to
// replay: a get, a scan of [key, end) (forward or reverse), a put of value, or an erase.
struct StorageCall {
  enum Kind { get, scan, put, erase } kind;
  std::string key;
  std::optional<std::string> end;
  bool reverse = false;
  std::string value;
};

class CountingBackend final : public storage::Backend {
 public:
  explicit CountingBackend(std::unique_ptr<storage::Backend> inner) : inner_(std::move(inner)) {}

  Result<std::unique_ptr<storage::Transaction>> begin(storage::Mode mode) override;
  // The rest as the backend beneath answers: what is timed is the catalog on that backend.
  Result<std::optional<storage::MapStats>> map_stats() const override {
    return inner_->map_stats();
  }
  Result<bool> copy_to(const std::filesystem::path& dir) const override {
    return inner_->copy_to(dir);
  }
  bool grows_when_full() const noexcept override { return inner_->grows_when_full(); }
  bool read_only() const noexcept override { return inner_->read_only(); }
  void make_room(std::uint64_t bytes) override { inner_->make_room(bytes); }

  IoStats stats;
  bool record = false;                                             // keep put and erase sizes
  std::vector<std::pair<std::uint32_t, std::uint32_t>> put_sizes;  // key, value
  std::vector<std::uint32_t> erase_sizes;                          // key
  // With `record` and `record_calls` on. Off unless a baseline replays them: copying every key
  // and value would be timed as the catalog's.
  bool record_calls = false;
  std::vector<StorageCall> calls;
  storage::Backend* inner() const noexcept { return inner_.get(); }

 private:
  std::unique_ptr<storage::Backend> inner_;
};

class CountingTransaction final : public storage::Transaction {
 public:
  CountingTransaction(std::unique_ptr<storage::Transaction> inner, CountingBackend& owner)
      : inner_(std::move(inner)), owner_(owner) {}
  Result<std::optional<std::string>> get(std::string_view key) override {
    count_get(key);
    return inner_->get(key);
  }
  Result<std::optional<std::string_view>> get_view(std::string_view key) override {
    count_get(key);
    return inner_->get_view(key);
  }
  Result<void> get_each(std::span<const std::string_view> keys, const Visit& visit) override {
    for (auto key : keys) count_get(key);
    return inner_->get_each(keys, visit);
  }
  bool views_last() const noexcept override { return inner_->views_last(); }
  Result<void> prefetch(std::span<const std::string_view> keys,
                        std::span<const storage::Range> ranges) override {
    return inner_->prefetch(keys, ranges);
  }
  bool reads_ahead() const noexcept override { return inner_->reads_ahead(); }
  Result<void> put(std::string_view key, std::string_view value) override {
    ++owner_.stats.puts;
    owner_.stats.put_bytes += key.size() + value.size();
    if (owner_.record) {
      owner_.put_sizes.emplace_back(static_cast<std::uint32_t>(key.size()),
                                    static_cast<std::uint32_t>(value.size()));
      if (owner_.record_calls)
        owner_.calls.push_back(
            {StorageCall::put, std::string(key), {}, false, std::string(value)});
    }
    return inner_->put(key, value);
  }
  Result<bool> erase(std::string_view key) override {
    ++owner_.stats.erases;
    if (owner_.record) {
      owner_.erase_sizes.push_back(static_cast<std::uint32_t>(key.size()));
      if (owner_.record_calls)
        owner_.calls.push_back({StorageCall::erase, std::string(key), {}, false, {}});
    }
    return inner_->erase(key);
  }
  // Counted, not recorded (no measurement that records calls erases a range).
  Result<std::uint64_t> erase_range(const storage::Range& range, std::uint64_t limit) override {
    auto erased = inner_->erase_range(range, limit);
    if (erased) owner_.stats.erases += *erased;
    return erased;
  }
  Result<std::unique_ptr<storage::Cursor>> scan(const storage::Range& range,
                                                storage::Direction dir) override {
    ++owner_.stats.scans;
    if (owner_.record && owner_.record_calls)
      owner_.calls.push_back(
          {StorageCall::scan, range.begin, range.end, dir == storage::Direction::reverse, {}});
    return inner_->scan(range, dir);
  }
  Result<void> commit() override { return inner_->commit(); }

 private:
  void count_get(std::string_view key) {
    ++owner_.stats.gets;
    if (owner_.record && owner_.record_calls)
      owner_.calls.push_back({StorageCall::get, std::string(key), {}, false, {}});
  }
  std::unique_ptr<storage::Transaction> inner_;
  CountingBackend& owner_;
};

Result<std::unique_ptr<storage::Transaction>> CountingBackend::begin(storage::Mode mode) {
  auto t = inner_->begin(mode);
  if (!t) return t.error();
  if (mode == storage::Mode::read_write) ++stats.txns;
  return std::unique_ptr<storage::Transaction>(
      std::make_unique<CountingTransaction>(std::move(*t), *this));
}

// Where the catalogs go when not in LMDB: a PostgreSQL database (--store postgresql:<conninfo>),
// one schema per measurement directory, named after it.
struct PostgresTarget {
  std::string conninfo;
  std::set<std::string> made;       // schemas dropped at their first open, and at the end
  bool concurrent_writers = false;  // PostgresOptions::concurrent_writers (measurement 7)
};
std::optional<PostgresTarget> postgres_target;

std::string schema_of(const fs::path& dir) {
  std::string name = "bench_";
  for (char c : dir.filename().string())
    name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return name;
}

// Drops a schema the run made (at the end). Errors are reported, not fatal.
bool need_drop(const std::string& schema) {
#ifdef CATALOG_EXAMPLES_POSTGRES
  if (auto dropped = storage::PostgresBackend::drop_schema(postgres_target->conninfo, schema);
      !dropped) {
    std::cerr << "catalog-bench: cannot drop schema " << schema << ": " << dropped.error().message()
              << '\n';
    return false;
  }
#endif
  return true;
}

// A Store over a counting LMDB (or PostgreSQL) backend. The backend pointer stays valid while the
// store lives.
struct Opened {
  std::optional<Store> store;
  CountingBackend* io = nullptr;
  Principal admin;
};

Opened open_store(const fs::path& dir, storage::Durability durability,
                  std::size_t map_size = std::size_t{64} << 20) {
  std::unique_ptr<storage::Backend> backend;
  if (postgres_target) {
#ifdef CATALOG_EXAMPLES_POSTGRES
    storage::PostgresOptions pg;
    pg.schema = schema_of(dir);
    pg.synchronous_commit = durability == storage::Durability::sync;
    pg.concurrent_writers = postgres_target->concurrent_writers;
    if (postgres_target->made.insert(pg.schema).second && !need_drop(pg.schema))
      throw BenchFailure("cannot start from an empty schema " + pg.schema);
    backend = need(storage::PostgresBackend::open(postgres_target->conninfo, pg),
                   "opening PostgreSQL schema " + pg.schema);
#endif
  } else {
    storage::LmdbOptions lmdb;
    lmdb.durability = durability;
    lmdb.map_size = map_size;
    backend = need(storage::LmdbBackend::open(dir, lmdb), "opening LMDB in " + dir.string());
  }
  auto counting = std::make_unique<CountingBackend>(std::move(backend));
  Opened o;
  o.io = counting.get();
  StoreOptions options;
  options.admins = {"admin"};
  o.store.emplace(need(Store::open(std::move(counting), options), "opening the store"));
  o.admin = need(o.store->principal("admin"), "getting the admin principal");
  return o;
}

// ---------------------------------------------------------------------------------------------
// The raw LMDB baseline: its own environment, one write transaction per operation that reads
// one key (the one the previous operation wrote) and writes bytes.

class RawLmdb {
 public:
  RawLmdb(const fs::path& dir, bool sync) {
    fs::create_directories(dir);
    check(mdb_env_create(&env_), "env_create");
    check(mdb_env_set_mapsize(env_, std::size_t{1} << 32), "set_mapsize");
    check(mdb_env_open(env_, dir.c_str(), MDB_NOTLS | (sync ? 0u : unsigned{MDB_NOSYNC}), 0644),
          "env_open");
    MDB_txn* txn = nullptr;
    check(mdb_txn_begin(env_, nullptr, 0, &txn), "txn_begin");
    check(mdb_dbi_open(txn, nullptr, 0, &dbi_), "dbi_open");
    check(mdb_txn_commit(txn), "commit");
    last_key_ = "seed";
    write({{static_cast<std::uint32_t>(last_key_.size()), 100}});
  }
  ~RawLmdb() { mdb_env_close(env_); }
  RawLmdb(const RawLmdb&) = delete;
  RawLmdb& operator=(const RawLmdb&) = delete;

  // One transaction: get the previous key, put one key/value per entry of `sizes` (keys random
  // bytes after a one-byte family tag, so they spread over the tree like the catalog's id-led
  // keys), erase `erases` keys that earlier transactions put (drawn at random, so they too are
  // spread over the tree, as the postings a patch drops are), commit. Returns the seconds it took.
  double write(const std::vector<std::pair<std::uint32_t, std::uint32_t>>& sizes,
               std::size_t erases = 0) {
    if (pool_.size() < erases) {  // untimed: keys enough to erase
      std::vector<std::pair<std::uint32_t, std::uint32_t>> more(erases - pool_.size(), {40, 16});
      write(more);
    }
    std::vector<std::string> doomed;
    for (std::size_t j = 0; j < erases; ++j) {
      std::swap(pool_[rng_() % pool_.size()], pool_.back());
      doomed.push_back(std::move(pool_.back()));
      pool_.pop_back();
    }
    std::vector<std::string> keys;
    for (std::size_t j = 0; j < sizes.size(); ++j) {
      std::string k(std::max<std::uint32_t>(sizes[j].first, 2), '\0');
      k[0] = static_cast<char>('A' + j % 26);
      for (std::size_t b = 1; b < k.size(); ++b) k[b] = static_cast<char>(rng_() & 0xff);
      keys.push_back(std::move(k));
    }
    if (value_.size() < 1 << 20) value_.assign(1 << 20, 'x');
    auto t0 = Clock::now();
    MDB_txn* txn = nullptr;
    check(mdb_txn_begin(env_, nullptr, 0, &txn), "txn_begin");
    MDB_val k{last_key_.size(), last_key_.data()}, v{};
    int rc = mdb_get(txn, dbi_, &k, &v);
    if (rc == MDB_SUCCESS) {
      volatile char sink = static_cast<const char*>(v.mv_data)[0];  // read the bytes
      (void)sink;
    } else if (rc != MDB_NOTFOUND || !first_) {  // the first write finds nothing
      check(rc, "get");
    }
    first_ = false;
    for (std::size_t j = 0; j < sizes.size(); ++j) {
      MDB_val pk{keys[j].size(), keys[j].data()};
      MDB_val pv{std::min<std::size_t>(sizes[j].second, value_.size()), value_.data()};
      check(mdb_put(txn, dbi_, &pk, &pv, 0), "put");
    }
    for (const auto& key : doomed) {
      MDB_val dk{key.size(), const_cast<char*>(key.data())};
      check(mdb_del(txn, dbi_, &dk, nullptr), "del");
    }
    check(mdb_txn_commit(txn), "commit");
    double s = seconds_since(t0);
    if (!keys.empty()) {  // the next transaction gets the last key: it stays out of the pool
      if (!first_put_) pool_.push_back(std::move(last_key_));
      first_put_ = false;
      last_key_ = std::move(keys.back());
      keys.pop_back();
      for (auto& k : keys) pool_.push_back(std::move(k));
    }
    return s;
  }

  // One transaction writing `bytes` as one value (key of 16 bytes, value `bytes - 16`).
  double write_one(std::uint64_t bytes) {
    auto v = static_cast<std::uint32_t>(bytes > 16 ? bytes - 16 : 1);
    return write({{16u, v}});
  }

 private:
  static void check(int rc, const char* what) {
    if (rc != MDB_SUCCESS)
      throw BenchFailure(std::string("raw LMDB ") + what + ": " + mdb_strerror(rc));
  }
  MDB_env* env_ = nullptr;
  MDB_dbi dbi_ = 0;
  std::string last_key_;
  std::string value_;
  std::vector<std::string> pool_;  // keys put and not erased, but the last
  bool first_ = true;
  bool first_put_ = true;  // last_key_ is the seed, which no put made
  std::mt19937_64 rng_{42};
};

// ---------------------------------------------------------------------------------------------
// Sizes

struct Scale {
  bool full = false;
  int durable_ops = 20;          // per operation kind and durability
  std::int64_t list_n = 2'000;   // search indexes in one service (half soft-deleted)
  int list_reps = 20;            // timed repetitions of each page
  std::int64_t followers = 500;  // followers of the "many" entity
  int social_reps = 10;
  std::int64_t tree_terms = 3'000;
  std::int64_t tree_fanout = 30;        // children per root term
  std::int64_t admin_entities = 2'000;  // catalog-admin's store (and one a tenth of it)
};

Scale scale_of(std::string_view s) {
  Scale sc;
  if (s == "small") return sc;
  if (s != "full") throw BenchFailure("--scale: expected small or full, not " + std::string(s));
  sc.full = true;
  sc.durable_ops = 200;
  sc.list_n = 100'000;
  sc.list_reps = 50;
  sc.followers = 10'000;
  sc.social_reps = 20;
  sc.tree_terms = 100'000;
  sc.tree_fanout = 100;
  sc.admin_entities = 1'000'000;
  return sc;
}

std::string numbered(std::string_view prefix, std::int64_t i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%06lld", static_cast<long long>(i));
  return std::string(prefix) + buf;
}

// Verdicts collected along the way, printed at the end (and written by --json).
struct Verdict {
  bool holds;
  std::string what;
};
std::vector<Verdict> verdicts;
void verdict(bool holds, std::string what) { verdicts.push_back({holds, std::move(what)}); }

// ---------------------------------------------------------------------------------------------
// 1. Durable single operations

struct OpSamples {
  std::vector<double> catalog, raw_one, raw_same;
  std::vector<double> bytes, puts, erases, gets;
};

void print_op(std::string_view name, std::string_view mode, const OpSamples& s) {
  double cm = median(s.catalog), c90 = quantile(s.catalog, 0.9);
  double r1m = median(s.raw_one), r1_90 = quantile(s.raw_one, 0.9);
  double rkm = median(s.raw_same), rk90 = quantile(s.raw_same, 0.9);
  auto total = [](const std::vector<double>& v) {
    double sum = 0;
    for (double d : v) sum += d;
    return sum;
  };
  double sum = total(s.catalog);
  std::string label = std::string(name) + " (" + std::string(mode) + ")";
  const auto op =
      line(label, static_cast<std::int64_t>(s.catalog.size()), sum, cm,
           "p90 " + human(c90) + " | " + fixed(median(s.bytes), 0) + " B in " +
               fixed(median(s.puts), 0) + " puts, " + fixed(median(s.erases), 0) + " erases, " +
               fixed(median(s.gets), 0) + " gets");
  as_median();
  compared_with(op, "raw LMDB: 1 get + the same puts and erases", rkm);
  line("  raw LMDB: 1 get + 1 put of the same bytes", static_cast<std::int64_t>(s.raw_one.size()),
       total(s.raw_one), r1m,
       "p90 " + human(r1_90) + " | ratio median " + fixed(cm / r1m) + "x, p90 " +
           fixed(c90 / r1_90) + "x");
  as_median();
  figures.back().name = label + " raw LMDB: 1 get + 1 put of the same bytes";
  line("  raw LMDB: 1 get + the same puts and erases",
       static_cast<std::int64_t>(s.raw_same.size()),
       total(s.raw_same), rkm,
       "p90 " + human(rk90) + " | ratio median " + fixed(cm / rkm) + "x, p90 " + fixed(c90 / rk90) +
           "x");
  as_median();
  figures.back().name = label + " raw LMDB: 1 get + the same puts and erases";
}

void durable_ops(const fs::path& root, const Scale& sc) {
  heading("1. Single operations vs a raw LMDB transaction writing the same bytes");
  std::cout
      << "  Each catalog op is timed alone; right after it, the raw env runs one write txn\n"
         "  that gets one key and puts (a) one value of the bytes the catalog op put (keys +\n"
         "  values, counted by a Backend wrapper) and (b) the same number of puts with the\n"
         "  same key and value sizes, and as many erases of keys earlier transactions put.\n"
         "  The ratio is catalog / raw.\n";
  for (auto mode : {storage::Durability::sync, storage::Durability::no_sync}) {
    const bool sync = mode == storage::Durability::sync;
    const std::string mode_name = sync ? "sync" : "no_sync";
    mode_now = mode_name;
    auto dir = root / ("ops-" + mode_name);
    auto o = open_store(dir, mode);
    auto& store = *o.store;
    RawLmdb raw_one(root / ("raw1-" + mode_name), sync),
        raw_same(root / ("rawk-" + mode_name), sync);

    CreateUser u;
    u.name = "follower";
    u.email = "follower@example.com";
    auto user = need(store.create<User>(o.admin, u), "creating a user");
    CreateGlossary g;
    g.name = "Ops";
    g.description = "Terms made by the single-operation benchmark";
    need(store.create<Glossary>(o.admin, g), "creating a glossary");

    OpSamples create, patch, follow;
    auto measure = [&](OpSamples& s, bool keep, auto&& op) {
      o.io->put_sizes.clear();
      o.io->erase_sizes.clear();
      o.io->record = true;
      auto before = o.io->stats;
      auto t0 = Clock::now();
      op();
      double t = seconds_since(t0);
      o.io->record = false;
      auto after = o.io->stats;
      double r1 = raw_one.write_one(after.put_bytes - before.put_bytes);
      double rk = raw_same.write(o.io->put_sizes, o.io->erase_sizes.size());
      if (!keep) return;
      s.catalog.push_back(t);
      s.raw_one.push_back(r1);
      s.raw_same.push_back(rk);
      s.bytes.push_back(static_cast<double>(after.put_bytes - before.put_bytes));
      s.puts.push_back(static_cast<double>(after.puts - before.puts));
      s.erases.push_back(static_cast<double>(after.erases - before.erases));
      s.gets.push_back(static_cast<double>(after.gets - before.gets));
    };
    const int warmup = 5;
    for (int i = 0; i < sc.durable_ops + warmup; ++i) {
      const bool keep = i >= warmup;
      GlossaryTerm term;
      measure(create, keep, [&] {
        CreateGlossaryTerm req;
        req.glossary = "Ops";
        req.name = numbered("term-", i);
        req.description = "A term of the single-operation benchmark, number " + std::to_string(i);
        term = need(store.create<GlossaryTerm>(o.admin, req), "creating a term");
      });
      measure(patch, keep, [&] {
        boost::json::object p{{"description", "Patched description " + std::to_string(i)}};
        need(store.patch<GlossaryTerm>(o.admin, term.id, p), "patching a term");
      });
      measure(follow, keep, [&] {
        need(store.follow<GlossaryTerm>(o.admin, term.id, user.id), "following a term");
      });
    }
    print_op("create glossary term", mode_name, create);
    print_op("patch description", mode_name, patch);
    print_op("follow", mode_name, follow);
    if (sync) {
      for (auto [name, s] : {std::pair<const char*, OpSamples*>{"create", &create},
                             {"patch", &patch},
                             {"follow", &follow}}) {
        double r = median(s->catalog) / median(s->raw_one);
        verdict(r <= 1.5, std::string("durable ") + name + " within 1.5x of raw LMDB (median " +
                              fixed(r) + "x vs one put of the same bytes, " +
                              fixed(median(s->catalog) / median(s->raw_same)) +
                              "x vs the same puts and erases)");
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// 2. List pages, and 5. list walks

struct ListStore {
  fs::path dir;
  std::int64_t n = 0;
};

// n search indexes in service "svc", every odd one soft-deleted. Built with no_sync.
ListStore build_list_store(const fs::path& dir, std::int64_t n) {
  mode_now = "no_sync";
  auto o = open_store(dir, storage::Durability::no_sync);
  auto& store = *o.store;
  CreateService s;
  s.name = "svc";
  s.service_type = "ElasticSearch";
  need(store.create<SearchService>(o.admin, s), "creating the search service");
  auto t0 = Clock::now();
  std::vector<Uuid> to_delete;
  for (std::int64_t i = 0; i < n; ++i) {
    CreateSearchIndex req;
    req.name = numbered("idx-", i);
    req.service = "svc";
    req.fields.resize(2);
    req.fields[0].name = "id";
    req.fields[0].data_type = "KEYWORD";
    req.fields[1].name = "body";
    req.fields[1].data_type = "TEXT";
    auto made = need(store.create<SearchIndex>(o.admin, req), "creating a search index");
    if (i % 2 == 1) to_delete.push_back(made.id);
  }
  double created = seconds_since(t0);
  t0 = Clock::now();
  for (const auto& id : to_delete)
    need(store.remove<SearchIndex>(o.admin, id), "soft-deleting a search index");
  double deleted = seconds_since(t0);
  line("build: create search indexes (no_sync)", n, created, created / static_cast<double>(n));
  line("build: soft-delete half (no_sync)", static_cast<std::int64_t>(to_delete.size()), deleted,
       deleted / static_cast<double>(std::max<std::size_t>(to_delete.size(), 1)));
  return {dir, n};
}

const char* include_name(Include i) {
  switch (i) {
  case Include::non_deleted: return "non-deleted";
  case Include::deleted: return "deleted";
  case Include::all: return "all";
  }
  return "?";
}

// The requests of one `include` (and scope): pages of limit 10 at the start, from cursors at the
// middle (after and before) and 10 before the end, and limit 0. The cursors are found by walking
// (untimed) in pages of up to 1000.
struct PagePlan {
  std::vector<std::pair<std::string, ListOptions>> pages;  // name, request
  std::int64_t count = 0;
};

PagePlan plan_pages(Opened& o, Include include, bool scoped) {
  auto& store = *o.store;
  ListOptions base;
  base.include = include;
  if (scoped) base.service = "svc";
  PagePlan plan;
  ListOptions zero = base;
  zero.limit = 0;
  plan.count = need(store.list<SearchIndex>(o.admin, zero), "counting").total;
  const std::int64_t mid = plan.count / 2, end = plan.count - 10;
  std::optional<std::string> mid_cursor, end_cursor;
  ListOptions walk = base;
  std::int64_t done = 0;
  while (done < end) {
    std::int64_t goal = done < mid ? mid : end;
    walk.limit = std::min<std::int64_t>(1000, goal - done);
    auto page = need(store.list<SearchIndex>(o.admin, walk), "walking to a cursor");
    done += static_cast<std::int64_t>(page.data.size());
    if (!page.after) throw BenchFailure("the walk ended early");
    walk.after = page.after;
    if (done == mid) mid_cursor = page.after;
    if (done == end) end_cursor = page.after;
  }
  ListOptions m = base, mb = base, e = base;
  m.after = mid_cursor;
  mb.before = mid_cursor;
  e.after = end_cursor;
  plan.pages = {{"start", base},
                {"middle (after)", m},
                {"middle (before)", mb},
                {"end", e},
                {"limit=0 total", zero}};
  return plan;
}

void list_pages(const ListStore& small, const ListStore& big, const Scale& sc) {
  heading("2. List pages of limit 10 (median of " + std::to_string(sc.list_reps) +
          "), search indexes of one service, half soft-deleted");
  std::cout << "  n/10 = " << small.n << ", n = " << big.n
            << "; 'middle' pages start from a cursor (after, and before), 'end' is the last 10.\n"
               "  The two stores are timed alternately, request by request, so that both see the\n"
               "  same machine.\n";
  auto os = open_store(small.dir, storage::Durability::sync);
  auto ob = open_store(big.dir, storage::Durability::sync);
  mode_now = "read";
  double worst = 0;
  auto once = [](Opened& o, const ListOptions& opt) {
    auto t0 = Clock::now();
    auto page = need(o.store->list<SearchIndex>(o.admin, opt), "listing a page");
    double t = seconds_since(t0);
    if (page.data.size() != static_cast<std::size_t>(opt.limit))
      throw BenchFailure("a page had " + std::to_string(page.data.size()) + " entries, not " +
                         std::to_string(opt.limit));
    return t;
  };
  for (bool scoped : {true, false}) {
    for (auto inc : {Include::non_deleted, Include::deleted, Include::all}) {
      auto pa = plan_pages(os, inc, scoped);
      auto pb = plan_pages(ob, inc, scoped);
      std::string prefix =
          std::string(scoped ? "service=svc " : "no filter   ") + include_name(inc);
      for (std::size_t k = 0; k < pa.pages.size(); ++k) {
        std::vector<double> ta, tb;
        for (int r = 0; r < sc.list_reps; ++r) {
          ta.push_back(once(os, pa.pages[k].second));
          tb.push_back(once(ob, pb.pages[k].second));
        }
        double a = median(ta), b = median(tb);
        worst = std::max(worst, b / a);
        line(prefix + " " + pa.pages[k].first, pb.count, b, b,
             "at n/10 (" + std::to_string(pa.count) + "): " + human(a) + ", ratio " + fixed(b / a) +
                 "x");
        as_median();
        figure(prefix + " " + pa.pages[k].first + " at n/10", pa.count, a, a);
        as_median();
      }
    }
  }
  verdict(worst <= 2.0,
          "list page O(limit + log n) and total O(1): worst page time at n over n/10 " +
              fixed(worst) + "x (flat means near 1x; 10x would be linear)");
}

void list_walk(const ListStore& small, const ListStore& big) {
  heading("5. List walk over every search index (include=all), limit 100");
  double growth[2] = {0, 0};
  int k = 0;
  for (const auto* ls : {&small, &big}) {
    ::malloc_trim(0);
    auto o = open_store(ls->dir, storage::Durability::sync);
    mode_now = "read";
    ListOptions opt;
    opt.include = Include::all;
    opt.limit = 100;
    MemoryProbe probe;
    auto t0 = Clock::now();
    std::int64_t seen = 0, pages = 0;
    while (true) {
      auto page = need(o.store->list<SearchIndex>(o.admin, opt), "walking the list");
      seen += static_cast<std::int64_t>(page.data.size());
      ++pages;
      if (!page.after) break;
      opt.after = page.after;
    }
    double t = seconds_since(t0);
    probe.stop();
    if (seen != ls->n)
      throw BenchFailure("the walk saw " + std::to_string(seen) + " of " + std::to_string(ls->n));
    growth[k++] = probe.anon_growth();
    line("walk " + std::to_string(pages) + " pages of 100", seen, t, t / static_cast<double>(pages),
         probe.text());
  }
  verdict(growth[1] <= growth[0] + 8.0 * 1024 * 1024,
          "list walk memory bounded by the page: peak anon growth " + mib(growth[0]) +
              " at n/10, " + mib(growth[1]) + " at n");
}

// ---------------------------------------------------------------------------------------------
// 8. The stored encoding: JSON text (what is stored) against a compact binary prototype
//    (bench_encoding.hpp), on every entity record of the n store of 2

void stored_encoding(const ListStore& big) {
  heading("8. Stored encoding: every entity record of the n store, JSON text (stored) against a "
          "binary prototype");
  mode_now = "read";
  auto o = open_store(big.dir, storage::Durability::no_sync);
  auto txn = need(o.store->backend().begin(storage::Mode::read_only), "beginning a read");
  std::vector<std::string> texts;
  auto cursor =
      need(txn->scan(storage::prefix_range("E"), storage::Direction::forward), "scanning records");
  while (cursor->valid()) {
    texts.emplace_back(cursor->value());
    if (auto next = cursor->next(); !next)
      throw BenchFailure("scanning records: " + next.error().message());
  }
  cursor.reset();
  txn.reset();
  if (texts.empty()) throw BenchFailure("no entity records");
  // Every record both ways, checked: the binary form decodes to the record the text does, and
  // the text is what encode writes (the canonical form the fast reader takes).
  std::vector<engine::Record> records(texts.size());
  std::vector<std::string> binaries;
  binaries.reserve(texts.size());
  std::size_t text_bytes = 0, binary_bytes = 0, canonical = 0;
  engine::Record back;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    if (auto d = engine::decode(texts[i], records[i]); !d)
      throw BenchFailure("decoding a record: " + d.error().message());
    binaries.push_back(bench_encoding::encode_binary(records[i]));
    if (!bench_encoding::decode_binary(binaries.back(), back) ||
        engine::encode(back) != engine::encode(records[i]))
      throw BenchFailure("the binary prototype does not round-trip a record");
    canonical += engine::encode(records[i]) == texts[i];
    text_bytes += texts[i].size();
    binary_bytes += binaries.back().size();
  }
  const auto n = static_cast<std::int64_t>(texts.size());
  std::cout << "  " << n << " records; JSON text " << text_bytes / texts.size()
            << " B each on average, binary " << binary_bytes / texts.size() << " B ("
            << fixed(100.0 * static_cast<double>(binary_bytes) / static_cast<double>(text_bytes))
            << "%); " << canonical << " of them in the canonical form encode writes.\n"
            << "  Median of 5 passes over every record, per record:\n";
  // Each pass decodes (or encodes) every record once, in key order, into one reused record or
  // string, as Tx::find and Tx::put do.
  auto per_record = [&](auto&& one) {
    std::vector<double> passes;
    for (int pass = 0; pass < 5; ++pass) {
      auto t0 = Clock::now();
      for (std::size_t i = 0; i < texts.size(); ++i) one(i);
      passes.push_back(seconds_since(t0) / static_cast<double>(texts.size()));
    }
    return median(passes);
  };
  engine::Record r;
  std::size_t sink = 0;
  const double decode_text = per_record([&](std::size_t i) {
    if (!engine::decode(texts[i], r)) throw BenchFailure("a record no longer decodes");
    sink += r.stored.size();
  });
  const double decode_binary = per_record([&](std::size_t i) {
    if (!bench_encoding::decode_binary(binaries[i], r)) throw BenchFailure("binary decode");
    sink += r.stored.size();
  });
  const double encode_text =
      per_record([&](std::size_t i) { sink += engine::encode(records[i]).size(); });
  const double encode_binary =
      per_record([&](std::size_t i) { sink += bench_encoding::encode_binary(records[i]).size(); });
  if (sink == 0) throw BenchFailure("nothing was decoded");
  auto report = [&](std::string_view name, double s, double base) {
    auto i = line(name, n, s * static_cast<double>(n), s,
                  "| " + fixed(s / base) + "x the JSON text's time");
    as_median();
    return i;
  };
  report("decode: JSON text (stored; TextReader)", decode_text, decode_text);
  report("decode: binary prototype", decode_binary, decode_text);
  report("encode: JSON text (stored)", encode_text, encode_text);
  report("encode: binary prototype", encode_binary, encode_text);
}

// ---------------------------------------------------------------------------------------------
// 3. Follow and vote

void social(const fs::path& root, const Scale& sc) {
  heading("3. Follow and vote: an entity with " + std::to_string(sc.followers) +
          " followers vs one with 10 (no_sync: CPU cost)");
  mode_now = "no_sync";
  auto o = open_store(root / "social", storage::Durability::no_sync);
  auto& store = *o.store;
  CreateService s;
  s.name = "svc";
  s.service_type = "ElasticSearch";
  need(store.create<SearchService>(o.admin, s), "creating the search service");
  auto index = [&](const std::string& name) {
    CreateSearchIndex req;
    req.name = name;
    req.service = "svc";
    req.fields.resize(1);
    req.fields[0].name = "id";
    req.fields[0].data_type = "KEYWORD";
    return need(store.create<SearchIndex>(o.admin, req), "creating a search index");
  };
  auto many = index("many"), few = index("few");
  const std::int64_t users_needed = sc.followers + 4 * sc.social_reps;
  std::vector<Uuid> users;
  auto t0 = Clock::now();
  for (std::int64_t i = 0; i < users_needed; ++i) {
    CreateUser u;
    u.name = numbered("user-", i);
    u.email = u.name + "@example.com";
    users.push_back(need(store.create<User>(o.admin, u), "creating a user").id);
  }
  line("build: create users (no_sync)", users_needed, seconds_since(t0),
       seconds_since(t0) / static_cast<double>(users_needed));
  t0 = Clock::now();
  for (std::int64_t i = 0; i < sc.followers; ++i)
    need(
        store.follow_json(o.admin, Kind::search_index, many.id, users[static_cast<std::size_t>(i)]),
        "following");
  for (std::int64_t i = 0; i < 10; ++i)
    need(store.follow_json(o.admin, Kind::search_index, few.id, users[static_cast<std::size_t>(i)]),
         "following");
  double built = seconds_since(t0);
  line("build: follows (each renders all followers)", sc.followers + 10, built,
       built / static_cast<double>(sc.followers + 10));

  // Each row: times, and what one call read and wrote (from the counting backend), on the
  // entity with 10 followers ("few") and the one with many.
  struct Side {
    std::vector<double> t, puts, bytes, gets;
  };
  struct Row {
    std::string name;
    Side few, many;
  };
  std::vector<Row> rows;
  auto run = [&](const std::string& name, auto&& op) {
    Row r{name, {}, {}};
    for (int rep = 0; rep < sc.social_reps; ++rep) {
      for (bool on_many : {false, true}) {
        auto before = o.io->stats;
        auto t = Clock::now();
        op(on_many ? many.id : few.id, rep);
        auto& side = on_many ? r.many : r.few;
        side.t.push_back(seconds_since(t));
        auto after = o.io->stats;
        side.puts.push_back(static_cast<double>(after.puts - before.puts));
        side.bytes.push_back(static_cast<double>(after.put_bytes - before.put_bytes));
        side.gets.push_back(static_cast<double>(after.gets - before.gets));
      }
    }
    rows.push_back(std::move(r));
  };
  // A new follower each time; unfollowed again (untimed) so the counts stay put.
  std::size_t next_user = static_cast<std::size_t>(sc.followers);
  run("follow (new follower: write + render)", [&](const Uuid& id, int) {
    need(store.follow<SearchIndex>(o.admin, id, users[next_user++]), "following");
  });
  // Undo the follows above (not timed), keeping 10 and `followers` followers.
  for (std::size_t u = static_cast<std::size_t>(sc.followers); u < next_user; ++u) {
    need(store.unfollow_json(o.admin, Kind::search_index, many.id, users[u]), "unfollowing");
    need(store.unfollow_json(o.admin, Kind::search_index, few.id, users[u]), "unfollowing");
  }
  run("follow again (no write: render only)", [&](const Uuid& id, int) {
    need(store.follow<SearchIndex>(o.admin, id, users[0]), "following again");
  });
  run("vote, alternating up/down (write + render)", [&](const Uuid& id, int rep) {
    need(store.vote<SearchIndex>(o.admin, id, rep % 2 ? VoteType::voted_down : VoteType::voted_up),
         "voting");
  });
  run("follow_json (new follower, no typed result)", [&](const Uuid& id, int) {
    need(store.follow_json(o.admin, Kind::search_index, id, users[next_user++]), "following");
  });
  run("get fields=followers (render only, read txn)", [&](const Uuid& id, int) {
    GetOptions g;
    g.fields = {"followers"};
    need(store.get<SearchIndex>(o.admin, id, g), "reading followers");
  });
  for (const auto& r : rows) {
    double f = median(r.few.t), m = median(r.many.t);
    auto io = [](const Side& s) {
      return fixed(median(s.puts), 0) + " puts/" + fixed(median(s.bytes), 0) + " B, " +
             fixed(median(s.gets), 0) + " gets";
    };
    line(r.name, sc.followers, m * static_cast<double>(r.many.t.size()), m,
         "with 10: " + human(f) + ", ratio " + fixed(m / f) + "x | writes+reads " + io(r.many) +
             " (with 10: " + io(r.few) + ")");
    as_median();
    figure(r.name + " with 10 followers", 10, f * static_cast<double>(r.few.t.size()), f,
           io(r.few));
    as_median();
  }
  // The write is O(1) when a follow or vote puts the same keys and bytes whatever the number of
  // followers; its time is O(followers) because the answer renders every follower.
  bool o1 = true;
  for (std::size_t i : {std::size_t{0}, std::size_t{2}, std::size_t{3}}) {
    const auto& r = rows[i];
    o1 = o1 && median(r.many.puts) == median(r.few.puts) &&
         median(r.many.bytes) <= median(r.few.bytes) + 64;
  }
  verdict(o1, "follow/vote write O(1) in followers: the same puts (" +
                  fixed(median(rows[0].many.puts), 0) + ") and bytes with 10 and " +
                  std::to_string(sc.followers) + " followers; the call's time is O(followers) (" +
                  human(median(rows[0].few.t)) + " vs " + human(median(rows[0].many.t)) +
                  "), all of it rendering the answer (a no-op follow takes " +
                  human(median(rows[1].many.t)) + ")");
}

// ---------------------------------------------------------------------------------------------
// 4. Recursive delete of a glossary tree

struct TreeResult {
  std::int64_t terms = 0;
  double soft_anon = 0, restore_anon = 0, hard_anon = 0;
};

TreeResult tree(const fs::path& dir, std::int64_t terms, std::int64_t fanout) {
  TreeResult res;
  res.terms = terms;
  Uuid glossary_id;
  {
    // Build with no_sync: roots of `fanout` children each (a root is a term too).
    mode_now = "no_sync";
    auto o = open_store(dir, storage::Durability::no_sync);
    auto& store = *o.store;
    CreateGlossary g;
    g.name = "Tree";
    g.description = "A glossary to delete";
    glossary_id = need(store.create<Glossary>(o.admin, g), "creating the glossary").id;
    auto t0 = Clock::now();
    std::int64_t made = 0;
    for (std::int64_t r = 0; made < terms; ++r) {
      CreateGlossaryTerm req;
      req.glossary = "Tree";
      req.name = numbered("root-", r);
      req.description = "A root term";
      need(store.create_json(o.admin, Kind::glossary_term, to_json(req)), "creating a root term");
      ++made;
      for (std::int64_t c = 0; c + 1 < fanout && made < terms; ++c, ++made) {
        CreateGlossaryTerm child;
        child.glossary = "Tree";
        child.parent = "Tree." + req.name;
        child.name = numbered("term-", c);
        child.description = "A child term of " + req.name;
        need(store.create_json(o.admin, Kind::glossary_term, to_json(child)),
             "creating a child term");
      }
    }
    double t = seconds_since(t0);
    line("build: create terms (no_sync)", terms, t, t / static_cast<double>(terms),
         "roots of " + std::to_string(fanout) + " terms");
  }
  // Each measured call runs on a freshly opened environment, with Durability::sync (the options
  // apply when the environment is first opened in the process, and the store before it is
  // closed): LMDB keeps the page buffers a write transaction dirtied for reuse until the
  // environment closes, so a call measured after another would reuse the first one's memory.
  // The map is made big enough up front: a growth would abort and rerun the whole call, which
  // the write transaction count would show.
  std::optional<Opened> o;
  auto timed = [&](const std::string& name, double& anon, auto&& op) {
    o.reset();
    ::malloc_trim(0);
    o.emplace(open_store(dir, storage::Durability::sync, std::size_t{8} << 30));
    mode_now = "sync";
    auto before = o->io->stats;
    MemoryProbe probe;
    auto t0 = Clock::now();
    op(*o);
    double t = seconds_since(t0);
    probe.stop();
    auto after = o->io->stats;
    anon = probe.anon_growth();
    line(name, terms, t, t / static_cast<double>(terms),
         probe.text() + " | " + std::to_string(after.puts - before.puts) + " puts of " +
             mib(static_cast<double>(after.put_bytes - before.put_bytes)) + ", " +
             std::to_string(after.erases - before.erases) + " erases, write txns " +
             std::to_string(after.txns - before.txns));
  };
  DeleteOptions soft;
  soft.recursive = true;
  timed("recursive soft delete (sync, one call)", res.soft_anon, [&](Opened& s) {
    need(s.store->remove_json(s.admin, Kind::glossary, glossary_id, soft),
         "soft-deleting the tree");
  });
  timed("restore (sync, one call)", res.restore_anon, [&](Opened& s) {
    need(s.store->restore_json(s.admin, Kind::glossary, glossary_id), "restoring the tree");
  });
  DeleteOptions hard;
  hard.recursive = true;
  hard.hard_delete = true;
  timed("recursive hard delete (sync, one call)", res.hard_anon, [&](Opened& s) {
    need(s.store->remove_json(s.admin, Kind::glossary, glossary_id, hard),
         "hard-deleting the tree");
  });
  auto& store = *o->store;
  auto& admin = o->admin;
  ListOptions zero;
  zero.limit = 0;
  zero.include = Include::all;
  auto left = need(store.list<GlossaryTerm>(admin, zero), "counting terms").total;
  if (left != 0) throw BenchFailure(std::to_string(left) + " terms survived the hard delete");
  return res;
}

void trees(const fs::path& root, const Scale& sc) {
  heading("4. Recursive delete of a glossary tree in one call, at N/10 and N terms");
  std::cout << "  (the typed remove/restore convert the answer to a struct; the JSON calls are\n"
               "  timed, which return the same document)\n";
  auto a = tree(root / "tree-small", sc.tree_terms / 10, sc.tree_fanout);
  auto b = tree(root / "tree-big", sc.tree_terms, sc.tree_fanout);
  auto check = [&](std::string_view what, double sa, double sb) {
    verdict(sb <= sa * 2 + 16.0 * 1024 * 1024,
            "recursive " + std::string(what) +
                " memory bounded independently of tree size: peak "
                "anon growth " +
                mib(sa) + " at " + std::to_string(a.terms) + " terms, " + mib(sb) + " at " +
                std::to_string(b.terms));
  };
  check("soft delete", a.soft_anon, b.soft_anon);
  check("restore", a.restore_anon, b.restore_anon);
  check("hard delete", a.hard_anon, b.hard_anon);
}

// ---------------------------------------------------------------------------------------------
// 6. catalog-admin: export, import and verify at N/10 and N entities, against mdb_dump and
// mdb_load of the same store

struct AdminStore {
  fs::path dir;
  std::int64_t entities = 0;
};

// n entities: users (1 in 100), glossaries of 1,000 terms each, and terms, each term patched once
// (two versions in its history) and followed by one user (every other one by two). Built with
// no_sync.
// "t000042". (Not numbered(): inlined here, its `std::string + char*` trips GCC 12's -Wrestrict
// false positive at -O3.)
std::string admin_name(char tag, std::int64_t i) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%c%06lld", tag, static_cast<long long>(i));
  return buf;
}

AdminStore build_admin_store(const fs::path& dir, std::int64_t n) {
  mode_now = "no_sync";
  auto o = open_store(dir, storage::Durability::no_sync, std::size_t{1} << 30);
  auto& store = *o.store;
  const auto& admin = o.admin;
  auto t0 = Clock::now();
  const std::int64_t users = std::max<std::int64_t>(10, n / 100);
  std::vector<Uuid> user_ids;
  for (std::int64_t i = 0; i < users; ++i) {
    CreateUser u;
    u.name = admin_name('u', i);
    u.email = u.name + "@example.com";
    user_ids.push_back(need(store.create<User>(admin, u), "creating a user").id);
  }
  std::int64_t made = users + 1;  // and the admin
  std::string glossary;
  const auto progress_every = std::max<std::int64_t>(n / 10, 1);
  for (std::int64_t t = 0, g = 0; made < n; ++t) {
    if (t % 1000 == 0) {
      glossary = admin_name('g', g++);
      CreateGlossary req;
      req.name = glossary;
      req.description = "terms";
      need(store.create<Glossary>(admin, req), "creating a glossary");
      if (++made == n) break;
    }
    const boost::json::value body{
        {"glossary", glossary}, {"name", admin_name('t', t)}, {"description", "d"}};
    const auto id = need(store.create_json(admin, Kind::glossary_term, body), "creating a term")
                        .at("id")
                        .as_string();
    const auto term = *parse_uuid(id);
    need(store.patch_json(admin, Kind::glossary_term, term,
                          boost::json::value{{"description", "e"}}),
         "patching a term");
    need(store.follow_json(admin, Kind::glossary_term, term,
                           user_ids[static_cast<std::size_t>(t % users)]),
         "following a term");
    if (t % 2 == 0)
      need(store.follow_json(admin, Kind::glossary_term, term,
                             user_ids[static_cast<std::size_t>((t * 7 + 1) % users)]),
           "following a term");
    if (++made % progress_every == 0)
      std::cout << "  built " << made << " of " << n << " entities in " << human(seconds_since(t0))
                << '\n'
                << std::flush;
  }
  double t = seconds_since(t0);
  line("build: users, glossaries, terms with 2 versions and 1-2 followers (no_sync)", made, t,
       t / static_cast<double>(made));
  return {dir, made};
}

bool on_path(const char* program) {
  return std::system(("command -v " + std::string(program) + " >/dev/null 2>&1").c_str()) == 0;
}

// A child process's wall time and peak RSS: `argv` run with stdin from `in` and stdout to
// `out` (when not empty), stderr dropped; it must exit 0.
struct ChildRun {
  double seconds = 0;
  double max_rss = 0;
};
ChildRun run_child(const std::vector<std::string>& argv, const fs::path& in, const fs::path& out) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  auto t0 = Clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) throw BenchFailure("fork failed");
  if (pid == 0) {
    if (!in.empty()) ::dup2(::open(in.c_str(), O_RDONLY), 0);
    if (!out.empty()) ::dup2(::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), 1);
    ::dup2(::open("/dev/null", O_WRONLY), 2);  // mdb_load warns of header keys it skips
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  int status = 0;
  rusage usage{};
  ::wait4(pid, &status, 0, &usage);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw BenchFailure(argv[0] + " failed (status " + std::to_string(status) + ")");
  return {seconds_since(t0), static_cast<double>(usage.ru_maxrss) * 1024.0};
}

bool same_files(const fs::path& a, const fs::path& b) {
  std::ifstream x(a, std::ios::binary), y(b, std::ios::binary);
  std::vector<char> bx(1 << 20), by(1 << 20);
  while (x && y) {
    x.read(bx.data(), static_cast<std::streamsize>(bx.size()));
    y.read(by.data(), static_cast<std::streamsize>(by.size()));
    if (x.gcount() != y.gcount() || !std::equal(bx.begin(), bx.begin() + x.gcount(), by.begin()))
      return false;
  }
  return !x && !y;
}

struct AdminResult {
  double export_s = 0, import_s = 0, verify_s = 0;
  double export_anon = 0, import_anon = 0, verify_anon = 0;
};

AdminResult measure_admin(const AdminStore& a, bool load_on_disk) {
  AdminResult r;
  const auto n = a.entities;
  const auto per = [&](double s) { return s / static_cast<double>(n); };
  const auto rate = [&](double s, double bytes) {
    return fixed(static_cast<double>(n) / s, 0) + " entities/s, " + fixed(bytes / s / 1e6, 1) +
           " MB/s";
  };
  const fs::path file = a.dir.string() + "-export.jsonl";
  const fs::path imported = a.dir.string() + "-imported";
  std::uint64_t store_bytes = 0, keys = 0;
  {
    auto s = need(Store::open_lmdb(a.dir), "opening the store");
    auto st = need(admin::stats(s), "stats");
    store_bytes = (st.lmdb->pages_in_use - st.lmdb->free_pages) * st.lmdb->page_size;
    keys = st.keys;
    std::cout << "  store: " << n << " entities, " << st.snapshots << " versions, " << st.edges
              << " edges, " << st.events << " events, " << keys << " keys, " << mib(store_bytes)
              << " of LMDB pages\n";
  }
  double export_bytes = 0;
  std::size_t export_figure = 0, import_figure = 0, unchecked_figure = 0;
  {
    mode_now = "read";
    ::malloc_trim(0);
    auto s = need(Store::open_lmdb(a.dir), "opening the store");
    std::ofstream out(file, std::ios::binary | std::ios::trunc);
    MemoryProbe probe;
    auto t0 = Clock::now();
    auto info = need(admin::export_store(s, out), "exporting");
    out.close();
    r.export_s = seconds_since(t0);
    probe.stop();
    r.export_anon = probe.anon_growth();
    export_bytes = static_cast<double>(info.bytes);
    export_figure =
        line("export (catalog-admin export)", n, r.export_s, per(r.export_s),
             rate(r.export_s, export_bytes) + ", " + mib(export_bytes) + " | " + probe.text());
  }
  {
    ::malloc_trim(0);
    auto s = need(Store::open_lmdb(imported), "opening the import's store");
    std::ifstream in(file, std::ios::binary);
    admin::ImportOptions options;
    options.input_bytes = static_cast<std::uint64_t>(export_bytes);
    mode_now = "sync";
    MemoryProbe probe;
    auto t0 = Clock::now();
    need(admin::import_store(s, in, options), "importing");
    r.import_s = seconds_since(t0);
    probe.stop();
    r.import_anon = probe.anon_growth();
    import_figure = line("import, with its integrity check (one txn)", n, r.import_s,
                         per(r.import_s), rate(r.import_s, export_bytes) + " | " + probe.text());
  }
  double unchecked_s = 0;
  {
    // The same import without its integrity check, as mdb_load loads without one.
    const fs::path unchecked = a.dir.string() + "-unchecked";
    {
      ::malloc_trim(0);
      auto s = need(Store::open_lmdb(unchecked), "opening the import's store");
      std::ifstream in(file, std::ios::binary);
      admin::ImportOptions options;
      options.input_bytes = static_cast<std::uint64_t>(export_bytes);
      options.check = false;
      MemoryProbe probe;
      auto t0 = Clock::now();
      need(admin::import_store(s, in, options), "importing without the check");
      unchecked_s = seconds_since(t0);
      probe.stop();
      unchecked_figure =
          line("import without the check (check = false)", n, unchecked_s, per(unchecked_s),
               rate(unchecked_s, export_bytes) + " | " + probe.text());
    }
    fs::remove_all(unchecked);
  }
  {
    ::malloc_trim(0);
    auto s = need(Store::open_lmdb(imported), "opening the imported store");
    mode_now = "read";
    MemoryProbe probe;
    auto t0 = Clock::now();
    auto problems = need(admin::verify(s), "verifying");
    r.verify_s = seconds_since(t0);
    probe.stop();
    r.verify_anon = probe.anon_growth();
    if (!problems.empty())
      throw BenchFailure("the imported store does not verify: " + problems.front().key + ": " +
                         problems.front().message);
    line("verify (of the imported store)", n, r.verify_s, per(r.verify_s),
         fixed(static_cast<double>(keys) / r.verify_s, 0) + " keys/s | " + probe.text());
    const fs::path again = a.dir.string() + "-again.jsonl";
    {
      std::ofstream out(again, std::ios::binary | std::ios::trunc);
      need(admin::export_store(s, out), "exporting the imported store");
    }
    const bool same = same_files(file, again);
    std::cout << "  export of the imported store: " << (same ? "the same bytes" : "DIFFERENT")
              << '\n';
    if (!same) throw BenchFailure("the export of the imported store differs");
    fs::remove(again);
  }
  fs::remove(file);
  fs::remove_all(imported);
  if (on_path("mdb_dump") && on_path("mdb_load")) {
    const fs::path dump = a.dir.string() + ".mdb_dump";
    const fs::path loaded = a.dir.string() + "-mdb_load";
    mode_now = "read";
    auto d = run_child({"mdb_dump", a.dir.string()}, {}, dump);
    const auto dump_bytes = static_cast<double>(fs::file_size(dump));
    line("baseline: mdb_dump of the same store", n, d.seconds, per(d.seconds),
         rate(d.seconds, dump_bytes) + ", " + mib(dump_bytes) + " | child peak RSS " +
             mib(d.max_rss));
    compared_with(export_figure, "mdb_dump of the same store", per(d.seconds));
    mode_now = "sync";
    // mdb_load commits every 100 keys, each commit synced: on this disk that is most of its
    // time. So it loads into tmpfs (where a sync costs nothing) when there is room, and on disk
    // too at the smaller size only.
    auto load = [&](const fs::path& into, std::string_view where) {
      fs::create_directories(into);
      auto l = run_child({"mdb_load", "-f", dump.string(), into.string()}, {}, {});
      line("baseline: mdb_load of that dump (" + std::string(where) + ")", n, l.seconds,
           per(l.seconds), rate(l.seconds, dump_bytes) + " | child peak RSS " + mib(l.max_rss));
      fs::remove_all(into);
      return l.seconds;
    };
    struct statvfs shm {};
    double load_s = 0;
    if (::statvfs("/dev/shm", &shm) == 0 &&
        static_cast<double>(shm.f_bavail) * static_cast<double>(shm.f_frsize) > 3 * dump_bytes)
      load_s = load("/dev/shm/catalog-bench-mdb_load-" + std::to_string(::getpid()),
                    "into tmpfs: no sync cost");
    if (load_s == 0 || load_on_disk) {
      const auto on_disk = load(loaded, "on disk: a synced commit per 100 keys");
      if (load_s == 0) load_s = on_disk;
    }
    compared_with(import_figure, "mdb_load of that dump", per(load_s));
    compared_with(unchecked_figure, "mdb_load of that dump", per(load_s));
    std::cout << "  ratios: export / mdb_dump " << fixed(r.export_s / d.seconds)
              << "x, import / mdb_load " << fixed(r.import_s / load_s) << "x (without the check "
              << fixed(unchecked_s / load_s) << "x)\n";
    fs::remove(dump);
  } else {
    std::cout << "  (mdb_dump or mdb_load not found, Debian package lmdb-utils: no baseline)\n";
  }
  return r;
}

void admin_tools(const fs::path& root, std::int64_t n) {
  heading(
      "6. catalog-admin export, import and verify at N/10 and N entities, vs mdb_dump/mdb_load");
  std::cout << "  Each entity of the terms has two versions and one or two followers; the export\n"
               "  goes to a file, the import (from it) into a new LMDB directory, verify reads\n"
               "  the imported store. Rates per entity; MB/s of the export file (or the dump).\n";
  AdminResult results[2];
  std::int64_t sizes[2] = {std::max<std::int64_t>(n / 10, 100), n};
  for (int i = 0; i < 2; ++i) {
    std::cout << "  -- " << sizes[i] << " entities\n";
    auto store = build_admin_store(root / ("admin-" + std::to_string(i)), sizes[i]);
    results[i] = measure_admin(store, sizes[i] <= 100'000);
    fs::remove_all(store.dir);
  }
  const double scale = static_cast<double>(sizes[1]) / static_cast<double>(sizes[0]);
  auto linear = [&](std::string_view what, double small, double big) {
    const double ratio = big / small;
    verdict(ratio <= scale * 1.5, std::string(what) +
                                      " time linear in the store: " + fixed(ratio, 1) +
                                      "x the time for " + fixed(scale, 0) + "x the entities");
  };
  linear("export", results[0].export_s, results[1].export_s);
  linear("import", results[0].import_s, results[1].import_s);
  linear("verify", results[0].verify_s, results[1].verify_s);
  auto flat = [&](std::string_view what, double small, double big) {
    verdict(big <= small * 2 + 16.0 * 1024 * 1024,
            std::string(what) + " heap flat: peak anon growth " + mib(small) + " at " +
                std::to_string(sizes[0]) + " entities, " + mib(big) + " at " +
                std::to_string(sizes[1]));
  };
  flat("export", results[0].export_anon, results[1].export_anon);
  flat("import", results[0].import_anon, results[1].import_anon);
  flat("verify", results[0].verify_anon, results[1].verify_anon);
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL's measurement 1, and measurement 7 (writers), in a file of their own.

}  // namespace

#include "bench_postgres.hpp"
#include "bench_search.hpp"

namespace {

// ---------------------------------------------------------------------------------------------
// --json

// The figures and verdicts as one JSON document (--json): an object whose "measurements" is an
// array with one object per figure. Times in microseconds; "median_us" is the figure per
// operation, a median of n timings when "statistic" is "median", else the total over n;
// "baseline_median_us" and "ratio" (median_us / baseline) are null when nothing raw was
// compared.
void write_json(const fs::path& file, std::string_view scale, double seconds) {
  namespace json = boost::json;
  auto number_or_null = [](const std::optional<double>& v) -> json::value {
    if (v) return *v;
    return nullptr;
  };
  std::ofstream out(file, std::ios::trunc);
  if (!out) throw BenchFailure("--json: cannot write " + file.string());
  json::object head;
  head["program"] = "catalog-bench";
  head["scale"] = scale;
  head["store"] = postgres_target ? "postgresql" : "lmdb";
  head["seconds"] = seconds;
  std::string text = json::serialize(head);
  text.pop_back();  // the measurements follow, one a line
  out << text << ",\n\"measurements\": [";
  for (std::size_t i = 0; i < figures.size(); ++i) {
    const auto& f = figures[i];
    json::object m;
    m["section"] = f.section;
    m["name"] = f.name;
    m["mode"] = f.mode;
    m["n"] = f.n;
    m["statistic"] = f.median ? "median" : "mean";
    m["median_us"] = f.per_op_s * 1e6;
    m["total_us"] = f.total_s * 1e6;
    if (f.baseline.empty())
      m["baseline"] = nullptr;
    else
      m["baseline"] = f.baseline;
    m["baseline_median_us"] =
        number_or_null(f.baseline_s ? std::optional<double>(*f.baseline_s * 1e6) : std::nullopt);
    m["ratio"] = number_or_null(f.baseline_s && *f.baseline_s > 0
                                    ? std::optional<double>(f.per_op_s / *f.baseline_s)
                                    : std::nullopt);
    for (const auto& [key, value] : f.values) m[key] = value;
    m["detail"] = f.detail;
    out << (i ? ",\n  " : "\n  ") << json::serialize(m);
  }
  auto verdict_json = [](const Verdict& v) {
    json::object o;
    o["holds"] = v.holds;
    o["claim"] = v.what;
    return o;
  };
  out << "\n],\n\"verdicts\": [";
  for (std::size_t i = 0; i < verdicts.size(); ++i)
    out << (i ? ",\n  " : "\n  ") << json::serialize(verdict_json(verdicts[i]));
  out << "\n]}\n";
  out.close();
  if (!out) throw BenchFailure("--json: cannot write " + file.string());
}

// ---------------------------------------------------------------------------------------------

int run(int argc, char** argv) {
  std::string scale_name = "small";
  std::optional<fs::path> dir_flag;
  bool keep = false;
  std::string only = "12345689";
  fs::path corpus = CATALOG_CORPUS_FILE;
  std::optional<std::int64_t> admin_entities;
  std::optional<fs::path> json_file;
  search_bench::SearchSize search_size;
  std::string store_text = "lmdb";
  std::string admin_entities_text;
  std::string search_entities_text, search_queries_text;
  CLI::App app("Measures the catalog against raw LMDB, SQLite FTS5 and lmdb-utils; see "
               "BENCHMARKS.md.",
               "catalog-bench");
  catalog_examples::add_standard_flags(app);
  app.add_option("--scale", scale_name, "small (the ctest smoke run) or full")->type_name("<scale>");
  std::string dir_text;
  std::string json_text;
  app.add_option("--dir", dir_text, "Where the stores go (new or empty; default a /tmp directory)")
      ->type_name("<dir>");
  app.add_flag("--keep", keep, "Keep the stores afterwards");
  app.add_option("--only", only, "The sections to run, as digits (default 12345689)")
      ->type_name("<digits>");
  app.add_option("--store", store_text, "lmdb (the default) or postgresql:<conninfo>")
      ->type_name("<store>");
  app.add_option("--admin-entities", admin_entities_text,
                 "Entities of the export/import section (at least 100)")
      ->type_name("<n>");
  app.add_option("--search-entities", search_entities_text,
                 "Glossary terms of the search section (copies past the corpus's packages)")
      ->type_name("<n>");
  app.add_option("--search-queries", search_queries_text,
                 "Timed queries per class in the search section")
      ->type_name("<n>");
  app.add_option("--json", json_text, "Also write the figures as JSON to <file>")
      ->type_name("<file>");
  app.add_option("--corpus", corpus, "The Debian package corpus (debian-packages.jsonl.gz)")
      ->type_name("<file>");
  if (auto status = catalog_examples::parse(app, argc, argv, [&] {
        if (!dir_text.empty()) dir_flag = fs::path(dir_text);
        if (!json_text.empty()) json_file = fs::path(json_text);
        if (store_text.starts_with("postgresql:") && store_text.size() > 11) {
#ifndef CATALOG_EXAMPLES_POSTGRES
          throw catalog_examples::BadOption{"--store postgresql: this build has no PostgreSQL "
                                            "support"};
#endif
          postgres_target = PostgresTarget{store_text.substr(11), {}};
        } else if (store_text != "lmdb") {
          throw catalog_examples::BadOption{
              "--store: expected lmdb or postgresql:<conninfo>, not " + store_text};
        }
        if (!admin_entities_text.empty()) {
          const auto v = catalog_examples::read_integer(admin_entities_text, "--admin-entities",
                                                        std::int64_t{1} << 40);
          if (v < 100)
            throw catalog_examples::BadOption{
                "--admin-entities: expected a number of at least 100, not " + admin_entities_text};
          admin_entities = v;
        }
        // 0 (the default) leaves a size to --scale.
        auto positive = [](const std::string& text, const char* flag, std::int64_t max) {
          const auto v = catalog_examples::read_integer(text, flag, max);
          if (v < 1)
            throw catalog_examples::BadOption{std::string(flag) +
                                              ": expected a number of at least 1, not " + text};
          return v;
        };
        if (!search_entities_text.empty())
          search_size.entities = static_cast<std::size_t>(
              positive(search_entities_text, "--search-entities", std::int64_t{100'000'000}));
        if (!search_queries_text.empty())
          search_size.queries = static_cast<int>(
              positive(search_queries_text, "--search-queries", std::int64_t{1'000'000}));
      }))
    return *status;
  Scale sc = scale_of(scale_name);
  // Every follow renders every follower: building 10,000 followers (each follow rendering all
  // before it) reads 50 million records, which PostgreSQL sends over its socket (1,024 a round
  // trip).
  if (postgres_target) sc.followers = std::min<std::int64_t>(sc.followers, 1'000);
  // The small scale is for the ctest smoke run, which on PostgreSQL pays a round trip for most
  // gets: smaller stores there still run every measurement and every verdict.
  if (postgres_target && !sc.full) {
    sc.followers = 100;
    sc.list_n = 1'000;
    sc.tree_terms = 1'000;
  }
  fs::path root;
  bool made_root = false;
  if (dir_flag) {
    root = *dir_flag;
    if (fs::exists(root) && !fs::is_empty(root))
      throw BenchFailure("--dir " + root.string() + " exists and is not empty");
    made_root = !fs::exists(root);
    fs::create_directories(root);
  } else {
    char tmpl[] = "/tmp/catalog-bench-XXXXXX";
    if (!::mkdtemp(tmpl)) throw BenchFailure("cannot create a directory under /tmp");
    root = tmpl;
    made_root = true;
  }
  // Removes what the run made, also when it fails: the directory if we created it, else its
  // contents.
  struct Cleanup {
    fs::path root;
    bool active, whole;
    ~Cleanup() {
      if (!active) return;
      std::error_code ec;
      if (whole) {
        fs::remove_all(root, ec);
        return;
      }
      for (const auto& e : fs::directory_iterator(root, ec)) fs::remove_all(e.path(), ec);
    }
  } cleanup{root, !keep, made_root};

  std::cout << "catalog-bench --scale " << scale_name << " in "
            << (postgres_target ? "PostgreSQL (schemas bench_*), scratch " : "") << root.string()
            << '\n';
  auto t_all = Clock::now();
  auto wanted = [&](char c) { return only.find(c) != std::string::npos; };
#ifdef CATALOG_EXAMPLES_POSTGRES
  if (wanted('1') && postgres_target) durable_ops_postgres(root, sc);
#endif
  if (wanted('1') && !postgres_target) durable_ops(root, sc);
  std::optional<ListStore> small, big;
  if (wanted('2') || wanted('5') || wanted('8')) {
    heading("build: stores for 2 and 5");
    small = build_list_store(root / "list-small", sc.list_n / 10);
    big = build_list_store(root / "list-big", sc.list_n);
  }
  if (wanted('2')) list_pages(*small, *big, sc);
  if (wanted('3')) social(root, sc);
  if (wanted('4')) trees(root, sc);
  if (wanted('5')) list_walk(*small, *big);
  if (wanted('8')) stored_encoding(*big);
  if (wanted('7')) writers(root, sc);
  if (wanted('6')) admin_tools(root, admin_entities.value_or(sc.admin_entities));
  if (search_size.entities == 0) search_size.entities = sc.full ? 0 : 1'000;  // 0: the corpus
  if (search_size.queries == 0) search_size.queries = sc.full ? 500 : 30;
  if (wanted('9')) search_bench::search_section(root, sc, corpus, search_size);

  if (postgres_target && !keep)
    for (const auto& schema : postgres_target->made) (void)need_drop(schema);
  heading("Cost model");
  for (const auto& v : verdicts)
    std::cout << "  " << (v.holds ? "holds        " : "DOES NOT HOLD") << "  " << v.what << '\n';
  std::cout << "\ncatalog-bench done in " << human(seconds_since(t_all)) << '\n';
  if (json_file) write_json(*json_file, scale_name, seconds_since(t_all));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const BenchFailure& f) {
    std::cerr << "catalog-bench failed: " << f.what() << '\n';
  } catch (const std::exception& e) {
    std::cerr << "catalog-bench failed: " << e.what() << '\n';
  }
  return 1;
}
