#!/usr/bin/env bash
# The refresh-storm benchmark: starts the packaged daemon, drives the bug report's reload pattern with
# server-everything in docker, every request abandoned `abort` ms after it was sent, and prints what it cost:
# spawns per connection, teardowns by rung, teardown p50/p99, peak and stranded containers, cold spawn time.
# Needs a running Docker engine and `npm ci` in src/test/node.
# Usage: bench/storm.sh [connections=20] [rounds=10] [abort=250] [interval=1000] [--tether.some.setting=value ...]
# (rounds=0: only the teardown ladder under concurrent container creation, without the daemon;
#  pool=10: the storm on the session pool alone, without then with the abandoned-start linger; without-linger=0: with it only)
exec "$(dirname "${BASH_SOURCE[0]}")/run.sh" StormBenchmark "$@"
