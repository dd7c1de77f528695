// An agent on the official TypeScript MCP SDK speaking to Executor's /mcp (code mode), run by CodeModeMcpTest against
// Tether and against the real Executor 1.5.9 with the same steps, so that the test can compare what each answered.
//
//   node mcp-code-agent.mjs --url=BASE --token=TOKEN --tool=tools.<slug>.org.default
//
// BASE is the daemon's address (http://127.0.0.1:PORT). Prints one JSON line per step: {"step", "answer"}, where
// answer is what the SDK returned (a tools/call result, the tool list). Four sessions, one after another:
//   model   (?elicitation_mode=model, the default): tools, execute (a value, logs, a thrown error), tools.search,
//           tools.describe.tool, a call of the docker server's tool, bad arguments, an unknown tool, and the
//           server's questions: a form, resumed with content; one resumed with content the schema refuses; a URL,
//           declined; resume of an unknown and of a finished execution.
//   browser (?elicitation_mode=browser): execute pauses with the approval URL; resume before the user answers
//           says so again; the user's answer (POST /api/mcp-sessions/...) lets resume complete.
//   native  (?elicitation_mode=native): the client declares elicitation, and its own handler answers the form and
//           the URL question in the middle of execute.
//   plain   (native, a client without elicitation): the question is cancelled, as Executor's relay cancels it.
// Any failure prints {"step":"failed"} and exits 1; the whole run is bounded (exit 3).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const args = Object.fromEntries(process.argv.slice(2).map((arg) => {
  const m = /^--([a-z-]+)=(.*)$/.exec(arg);
  if (!m) throw new Error(`unknown argument ${arg}`);
  return [m[1], m[2]];
}));
const print = (line) => process.stdout.write(JSON.stringify(line) + '\n');
const bound = setTimeout(() => { print({ step: 'failed', error: 'timed out' }); process.exit(3); }, 150_000);
const headers = { Authorization: `Bearer ${args.token}` };
const tool = args.tool;

const connect = async (mode, capabilities = {}) => {
  const url = new URL(`${args.url}/mcp${mode ? `?elicitation_mode=${mode}` : ''}`);
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers } });
  const client = new Client({ name: 'tether-code-agent', version: '1.0.0' }, { capabilities });
  await client.connect(transport);
  return client;
};
const execute = (client, code) => client.callTool({ name: 'execute', arguments: { code } });
const idOf = (answer) => answer.structuredContent?.executionId;

try {
  // ---- model ----
  const model = await connect(undefined);
  print({ step: 'server', answer: { server: model.getServerVersion(), capabilities: model.getServerCapabilities() } });
  print({ step: 'tools', answer: (await model.listTools()).tools });
  print({ step: 'value', answer: await execute(model, 'return 6*7') });
  print({ step: 'logs', answer: await execute(model, 'console.log("a", 1); console.warn("w"); return { ok: true }') });
  print({ step: 'search', answer: await execute(model, 'return await tools.search({ query: "echo", limit: 3 })') });
  print({ step: 'describe', answer: await execute(model,
    `return await tools.describe.tool({ path: "${tool.slice('tools.'.length)}.get_sum" })`) });
  print({ step: 'call', answer: await execute(model, `return await ${tool}.echo({ message: "hi from code" })`) });
  print({ step: 'blank code', answer: await model.callTool({ name: 'execute', arguments: { code: '   ' } }) });
  print({ step: 'no code', answer: await model.callTool({ name: 'execute', arguments: {} }) });
  print({ step: 'bad action', answer: await model.callTool({ name: 'resume', arguments: { executionId: 'exec_1', action: 'maybe' } }) });
  print({ step: 'unknown tool', answer: await model.callTool({ name: 'tools.search', arguments: {} }) });

  const form = await execute(model, `return await ${tool}.trigger_elicitation_request({})`);
  print({ step: 'form paused', answer: form });
  print({ step: 'form refused content', answer: await model.callTool({ name: 'resume',
    arguments: { executionId: idOf(form), action: 'accept', content: JSON.stringify({ name: 42 }) } }) });
  print({ step: 'form resumed', answer: await model.callTool({ name: 'resume',
    arguments: { executionId: idOf(form), action: 'accept', content: JSON.stringify({ name: 'Ada', check: true }) } }) });
  print({ step: 'finished resumed', answer: await model.callTool({ name: 'resume',
    arguments: { executionId: idOf(form), action: 'accept' } }) });
  const link = await execute(model, `return await ${tool}.trigger_url_elicitation({ url: "https://example.com/login" })`);
  print({ step: 'url paused', answer: link });
  print({ step: 'url declined', answer: await model.callTool({ name: 'resume', arguments: { executionId: idOf(link), action: 'decline' } }) });
  print({ step: 'unknown resumed', answer: await model.callTool({ name: 'resume', arguments: { executionId: 'exec_9999', action: 'accept' } }) });
  await model.close();

  // ---- browser ----
  const browser = await connect('browser');
  print({ step: 'browser tools', answer: (await browser.listTools()).tools.map((t) => ({ name: t.name, inputSchema: t.inputSchema })) });
  const waiting = await execute(browser, `return await ${tool}.trigger_elicitation_request({})`);
  print({ step: 'browser paused', answer: waiting });
  const approvalUrl = new URL(waiting.structuredContent.approvalUrl);
  const session = approvalUrl.searchParams.get('mcp_session_id');
  const id = idOf(waiting);
  const approve = (sid, eid, body) => fetch(`${args.url}/api/mcp-sessions/${sid}/executions/${eid}/resume`, {
    method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body,
  }).then(async (r) => ({ status: r.status, body: await r.json() }));
  print({ step: 'approval unknown session', answer: await approve('no-such-session', id, '{"action":"accept"}') });
  print({ step: 'approval bad body', answer: await approve(session, id, '{"action":"maybe"}') });
  print({ step: 'approval', answer: await approve(session, id, JSON.stringify({ action: 'accept', content: { name: 'Grace', check: true } })) });
  print({ step: 'browser resumed', answer: await browser.callTool({ name: 'resume', arguments: { executionId: id } }) });
  await browser.close();

  // ---- native ----
  const native = await connect('native', { elicitation: { form: {}, url: {} } });
  const asked = [];
  native.setRequestHandler(ElicitRequestSchema, async (request) => {
    const { mode, message } = request.params;
    asked.push({ mode: mode ?? 'form', message });
    return mode === 'url' ? { action: 'accept' } : { action: 'accept', content: { name: 'Linus', check: true } };
  });
  print({ step: 'native tools', answer: (await native.listTools()).tools.map((t) => t.name) });
  print({ step: 'native form', answer: await execute(native, `return await ${tool}.trigger_elicitation_request({})`) });
  print({ step: 'native url', answer: await execute(native,
    `return await ${tool}.trigger_url_elicitation({ url: "https://example.com/login" })`) });
  print({ step: 'native asked', answer: asked });
  await native.close();

  // ---- a native session whose client takes no questions ----
  const plain = await connect('native');
  print({ step: 'plain form', answer: await execute(plain, `return await ${tool}.trigger_elicitation_request({})`) });
  await plain.close();

  print({ step: 'done' });
  clearTimeout(bound);
  process.exit(0);
} catch (error) {
  print({ step: 'failed', error: String(error?.stack ?? error) });
  process.exit(1);
}
