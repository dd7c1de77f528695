#!/usr/bin/env bash
# Tether beside the gateways people pick instead (mcp-proxy and supergateway from npm, pinned in bench/peers), one
# after another in front of the same stdio server (server-everything in `docker run -i --rm` of the test image) and
# measured by the same streamable-HTTP MCP client, one session per worker: calls/s and p50 from 1, 8 and 32 workers
# after a warm-up, each gateway's CPU per call, and its containers left after SIGTERM. Prints the table of issue 27.
# Needs a Docker engine, `npm ci` in src/test/node (the test image) and in bench/peers (the peers).
# Usage: bench/peers.sh [seconds=8] [warmup=10] [clients=1,8,32] [grace=10] [peers=tether,mcp-proxy,supergateway] [rounds=1]
set -euo pipefail
peers="$(dirname "${BASH_SOURCE[0]}")/peers"
[[ -d "$peers/node_modules" ]] || (cd "$peers" && npm ci --ignore-scripts --no-audit --no-fund >/dev/null)
exec "$(dirname "${BASH_SOURCE[0]}")/run.sh" PeersBenchmark "$@"
