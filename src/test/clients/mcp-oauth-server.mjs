// A remote MCP server behind OAuth as a team writes it with the TypeScript SDK v2 (@modelcontextprotocol/server): its
// RFC 9728 metadata names an authorization server (Keycloak in the tests), and every request must carry a token
// that server signed (checked against its JWKS with jose) with the scope `mcp:tools`, else 401 with the SDK's
// challenge. The tool `write_note` needs `notes:write` too: a token without it gets the SDK's 403
// `insufficient_scope` challenge naming both scopes (MCP's step-up authorization).
//
//   node mcp-oauth-server.mjs ISSUER
//
// It listens on a free loopback port and prints {"listening": PORT}. Each request it serves is one line on stdout:
// {"path", "method", "version" (its MCP-Protocol-Version header), "scope" (the token's, or null), "status"}.
import http from 'node:http';
import { McpServer, createMcpHandler, requireBearerAuth, bearerAuthChallengeResponse, OAuthError, OAuthErrorCode }
  from '@modelcontextprotocol/server';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { z } from 'zod';

const issuer = process.argv[2];
const print = (line) => process.stdout.write(JSON.stringify(line) + '\n');
const keys = createRemoteJWKSet(new URL(`${issuer}/protocol/openid-connect/certs`));
const verifier = {
  async verifyAccessToken(token) {
    try {
      const { payload } = await jwtVerify(token, keys, { issuer });
      return { token, clientId: String(payload.azp), scopes: String(payload.scope ?? '').split(' ').filter(Boolean),
        expiresAt: payload.exp, extra: { subject: payload.sub ?? payload.preferred_username } };
    } catch (error) {
      throw new OAuthError(OAuthErrorCode.InvalidToken, `token refused: ${error.code ?? error.message}`);
    }
  },
};

const handler = createMcpHandler(() => {
  const server = new McpServer({ name: 'oauth-fixture', version: '2.0.0' });
  server.registerTool('whoami', { description: 'Tells which client the token was issued to, with which scope',
    inputSchema: z.object({}) },
  async (args, ctx) => ({ content: [{ type: 'text',
    text: `token of ${ctx.http?.authInfo?.clientId} with scope ${ctx.http?.authInfo?.scopes.join(' ')}` }] }));
  server.registerTool('write_note', { description: 'Writes a note (needs notes:write)', inputSchema: z.object({ text: z.string() }) },
    async ({ text }) => ({ content: [{ type: 'text', text: `noted: ${text}` }] }));
  return server;
});

let port;
const httpServer = http.createServer(async (req, res) => {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const body = Buffer.concat(chunks).toString('utf8');
  let message = null;
  try { message = JSON.parse(body); } catch { /* not JSON */ }
  const resource = `http://127.0.0.1:${port}/mcp`;
  const resourceMetadataUrl = `http://127.0.0.1:${port}/.well-known/oauth-protected-resource/mcp`;
  const logged = { path: req.url, method: message?.method ?? null, version: req.headers['mcp-protocol-version'] ?? null, scope: null };
  const send = async (response) => {
    logged.status = response.status;
    print(logged);
    res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
    if (response.body) {
      for await (const chunk of response.body) res.write(chunk);
    }
    res.end();
  };
  if (req.url === '/.well-known/oauth-protected-resource/mcp') {
    return send(Response.json({ resource, authorization_servers: [issuer], scopes_supported: ['mcp:tools', 'notes:write'] }));
  }
  if (!req.url.startsWith('/mcp')) {
    return send(new Response('not found', { status: 404 }));
  }
  const request = new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers: req.headers,
    body: req.method === 'GET' || req.method === 'HEAD' ? undefined : body });
  const auth = await requireBearerAuth({ verifier, requiredScopes: ['mcp:tools'], resourceMetadataUrl })(request);
  if (auth instanceof Response) {
    return send(auth);
  }
  logged.scope = auth.scopes.join(' ');
  if (message?.method === 'tools/call' && message.params?.name === 'write_note' && !auth.scopes.includes('notes:write')) {
    return send(bearerAuthChallengeResponse(new OAuthError(OAuthErrorCode.InsufficientScope, 'writing notes needs notes:write'),
      { requiredScopes: ['mcp:tools', 'notes:write'], resourceMetadataUrl }));
  }
  return send(await handler.fetch(request, { authInfo: auth }));
});
httpServer.listen(0, '127.0.0.1', () => {
  port = httpServer.address().port;
  print({ listening: port });
});
