#!/usr/bin/env bash
# Two builds compared on a warm tool call, alternated in one run: tools/call echo through /mcp/tools and
# POST /api/tools/call, 1 and 8 clients, beside GET /api/health; p50, calls/s, the daemon's CPU and heap allocation
# per call (the figures a loaded machine does not move).
# Usage: bench/callpath.sh [jars=<a.jar>,<b.jar>] [rounds=2] [warmup=60] [samples=2000] [seconds=8] [clients=8] [server=everything|fixture]
#        [profiler=<libasyncProfiler.so> profile=cpu,alloc profile-clients=1] (a further /mcp/tools run under async-profiler)
exec "$(dirname "${BASH_SOURCE[0]}")/run.sh" CallPathBenchmark "$@"
