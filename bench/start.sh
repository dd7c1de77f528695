#!/usr/bin/env bash
# Start time and idle memory of the packaged daemon: plain `java -jar` on Java 17, bin/tether on Java 17, and
# bin/tether as it is (Java 25 and its AOT cache where installed), on a fresh data dir and on one with 5,000
# stored tools (node needed to seed it).
# Usage: bench/start.sh [runs=5] [connections=50] [tools=100] [settle=5] [java17=/usr/lib/jvm/java-17-openjdk-amd64]
exec "$(dirname "${BASH_SOURCE[0]}")/run.sh" StartBenchmark "$@"
