#!/usr/bin/env bash
# catalog-admin as its users run it (ctest: catalog_admin_cli), on LMDB stores written by
# admin_test's hidden cases: the exit status and output of every subcommand. verify; reindex; a
# store written before search indexed on open and said on stderr (with priorities when stderr is
# the journal); stats (text
# and --json); export to stdout and to a file; import from a file, a pipe and redirected stdin,
# byte for byte the same export afterwards; import refused (a store not empty, truncated and bad
# input, by line) leaving the store empty; backup while another process writes, then verified;
# events from an offset, and --follow printing what another process commits until SIGINT (exit
# 0); progress lines only on a terminal (through script(1)); usage errors.
#
#   tests/admin/cli_test.sh <catalog-admin> <admin_test> [postgresql:<conninfo>]
#
# With a PostgreSQL store (ctest: catalog_admin_cli_postgres, through tests/postgres/
# with_cluster.sh) it moves a store from LMDB to PostgreSQL and back (export | import), byte for
# byte, and runs the read commands and backup on PostgreSQL, in a schema of its own.

set -euo pipefail

if [[ $# -lt 2 || ! -x $1 || ! -x $2 ]]; then
  echo "usage: $0 <catalog-admin> <admin_test> [postgresql:<conninfo>]" >&2
  exit 2
fi
ADMIN=$1
TEST=$2
PG=${3:-}

TMP=$(mktemp -d)
PIDS=()
RO_MOUNT=""
cleanup() {
  for pid in "${PIDS[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
  [[ -z $RO_MOUNT ]] || umount "$RO_MOUNT" 2>/dev/null || true
  rm -rf "$TMP"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*"
  for f in out err; do
    [[ -f $TMP/$f ]] && { echo "--- $f"; head -c 3000 "$TMP/$f"; echo; }
  done
  exit 1
}
step() { echo "== $*"; }

# run <status> <args...>: catalog-admin with stdout in $TMP/out and stderr in $TMP/err, which
# must exit with <status>.
run() {
  local want=$1 got=0
  shift
  "$ADMIN" "$@" >"$TMP/out" 2>"$TMP/err" || got=$?
  [[ $got == "$want" ]] || fail "catalog-admin $*: exit $got, expected $want"
}
# has <out|err> <text>: the last command's stdout or stderr contains <text>.
has() { grep -qF -- "$2" "$TMP/$1" || fail "the $1 of the last command lacks: $2"; }
lacks() { ! grep -qF -- "$2" "$TMP/$1" || fail "the $1 of the last command has: $2"; }
nothing_on() { [[ ! -s $TMP/$1 ]] || fail "the $1 of the last command is not empty"; }
same() { cmp -s "$1" "$2" || fail "$1 and $2 differ"; }
# wait_for <seconds> <command...>: until the command succeeds.
wait_for() {
  local tries=$(($1 * 10))
  shift
  until "$@"; do
    ((tries-- > 0)) || return 1
    sleep 0.1
  done
}
lines() { wc -l <"$1" | tr -d ' '; }

step "a store of every kind (admin_test [.admin_cli_store])"
CATALOG_ADMIN_STORE=$TMP/src "$TEST" "[.admin_cli_store]" >/dev/null ||
  fail "admin_test could not write the store"
EMPTY_END='{"end":{"entities":0,"snapshots":0,"edges":0,"events":0}}'

if [[ -n $PG ]]; then
  step "LMDB to PostgreSQL: export | import, then back"
  SCHEMA=admin_cli_$$
  run 0 export "lmdb:$TMP/src"
  cp "$TMP/out" "$TMP/dump.jsonl"
  got=0
  "$ADMIN" export "lmdb:$TMP/src" | "$ADMIN" --postgres-schema "$SCHEMA" import "$PG" \
    >"$TMP/out" 2>"$TMP/err" || got=$?
  [[ $got == 0 ]] || fail "export | import into PostgreSQL: exit $got"
  has out "imported 18 entities, 40 snapshots, 20 edges, 57 events into postgresql:"
  run 0 --postgres-schema "$SCHEMA" export "$PG"
  same "$TMP/out" "$TMP/dump.jsonl"
  "$ADMIN" --postgres-schema="$SCHEMA" export "$PG" | "$ADMIN" import "lmdb:$TMP/back" >/dev/null ||
    fail "export from PostgreSQL | import into LMDB"
  run 0 export "lmdb:$TMP/back"
  same "$TMP/out" "$TMP/dump.jsonl"

  step "the read commands on PostgreSQL"
  run 0 verify "$PG" --postgres-schema "$SCHEMA"
  has out ok
  run 0 stats "$PG" --postgres-schema "$SCHEMA"
  has out "entities: 14 live, 4 soft-deleted"
  has out "events: 57"
  lacks out "lmdb"
  run 0 events "$PG" --postgres-schema "$SCHEMA" --after 50
  [[ $(lines "$TMP/out") == 7 ]] || fail "events --after 50 printed $(lines "$TMP/out") lines"
  run 1 import "$PG" "$TMP/dump.jsonl" --postgres-schema "$SCHEMA"
  has err "not empty"

  step "a backup of PostgreSQL into LMDB"
  run 0 --postgres-schema "$SCHEMA" backup "$PG" "$TMP/pg-backup"
  has out "copied key by key"
  has out "the backup opens and verifies clean"
  run 0 export "lmdb:$TMP/pg-backup"
  same "$TMP/out" "$TMP/dump.jsonl"

  step "a refused import leaves PostgreSQL empty"
  head -n 20 "$TMP/dump.jsonl" >"$TMP/truncated.jsonl"
  run 1 --postgres-schema "${SCHEMA}_t" import "$PG" "$TMP/truncated.jsonl"
  has err "the input ends after line 20 without the end line: it is truncated"
  run 0 --postgres-schema "${SCHEMA}_t" export "$PG"
  [[ $(tail -n 1 "$TMP/out") == "$EMPTY_END" ]] || fail "the refused import left something"
  echo "PASS"
  exit 0
fi

step "verify"
run 0 verify "lmdb:$TMP/src"
has out ok
nothing_on err

step "reindex"
run 0 reindex "lmdb:$TMP/src"
has out "search index rebuilt: 18 entities"
nothing_on err
run 0 verify "lmdb:$TMP/src"
has out ok
run 2 reindex
has err "STORE is required"
run 2 reindex "lmdb:$TMP/missing"
has err "no LMDB store in"

step "a store written before search: indexed on open, and catalog-admin says so on stderr"
FIXTURES=$(cd "$(dirname "$0")/../fixtures" && pwd)
"$FIXTURES/lmdb_store.sh" "$FIXTURES/store_schema2.pairs" "$TMP/old" ||
  fail "mdb_load could not write the fixture's store"
run 0 verify "lmdb:$TMP/old"
has out ok
has err "catalog-admin: building the search index (version "
has err "catalog-admin: built the search index: "
grep -q '^catalog-admin: ' "$TMP/err" && ! grep -qv '^catalog-admin: ' "$TMP/err" ||
  fail "a line on stderr does not start with the tool's name: $(cat "$TMP/err")"
run 0 verify "lmdb:$TMP/old"  # once indexed, nothing more to say
has out ok
nothing_on err

step "stderr as systemd's journal (JOURNAL_STREAM names it): each line starts with its priority"
"$FIXTURES/lmdb_store.sh" "$FIXTURES/store_schema2.pairs" "$TMP/old-journal" ||
  fail "mdb_load could not write the fixture's store"
: >"$TMP/err"  # run writes to this file again (same inode): JOURNAL_STREAM names it
export JOURNAL_STREAM
JOURNAL_STREAM=$(stat -c '%d:%i' "$TMP/err")
run 0 verify "lmdb:$TMP/old-journal"
has err "<6>catalog-admin: building the search index (version "
has err "<6>catalog-admin: built the search index: "
# Another stream named (stderr is not the journal's): no priorities.
"$FIXTURES/lmdb_store.sh" "$FIXTURES/store_schema2.pairs" "$TMP/old-other" ||
  fail "mdb_load could not write the fixture's store"
JOURNAL_STREAM=$(stat -c '%d:%i' "$TMP/out")
run 0 verify "lmdb:$TMP/old-other"
has err "catalog-admin: building the search index (version "
lacks err "<6>"
unset JOURNAL_STREAM

step "stats"
run 0 stats "lmdb:$TMP/src"
has out "entities: 14 live, 4 soft-deleted"
has out "versions: 40 snapshots"
has out "edges: 20"
has out "events: 57"
has out " bytes of keys and values ("  # how many counter keys depends on the ids
has out "lmdb map size: 67,108,864 bytes"
has out "  Y search documents              17 keys"
lacks out " unknown "
has out "free pages: "
has out "lmdb readers: 0 active"
# Output that cannot be written is a failure, not a success with the output lost.
got=0
"$ADMIN" stats "lmdb:$TMP/src" >/dev/full 2>"$TMP/err" || got=$?
[[ $got == 2 ]] || fail "stats to a full device: exit $got, not 2"
has err "cannot write to standard output"
run 0 stats --json "lmdb:$TMP/src"
has out '{"entities":{"live":14,"deleted":4,"kinds":{"user":{"live":2,"deleted":1},'
has out '"glossaryTerm":{"live":5,"deleted":0}'
has out '"edges":{"total":20,"relations":{"owns":2,"follows":2,"votes":2,'
has out '"lmdb":{"mapSize":67108864,"pageSize":'
has out '"search documents":{"tag":"Y","keys":17,'
lacks out '"unknown'

step "export"
run 0 export "lmdb:$TMP/src"
nothing_on err  # stderr is not a terminal: no progress
cp "$TMP/out" "$TMP/dump.jsonl"
[[ $(head -n 1 "$TMP/dump.jsonl") == '{"format":"catalog-export","version":1}' ]] ||
  fail "the export does not start with its format line"
[[ $(tail -n 1 "$TMP/dump.jsonl") == '{"end":{"entities":18,"snapshots":40,"edges":20,"events":57}}' ]] ||
  fail "the export does not end with its counts"
[[ $(lines "$TMP/dump.jsonl") == $((1 + 18 + 40 + 20 + 57 + 1)) ]] || fail "lines of the export"
run 0 export "lmdb:$TMP/src" "$TMP/file.jsonl"
nothing_on out
nothing_on err
same "$TMP/file.jsonl" "$TMP/dump.jsonl"
# `-` is standard output, as when FILE is left out (no file named -).
(cd "$TMP" && "$ADMIN" export "lmdb:$TMP/src" - >"$TMP/out" 2>"$TMP/err") || fail "export to -"
same "$TMP/out" "$TMP/dump.jsonl"
[[ ! -e $TMP/- ]] || fail "export to - wrote a file named -"

step "import: from a file, a pipe, redirected stdin; the same export after each"
run 0 import "lmdb:$TMP/a" "$TMP/dump.jsonl"
has out "imported 18 entities, 40 snapshots, 20 edges, 57 events into lmdb:$TMP/a"
nothing_on err
run 0 export "lmdb:$TMP/a"
same "$TMP/out" "$TMP/dump.jsonl"
got=0
cat "$TMP/dump.jsonl" | "$ADMIN" import "lmdb:$TMP/b" >"$TMP/out" 2>"$TMP/err" || got=$?
[[ $got == 0 ]] || fail "import from a pipe: exit $got"
has out "imported 18 entities"
"$ADMIN" import "lmdb:$TMP/c" <"$TMP/dump.jsonl" >"$TMP/out" 2>"$TMP/err" || fail "import < file"
# `-` is standard input, as when FILE is left out.
"$ADMIN" import "lmdb:$TMP/dash" - <"$TMP/dump.jsonl" >"$TMP/out" 2>"$TMP/err" || fail "import -"
has out "imported 18 entities"
for store in b c dash; do
  run 0 export "lmdb:$TMP/$store"
  same "$TMP/out" "$TMP/dump.jsonl"
  run 0 verify "lmdb:$TMP/$store"
done

step "import refused: nothing imported"
mkdir -p "$TMP/spool"
# An empty pipe is an empty input (exit 1), and the pipe's copy is never left behind.
got=0
printf '' | TMPDIR="$TMP/spool" "$ADMIN" import "lmdb:$TMP/e" >"$TMP/out" 2>"$TMP/err" || got=$?
[[ $got == 1 ]] || fail "import from an empty pipe: exit $got, not 1: $(cat "$TMP/err")"
has err "the input is empty: not a catalog export"
[[ -z $(ls -A "$TMP/spool") ]] || fail "the copy of stdin was left in \$TMPDIR"
# While a pipe is being copied, its copy is already unlinked: an import killed then leaves none.
(head -c 4096 "$TMP/dump.jsonl"; sleep 3) |
  TMPDIR="$TMP/spool" "$ADMIN" import "lmdb:$TMP/k" >/dev/null 2>&1 &
spooling=$!
sleep 1
[[ -z $(ls -A "$TMP/spool") ]] || fail "the copy of stdin is visible in \$TMPDIR while it is made"
kill -TERM "$spooling" 2>/dev/null || true
wait "$spooling" 2>/dev/null || true
[[ -z $(ls -A "$TMP/spool") ]] || fail "a killed import left the copy of stdin in \$TMPDIR"
run 1 import "lmdb:$TMP/a" "$TMP/dump.jsonl"
has err "import refused, nothing imported: the store is not empty"
head -n 10 "$TMP/dump.jsonl" >"$TMP/truncated.jsonl"
run 1 import "lmdb:$TMP/t" "$TMP/truncated.jsonl"
has err "the input ends after line 10 without the end line: it is truncated"
sed '5s/.*/{"entity":/' "$TMP/dump.jsonl" >"$TMP/bad.jsonl"
run 1 import "lmdb:$TMP/t" "$TMP/bad.jsonl"
has err "line 5: not JSON"
sed '1s/.*/{"format":"catalog-export","version":2}/' "$TMP/dump.jsonl" >"$TMP/newer.jsonl"
run 1 import "lmdb:$TMP/t" "$TMP/newer.jsonl"
has err "line 1: format version 2 is newer than this library reads (1)"
run 0 export "lmdb:$TMP/t"
[[ $(tail -n 1 "$TMP/out") == "$EMPTY_END" ]] || fail "a refused import left something"
run 0 import "lmdb:$TMP/t" "$TMP/dump.jsonl"  # still empty: it takes the whole export
run 2 import "lmdb:$TMP/u" "$TMP/missing.jsonl"
has err "cannot read $TMP/missing.jsonl"
[[ ! -e $TMP/u ]] || fail "an import whose input cannot be read made the store directory"
run 2 import "lmdb:$TMP/u" "$TMP"
has err "cannot read $TMP: it is a directory"
[[ ! -e $TMP/u ]] || fail "an import of a directory made the store directory"

step "progress: on a terminal only"
if command -v script >/dev/null; then
  script -qec "'$ADMIN' export 'lmdb:$TMP/src' '$TMP/tty.jsonl'" /dev/null >"$TMP/out" 2>&1 ||
    fail "export on a terminal"
  has out "export: 18 entities, 100%"
  has out "done in 0:0"
  same "$TMP/tty.jsonl" "$TMP/dump.jsonl"
  script -qec "'$ADMIN' import 'lmdb:$TMP/tty' '$TMP/tty.jsonl'" /dev/null >"$TMP/out" 2>&1 ||
    fail "import on a terminal"
  has out "import: 18 entities, 100%"
  has out "check: 18 entities"
  has out "imported 18 entities"
  script -qec "'$ADMIN' verify 'lmdb:$TMP/tty'" /dev/null >"$TMP/out" 2>&1 || fail "verify"
  has out "verify: 18 entities, 100%"
else
  echo "   (script(1) is not installed: the terminal half is not checked)"
fi

step "backup while another process writes"
CATALOG_ADMIN_STORE=$TMP/src CATALOG_ADMIN_READY=$TMP/ready CATALOG_ADMIN_STOP=$TMP/stop \
  CATALOG_ADMIN_COUNT=20 "$TEST" "[.admin_writer]" >"$TMP/writer.out" 2>&1 &
WRITER=$!
PIDS+=("$WRITER")
wait_for 120 test -e "$TMP/ready" || fail "the writer did not start"
run 0 backup "lmdb:$TMP/src" "$TMP/backup"
has out "backup of lmdb:$TMP/src written to $TMP/backup: "
has out "(LMDB's compacting copy)"
has out "the backup opens and verifies clean"
# The copy is its owner's alone, the check's lock.mdb included.
[[ $(stat -c %a "$TMP/backup") == 700 ]] || fail "the backup's directory has mode $(stat -c %a "$TMP/backup")"
for file in data.mdb lock.mdb; do
  [[ $(stat -c %a "$TMP/backup/$file") == 600 ]] ||
    fail "the backup's $file has mode $(stat -c %a "$TMP/backup/$file")"
done
# Checking the copy, and reading it later, leave it the compact copy LMDB wrote: a map of the
# default size (64 MiB) would grow it and reserve the blocks on disk.
backup_bytes=$(stat -c %s "$TMP/backup/data.mdb")
((backup_bytes < 8 * 1024 * 1024)) || fail "the backup's data.mdb has $backup_bytes bytes"
for command in verify stats export events; do
  run 0 "$command" "lmdb:$TMP/backup"
  [[ $(stat -c %s "$TMP/backup/data.mdb") == "$backup_bytes" ]] ||
    fail "$command grew the backup's data.mdb from $backup_bytes to $(stat -c %s "$TMP/backup/data.mdb") bytes"
done
touch "$TMP/stop"
wait "$WRITER" || fail "the writer failed: $(cat "$TMP/writer.out")"
run 0 verify "lmdb:$TMP/backup"
glossaries() { # the live glossaries of a store, from stats --json
  "$ADMIN" stats --json "lmdb:$1" | sed -n 's/.*"glossary":{"live":\([0-9]*\),.*/\1/p'
}
in_backup=$(glossaries "$TMP/backup")
now=$(glossaries "$TMP/src")
((in_backup >= 21 && in_backup <= now)) || fail "glossaries: $in_backup in the backup, $now now"
run 2 backup "lmdb:$TMP/src" "$TMP/backup"
has err "is not empty: a backup goes into a new or empty directory"
# DEST written as a store: lmdb:DIR is DIR; a PostgreSQL DEST is a usage error.
run 0 backup "lmdb:$TMP/src" "lmdb:$TMP/backup2"
[[ -f $TMP/backup2/data.mdb && ! -e "$TMP/lmdb:$TMP/backup2" ]] || fail "backup to lmdb:DIR did not write DIR"
run 0 verify "lmdb:$TMP/backup2"
run 2 backup "lmdb:$TMP/src" "postgresql:dbname=x"
has err "backup writes an LMDB directory"

step "an empty data.mdb (a truncated copy) is corrupt, and stays empty"
mkdir "$TMP/truncated"
: >"$TMP/truncated/data.mdb"
for command in verify stats export events reindex; do
  run 3 "$command" "lmdb:$TMP/truncated"
  has err "the store is corrupt: $TMP/truncated/data.mdb is empty"
  [[ ! -s $TMP/truncated/data.mdb ]] || fail "$command wrote to the empty data.mdb"
done
run 2 backup "lmdb:$TMP/src"
has err "DEST is required"

step "a store on read-only media: the commands that read open it read-only, and write nothing"
# A read-only bind mount of a store: possible as root with CAP_SYS_ADMIN (CI's machine), else
# skipped, saying so.
mkdir "$TMP/ro"
if mount --bind "$TMP/a" "$TMP/ro" 2>/dev/null; then
  RO_MOUNT=$TMP/ro
  if mount -o remount,bind,ro "$TMP/ro" 2>/dev/null; then
    before=$(md5sum <"$TMP/a/data.mdb")
    run 0 export "lmdb:$TMP/a" "$TMP/a.jsonl"
    run 0 verify "lmdb:$TMP/ro"
    has out ok
    has err "catalog-admin: the store cannot be written ($TMP/ro: Read-only file system): it is opened read-only"
    run 0 export "lmdb:$TMP/ro" "$TMP/ro.jsonl"
    same "$TMP/a.jsonl" "$TMP/ro.jsonl"
    run 0 stats "lmdb:$TMP/ro"
    has out "events: 57"
    run 0 events "lmdb:$TMP/ro" --after 55
    [[ $(lines "$TMP/out") == 2 ]] || fail "events --after 55 printed $(lines "$TMP/out") lines"
    run 0 backup "lmdb:$TMP/ro" "$TMP/ro-backup"
    has out "the backup opens and verifies clean"
    # A command that writes says why it cannot.
    run 2 reindex "lmdb:$TMP/ro"
    has err "Read-only file system"
    [[ $(md5sum <"$TMP/a/data.mdb") == "$before" ]] || fail "a read-only open changed data.mdb"
  else
    echo "  skipped: the bind mount cannot be made read-only here"
  fi
  umount "$TMP/ro"
  RO_MOUNT=""
else
  echo "  skipped: this machine does not let the test mount (it needs root and CAP_SYS_ADMIN)"
fi

step "events"
run 0 events "lmdb:$TMP/a"
[[ $(lines "$TMP/out") == 57 ]] || fail "events printed $(lines "$TMP/out") lines, not 57"
[[ $(head -n 1 "$TMP/out") == *'"eventType":"entityCreated"'*',"offset":1}' ]] ||
  fail "the first event: $(head -n 1 "$TMP/out")"
run 0 events "lmdb:$TMP/a" --after 55
[[ $(lines "$TMP/out") == 2 ]] || fail "events --after 55 printed $(lines "$TMP/out") lines"
has out ',"offset":57}'
run 0 events "lmdb:$TMP/a" --after=57
nothing_on out
run 2 events "lmdb:$TMP/a" --after x
has err "--after: x is not an integer"
run 2 events "lmdb:$TMP/a" --after -1
has err "--after: -1 is not an integer from 0"
[[ $(lines "$TMP/err") == 1 ]] || fail "events --after -1 printed $(lines "$TMP/err") lines on stderr"

step "events --follow: what another process commits, until SIGINT"
"$ADMIN" events "lmdb:$TMP/a" --after 57 --follow >"$TMP/follow.out" 2>"$TMP/follow.err" &
FOLLOW=$!
PIDS+=("$FOLLOW")
CATALOG_ADMIN_STORE=$TMP/a CATALOG_ADMIN_COUNT=3 CATALOG_ADMIN_PREFIX=f "$TEST" "[.admin_writer]" \
  >/dev/null || fail "the writer failed"
has_three() { [[ $(lines "$TMP/follow.out") -ge 3 ]]; }
wait_for 60 has_three || fail "events --follow printed $(lines "$TMP/follow.out") of 3 events"
kill -INT "$FOLLOW"
status=0
wait "$FOLLOW" || status=$?
[[ $status == 0 ]] || fail "events --follow ended with status $status on SIGINT"
[[ $(lines "$TMP/follow.out") == 3 ]] || fail "events --follow printed more than the 3 events"
for i in 0 1 2; do
  line=$(sed -n "$((i + 1))p" "$TMP/follow.out")
  [[ $line == *'"entityFullyQualifiedName":"f'$i'"'*',"offset":'$((58 + i))'}' ]] ||
    fail "followed event $i: $line"
done
[[ ! -s $TMP/follow.err ]] || fail "events --follow wrote to stderr: $(cat "$TMP/follow.err")"

step "usage"
run 2
[[ $(cat "$TMP/err") == "catalog-admin: a command is needed: verify, backup, export, import, stats, reindex, events (run catalog-admin --help for the usage)" ]] ||
  fail "catalog-admin alone said: $(cat "$TMP/err")"
nothing_on out
run 0 --help
has out "events "
has out "Exit status: 0 done"
run 0 events --help
has out "Usage: catalog-admin events [OPTIONS] STORE"
has out "--after N"
has out "--follow"
run 0 --version
[[ $(cat "$TMP/out") =~ ^catalog-admin\ [0-9]+\.[0-9]+\.[0-9]+$ ]] ||
  fail "catalog-admin --version printed: $(cat "$TMP/out")"
run 2 frobnicate
has err "unknown command frobnicate"
run 2 --bogus
has err "catalog-admin: unknown option --bogus"
has err "(run catalog-admin --help for the usage)"
run 2 verify --bogus
has err "unknown option --bogus"
run 2 verify "lmdb:$TMP/a" --follow  # an option of another command
has err "unknown option --follow"
run 2 stats "lmdb:$TMP/a" --json=no --bogus=1
has err "unknown option --bogus"
run 2 export
has err "STORE is required"
has err "(run catalog-admin --help for the usage)"
run 2 export "lmdb:$TMP/a" one two
has err "catalog-admin: unexpected argument two (run catalog-admin --help for the usage)"
run 2 stats --json=yes "lmdb:$TMP/a"
has err "json was given a disallowed flag override"
run 2 stats memory
has err "in-memory store starts empty"
run 2 verify "lmdb:$TMP/missing"
has err "no LMDB store in"
[[ ! -e $TMP/missing ]] || fail "verify created $TMP/missing"
run 2 events "lmdb:$TMP/a" extra
has err "catalog-admin: unexpected argument extra (run"
run 2 --postgres-schema
has err "--postgres-schema: 1 required NAME missing"
run 2 --postgres-schema "" stats "lmdb:$TMP/a"
has err "--postgres-schema needs a schema name"

echo "PASS"
