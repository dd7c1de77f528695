#!/usr/bin/env bash
# Runs one benchmark main from the test sources against the packaged daemon, which it builds first.
# Usage: bench/run.sh <Benchmark class in dev.tether.bench> [name=value ...]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
main="$1"
shift
./mvnw -q -B -DskipTests package
./mvnw -q -B dependency:build-classpath -Dmdep.includeScope=test -Dmdep.outputFile=target/bench.classpath
export TESTCONTAINERS_RYUK_DISABLED=true TESTCONTAINERS_HOST_OVERRIDE=localhost
exec java -cp "target/test-classes:target/classes:$(cat target/bench.classpath)" "dev.tether.bench.$main" "$@"
