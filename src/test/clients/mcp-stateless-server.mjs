// A remote MCP server that speaks MCP 2026-07-28 only (the TypeScript SDK v2, @modelcontextprotocol/server, with
// `legacy: 'reject'`: an `initialize` is refused), run by StatelessUpstreamTest as a source behind Tether.
//
//   node mcp-stateless-server.mjs
//
// It listens on a free loopback port and prints {"listening": PORT}. Tools: `echo {text}` answers the text; `confirm
// {item}` answers input_required with a form question (`name`), and its retry answers "confirmed <item> for <name>"
// when accepted, "not confirmed" otherwise. Its tool list says `ttlMs: 60000`. Each request it serves is one line on
// stdout: {"method", "era"}.
import http from 'node:http';
import { McpServer, createMcpHandler, inputRequired, inputResponse } from '@modelcontextprotocol/server';
import { z } from 'zod';

const print = (line) => process.stdout.write(JSON.stringify(line) + '\n');

const handler = createMcpHandler(({ era }) => {
  const server = new McpServer({ name: 'stateless-fixture', version: '2.0.0' },
    { capabilities: { tools: { listChanged: true } }, cacheHints: { 'tools/list': { ttlMs: 60_000, cacheScope: 'private' } } });
  server.registerTool('echo', { description: 'Echoes args.text back', inputSchema: z.object({ text: z.string() }) },
    async ({ text }) => ({ content: [{ type: 'text', text }] }));
  server.registerTool('confirm', { description: 'Asks who confirms args.item', inputSchema: z.object({ item: z.string() }) },
    async ({ item }, ctx) => {
      const answer = inputResponse(ctx.mcpReq.inputResponses, 'who');
      if (answer.kind === 'missing') {
        return inputRequired({ inputRequests: { who: inputRequired.elicit({ message: `Who confirms ${item}?`,
          requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } }) } });
      }
      return { content: [{ type: 'text', text: answer.kind === 'elicit' && answer.action === 'accept'
        ? `confirmed ${item} for ${answer.content?.name}` : 'not confirmed' }] };
    });
  return server;
}, { legacy: 'reject' });

const httpServer = http.createServer(async (req, res) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const body = Buffer.concat(chunks).toString('utf8');
  let method = null;
  try { method = JSON.parse(body).method; } catch { /* not JSON: the handler answers it */ }
  print({ method, era: req.headers['mcp-method'] ? 'modern' : 'legacy' });
  const request = new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers: req.headers,
    body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body });
  const response = await handler.fetch(request);
  res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
  if (response.body) {
    for await (const chunk of response.body) res.write(chunk);
  }
  res.end();
});
httpServer.listen(0, '127.0.0.1', () => print({ listening: httpServer.address().port }));
