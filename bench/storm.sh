#!/usr/bin/env bash
# The refresh-storm benchmark: starts the packaged daemon, drives the bug report's reload pattern with
# docker stdio servers and prints what it cost. Needs a running Docker engine and `npm ci` in src/test/node.
# Usage: bench/storm.sh [servers=6] [rounds=5] [abort=0.7] [seed=42]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
./mvnw -q -B -DskipTests package
./mvnw -q -B dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=target/bench.classpath
export TESTCONTAINERS_RYUK_DISABLED=true TESTCONTAINERS_HOST_OVERRIDE=localhost
exec java -cp "target/test-classes:target/classes:$(cat target/bench.classpath)" dev.tether.bench.StormBenchmark "$@"
