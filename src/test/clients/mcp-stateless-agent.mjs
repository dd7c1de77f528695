// An agent on the official TypeScript MCP SDK v2 (@modelcontextprotocol/client), MCP 2026-07-28, run against
// Tether's /mcp (code mode) by StatelessMcpTest.
//
//   node mcp-stateless-agent.mjs --url=URL --token=TOKEN --mode=auto|2026-07-28|legacy --code=JS [--answer=accept|decline]
//
// It connects with versionNegotiation (auto: server/discover, then the era it finds; a version: pinned; legacy: the
// 2025 handshake), lists the tools, and runs `execute` with the code. A question the server asks (input_required on
// 2026-07-28, elicitation/create before) goes to its elicitation handler, which answers --answer (accept by default)
// and prints it. One JSON line per step on stdout: connected {version}, tools {names}, asked {params}, result
// {result}. Any failure prints {"step":"failed"} and exits 1; the whole run is bounded (exit 3).
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const args = Object.fromEntries(process.argv.slice(2).map((arg) => {
  const m = /^--([a-z-]+)=([\s\S]*)$/.exec(arg);
  if (!m) throw new Error(`unknown argument ${arg}`);
  return [m[1], m[2]];
}));
const print = (line) => process.stdout.write(JSON.stringify(line) + '\n');
const bound = setTimeout(() => { print({ step: 'failed', error: 'timed out' }); process.exit(3); }, 90_000);

const mode = args.mode === 'auto' ? 'auto' : args.mode === 'legacy' ? 'legacy' : { pin: args.mode };
const transport = new StreamableHTTPClientTransport(new URL(args.url),
  { requestInit: { headers: { Authorization: `Bearer ${args.token}` } } });
const client = new Client({ name: 'tether-test-agent-v2', version: '1.0.0' },
  { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode } });
client.setRequestHandler('elicitation/create', async (request) => {
  print({ step: 'asked', params: request.params });
  return { action: args.answer ?? 'accept', content: {} };
});

try {
  await client.connect(transport);
  print({ step: 'connected', version: client.getNegotiatedProtocolVersion?.() ?? transport.protocolVersion ?? null });
  const tools = await client.listTools();
  print({ step: 'tools', names: tools.tools.map((tool) => tool.name) });
  const result = await client.callTool({ name: 'execute', arguments: { code: args.code } });
  print({ step: 'result', result });
  await client.close();
  clearTimeout(bound);
} catch (error) {
  print({ step: 'failed', error: String(error?.stack ?? error) });
  process.exit(1);
}
