"""An agent on the official Python MCP SDK (mcp 2.3), run against Tether by StatelessMcpTest.

    python mcp_agent.py --url=URL --token=TOKEN --mode=auto|2026-07-28|legacy (--code=JS [--answer=accept|decline] [--content=JSON]
                        | --call=TOOL [--text=TEXT] [--progress])

With --code it lists the tools and runs `execute` with the code; a question the server asks (input_required on
2026-07-28, elicitation/create in the 2025 era) goes to the elicitation callback, which answers --answer (accept by
default) with --content (an object, {} by default). With --call it lists the tools and calls one (echo {text}, or progress {steps: 3, ms: 50} with a progress
callback). One JSON line per step on stdout: connected {version}, tools {names, ttlMs}, asked {params}, progress
{progress}, result {result}. Any failure prints {"step": "failed"} and exits 1; the run is bounded (exit 3).
"""

import argparse
import asyncio
import json
import sys

import httpx2
import mcp_types as types
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


def say(line):
    print(json.dumps(line), flush=True)


async def run(options):
    async def elicit(context, params):
        say({"step": "asked", "params": params.model_dump(mode="json", by_alias=True, exclude_none=True)})
        return types.ElicitResult(action=options.answer, content=json.loads(options.content))

    async def progress(value, total, message):
        say({"step": "progress", "progress": value, "total": total, "message": message})

    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {options.token}"}, timeout=60)
    transport = streamable_http_client(options.url, http_client=http)
    async with Client(transport, mode=options.mode, elicitation_callback=elicit) as client:
        say({"step": "connected", "version": client.protocol_version})
        tools = await client.list_tools()
        listed = tools.model_dump(mode="json", by_alias=True, exclude_none=True)
        say({"step": "tools", "names": [tool.name for tool in tools.tools], "ttlMs": listed.get("ttlMs")})
        if options.code is not None:
            result = await client.call_tool("execute", {"code": options.code})
        elif options.progress:
            result = await client.call_tool(options.call, {"steps": 3, "ms": 50}, progress_callback=progress)
        else:
            result = await client.call_tool(options.call, {"text": options.text})
        say({"step": "result", "result": result.model_dump(mode="json", by_alias=True, exclude_none=True)})


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--mode", default="auto")
    parser.add_argument("--code")
    parser.add_argument("--answer", default="accept")
    parser.add_argument("--content", default="{}")
    parser.add_argument("--call")
    parser.add_argument("--text", default="hi")
    parser.add_argument("--progress", action="store_true")
    options = parser.parse_args()
    try:
        asyncio.run(asyncio.wait_for(run(options), timeout=90))
    except asyncio.TimeoutError:
        say({"step": "failed", "error": "timed out"})
        sys.exit(3)
    except BaseException as error:  # noqa: BLE001 - whatever failed, the test reads why
        say({"step": "failed", "error": repr(error)})
        sys.exit(1)


if __name__ == "__main__":
    main()
