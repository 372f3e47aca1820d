#!/usr/bin/env bash
# Issue 29's figures in one command (README, "Benchmarks"; docs/benchmarks.md): the build before the issue
# (BEFORE, default bf56a19^, built in a temporary worktree) against this checkout, the builds taking turns:
#   1. SQLite, one process: gateway CPU per non-stream request (bench/cpu-per-request.ts)
#   2. PostgreSQL, one process: the gateway's plus the PostgreSQL server's CPU per request
#   3. PostgreSQL + Redis, two processes (this checkout): both gateways', PostgreSQL's and Redis's CPU per request
#   4. npm run bench: throughput against the bare proxy, added latency p50 / p99, and the rest
# Output: bench/results/money-figures.txt (and npm run bench's own results). About 12 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
BEFORE="${BEFORE:-bf56a19^}"
OUT=bench/results/money-figures.txt
before_dir="$(mktemp -d /tmp/gw-before-XXXXXX)"
cleanup() { git worktree remove --force "$before_dir" >/dev/null 2>&1 || rm -rf "$before_dir"; }
trap cleanup EXIT
git worktree add --detach "$before_dir" "$BEFORE" >/dev/null
ln -s "$PWD/node_modules" "$before_dir/node_modules"
(cd "$before_dir" && ./node_modules/.bin/tsc -p tsconfig.build.json)
./node_modules/.bin/tsc -p tsconfig.build.json
{
  echo "# money figures, $(date -u +'%Y-%m-%d %H:%M UTC'), $(nproc) cores, $(node --version), before = $(git rev-parse --short "$BEFORE"), after = $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (with uncommitted changes)')"
  echo "## 1. SQLite, one process (µs of gateway CPU per request)"
  ROUNDS="${ROUNDS:-4}" N="${N:-15000}" node --import tsx bench/cpu-per-request.ts before="$before_dir/dist" after=dist | grep -v '^{'
  echo "## 2. PostgreSQL, one process (gateway; gateway + PostgreSQL server)"
  DB=postgres ROUNDS="${PG_ROUNDS:-3}" N="${PG_N:-6000}" node --import tsx bench/cpu-per-request.ts before="$before_dir/dist" after=dist | grep -v '^{'
  echo "## 3. PostgreSQL + Redis, two processes, and one SQLite process beside them (this checkout)"
  DB=postgres PROCESSES=2 ROUNDS="${PG_ROUNDS:-3}" N="${PG_N:-6000}" node --import tsx bench/cpu-per-request.ts after-2-processes=dist | grep -v '^{'
  ROUNDS="${PG_ROUNDS:-3}" N="${N:-15000}" node --import tsx bench/cpu-per-request.ts after-sqlite=dist | grep -v '^{'
  echo "## 4. npm run bench"
  npm run bench --silent -- ${BENCH_ARGS:-} 2>&1 | grep -v '^{' | tail -40
} 2>&1 | tee "$OUT"
