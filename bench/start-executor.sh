#!/usr/bin/env bash
# Tether's start beside Executor 1.5.9's, alternated in one run: bin/tether on a kept data dir, `executor web` on a kept
# scope, bin/tether with C1 alone (TETHER_JIT=c1, as bin/executor-sidecar starts it) on a kept data dir, bin/tether on a fresh data dir, `rounds` times; time to the first 200 of GET /api/integrations, CPU until then, idle RSS.
# Needs `npm install --no-save` in src/test/clients (the Executor CLI and its platform binary).
# Usage: bench/start-executor.sh [rounds=5] [settle=5] [c1=true] [fresh=true] [baseline=path/to/an/older/tether.jar[,another.jar]]
# (baseline: each such build on a kept data dir of its own, alternated with the others: a change before and after, in one run)
exec "$(dirname "${BASH_SOURCE[0]}")/run.sh" ExecutorStartBenchmark "$@"
