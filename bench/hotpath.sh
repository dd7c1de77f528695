#!/usr/bin/env bash
# The hot path against the raw limit, in one run: server-everything in `docker run -i --rm`, reached through the
# packaged daemon over keep-alive HTTP and directly over its stdio. Warm health checks, tool calls from 1, 8 and
# 32 clients on one connection, GET /api/tools over a large stored catalog (plain node fixture servers).
# Usage: bench/hotpath.sh [samples=500] [seconds=5] [warmup=30] [connections=50] [tools=100] [figures=health,calls,tools]
exec "$(dirname "${BASH_SOURCE[0]}")/run.sh" HotPathBenchmark "$@"
