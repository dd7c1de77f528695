#!/usr/bin/env bash
# The refresh-storm benchmark: starts the packaged daemon, drives the bug report's reload pattern with
# docker stdio servers and prints what it cost. Needs a running Docker engine and `npm ci` in src/test/node.
# Usage: bench/storm.sh [servers=6] [rounds=5] [abort=0.7] [seed=42]
exec "$(dirname "${BASH_SOURCE[0]}")/run.sh" StormBenchmark "$@"
