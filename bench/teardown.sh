#!/usr/bin/env bash
# Cancel -> container gone, with the default graces, for a docker server that exits on EOF and for one that ignores
# EOF and SIGTERM; beside each, the raw floor of the same container without Tether (EOF by hand, docker rm -f).
# Needs a running Docker engine and `npm ci` in src/test/node. The cancellation matrix asserts that nothing is left;
# this prints how fast. Usage: bench/teardown.sh [rounds=10]
exec "$(dirname "${BASH_SOURCE[0]}")/run.sh" TeardownLatencyBenchmark "$@"
