package dev.tether.agent.codemode;

import java.text.Collator;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

import dev.tether.store.ConnectionStore;

/**
 * The {@code execute} tool's description, as Executor builds it when a session starts
 * ({@code packages/core/execution/src/description.ts}): the workflow and rules of code mode, then the saved
 * connections' prefixes under {@code tools.}, sorted, at most 50.
 */
@Component
final class ExecuteDescription {

    private static final int MAX_PREFIXES = 50;
    private static final String WORKFLOW = String.join("\n",
            "Execute TypeScript in a sandboxed runtime with access to configured API tools.",
            "",
            "## Workflow",
            "",
            "1. `const { items: matches } = await tools.search({ query: \"<intent + key nouns>\", limit: 12 });`",
            "2. `const path = matches[0]?.path; if (!path) return \"No matching tools found.\";`",
            "3. `const details = await tools.describe.tool({ path });`",
            "4. Use `details.inputTypeScript` / `details.outputTypeScript` and `details.typeScriptDefinitions` for compact shapes.",
            "5. Use `tools.executor.coreTools.connections.list({})` when you need live saved-connection inventory.",
            "6. Call the tool: `const result = await tools.<path>(input);`",
            "",
            "## Rules",
            "",
            "- `tools.search()` returns paginated, ranked matches: `{ items, total, hasMore, nextOffset }`. Best-first. Use short intent"
                    + " phrases like `github issues`, `repo details`, or `create calendar event`.",
            "- When you already know the namespace, narrow with `tools.search({ namespace: \"github\", query: \"issues\" })`.",
            "- `tools.executor.coreTools.connections.list({})` returns saved connections with `{ address, integration, owner, name, ... }`."
                    + " The `address` field includes the leading `tools.` root.",
            "- Tool calls return a value union: `{ ok: true, data }` for success or `{ ok: false, error: { code, message, status?, details?,"
                    + " retryable? } }` for expected tool/domain failures. Branch on `result.ok`.",
            "- `data` is the upstream payload itself. HTTP-backed tools (OpenAPI) also set `http: { status, headers }` beside `data` — read"
                    + " `result.http?.headers` for pagination (Link) or rate-limit headers.",
            "- If `tools.search()` returns `hasMore: true` and you didn't find what you need, fetch the next page: `tools.search({ query,"
                    + " offset: nextOffset, limit })`.",
            "- Always use the full address when calling tools: `tools.<integration>.<owner>.<connection>.<tool>(args)`. The `path` returned"
                    + " by `tools.search()` / `tools.describe.tool()` is already the exact path under `tools` — call `tools[path]` rather than"
                    + " guessing segments.",
            "- The `tools` object is a lazy proxy — `Object.keys(tools)` won't work. Use `tools.search()` or"
                    + " `tools.executor.coreTools.connections.list({})` instead.",
            "- Pass an object to system tools, e.g. `tools.search({ query: \"...\" })`, `tools.executor.coreTools.connections.list({})`, and"
                    + " `tools.describe.tool({ path })`.",
            "- `tools.describe.tool()` returns compact TypeScript shapes. Use `inputTypeScript`, `outputTypeScript`, and"
                    + " `typeScriptDefinitions`. If the path doesn't resolve, the result carries `error: { code: \"tool_not_found\", suggestions }`"
                    + " — use a suggestion instead of retrying the same path.",
            "- For tools that return large collections (e.g. `getStates`, `getAll`), filter results in code rather than calling per-item tools.",
            "- Do not use `fetch` — all API calls go through `tools.*`.",
            "- If execution pauses for interaction, resume it with the returned `resumePayload`.",
            "- TypeScript type syntax (`: T`, `as T`, generics, interfaces, type aliases) is stripped before execution — feel free to write"
                    + " idiomatic TypeScript using the shapes from `tools.describe.tool()`. Decorators and `enum` are not supported.");

    private final ConnectionStore connections;

    ExecuteDescription(ConnectionStore connections) {
        this.connections = connections;
    }

    Mono<String> describe() {
        return connections.all(Optional.empty(), Optional.empty())
                .map(connection -> connection.key().address().substring("tools.".length()))
                .collectList()
                .map(ExecuteDescription::format);
    }

    static String format(List<String> prefixes) {
        if (prefixes.isEmpty()) {
            return WORKFLOW;
        }
        List<String> sorted = new ArrayList<>(prefixes);
        sorted.sort(Collator.getInstance(Locale.ENGLISH)); // JavaScript's localeCompare
        List<String> lines = new ArrayList<>(List.of(WORKFLOW, "", "## Available connection prefixes", "",
                "These are paths under `tools.`; append the final tool segment."));
        sorted.stream().limit(MAX_PREFIXES).forEach(prefix -> lines.add("- `" + prefix + "`"));
        if (sorted.size() > MAX_PREFIXES) {
            lines.add("- ... " + (sorted.size() - MAX_PREFIXES) + " more");
        }
        return String.join("\n", lines);
    }
}
