// An agent built on the official TypeScript MCP SDK, run against Tether by McpClientsTest.
//
//   node mcp-agent.mjs --transport=streamable|sse --url=URL --token=TOKEN --prefix=tools.<slug>.org.default.
//
// It speaks through StreamableHTTPClientTransport (URL .../mcp) or SSEClientTransport (URL .../sse), and prints
// one JSON line per step on stdout: initialized, tools, echo, progress, cancelled (a streamed call), then
// {"step":"waiting-for-list-changed"}, after which the test changes a catalog and the agent prints
// {"step":"list-changed"} when the notification arrives on its stream. Any failure prints {"step":"failed"}
// and exits 1; the whole run is bounded (exit 3).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const args = Object.fromEntries(process.argv.slice(2).map((arg) => {
  const m = /^--([a-z-]+)=(.*)$/.exec(arg);
  if (!m) throw new Error(`unknown argument ${arg}`);
  return [m[1], m[2]];
}));
const print = (line) => process.stdout.write(JSON.stringify(line) + '\n');
const bound = setTimeout(() => { print({ step: 'failed', error: 'timed out' }); process.exit(3); }, 90_000);

const url = new URL(args.url);
const requestInit = { headers: { Authorization: `Bearer ${args.token}` } };
const transport = args.transport === 'sse'
  ? new SSEClientTransport(url, { requestInit })
  : new StreamableHTTPClientTransport(url, { requestInit });
const client = new Client({ name: 'tether-test-agent', version: '1.0.0' });

let listChanged;
const listChangedArrived = new Promise((resolve) => { listChanged = resolve; });
client.setNotificationHandler(ToolListChangedNotificationSchema, () => listChanged());

// What reached the transport, before the SDK's own dispatch: the SDK hands notifications to their handlers a
// microtask late but answers synchronously, so a last progress read in one chunk with its answer never reaches
// `onprogress` (typescript-sdk#2580). The wire shows what Tether sent; `onprogress` what the SDK delivered.
const wire = [];
const tapWire = () => {
  const dispatch = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if (message.method === 'notifications/progress') wire.push({ progress: message.params.progress });
    else if (message.id !== undefined && ('result' in message || 'error' in message)) wire.push({ answer: message.id });
    dispatch(message, extra);
  };
};

try {
  await client.connect(transport);
  tapWire();
  print({ step: 'initialized', server: client.getServerVersion().name, capabilities: client.getServerCapabilities() });

  const { tools } = await client.listTools();
  print({ step: 'tools', names: tools.map((tool) => tool.name) });

  const echoed = await client.callTool({ name: args.prefix + 'echo', arguments: { text: 'hello from the TypeScript SDK' } });
  print({ step: 'echo', text: echoed.content[0].text });

  const progress = [];
  wire.length = 0;
  const done = await client.callTool({ name: args.prefix + 'progress', arguments: { steps: 3, ms: 200 } }, undefined,
    { onprogress: (p) => progress.push(p) });
  print({ step: 'progress', progress, wire: [...wire], text: done.content[0].text });

  // Cancelled while its answer streams: asked for progress, aborted once the first progress arrived.
  const abort = new AbortController();
  const endless = client.callTool({ name: args.prefix + 'progress', arguments: { steps: 100000, ms: 100 } }, undefined,
    { signal: abort.signal, onprogress: () => abort.abort('the agent changed its mind') });
  try {
    await endless;
    print({ step: 'failed', error: 'the endless call answered' });
    process.exit(1);
  } catch (error) {
    print({ step: 'cancelled', error: String(error) });
  }

  print({ step: 'waiting-for-list-changed' });
  await listChangedArrived;
  print({ step: 'list-changed' });

  if (transport instanceof StreamableHTTPClientTransport) {
    await transport.terminateSession();
  }
  await client.close();
  clearTimeout(bound);
} catch (error) {
  print({ step: 'failed', error: String(error && error.stack || error) });
  process.exit(1);
}
