#!/usr/bin/env bash
# GET /api/tools over a large stored catalog, and the daemon's start time and memory on the embedded store:
# plain stdio fixture servers, no Docker needed (node is).
# Usage: bench/tools-list.sh [connections=50] [tools=100] [samples=300]
exec "$(dirname "${BASH_SOURCE[0]}")/run.sh" ToolsListBenchmark "$@"
