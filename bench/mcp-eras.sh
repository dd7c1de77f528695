#!/usr/bin/env bash
# tools/call through /mcp/tools in both MCP eras (2025-11-25 sessions, 2026-07-28 stateless) from 1 and 8 clients,
# beside POST /api/tools/call in the same run, on the plain node fixture server (no Docker needed).
# Usage: bench/mcp-eras.sh [seconds=5] [warmup=20]
exec "$(dirname "${BASH_SOURCE[0]}")/run.sh" McpErasBenchmark "$@"
