package dev.tether.agent.stateless;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;

import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.modern.McpException;
import io.modelcontextprotocol.modern.McpSchema;
import io.modelcontextprotocol.modern.McpSchema.CallToolOutcome;
import io.modelcontextprotocol.modern.McpSchema.CallToolRequest;
import io.modelcontextprotocol.modern.McpSchema.CallToolResult;
import io.modelcontextprotocol.modern.McpSchema.ElicitFormRequest;
import io.modelcontextprotocol.modern.McpSchema.InputRequiredResult;
import io.modelcontextprotocol.modern.server.McpAsyncResponse;
import io.modelcontextprotocol.modern.server.McpRequestContext;
import io.modelcontextprotocol.modern.server.McpServer;
import io.modelcontextprotocol.modern.server.feature.McpAsyncTool;
import io.modelcontextprotocol.modern.server.feature.McpAsyncToolRepository;
import io.modelcontextprotocol.modern.server.feature.ToolsPage;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

import dev.tether.agent.codemode.CodeModeOffer;
import dev.tether.agent.codemode.CodeModeOffer.Argument;
import dev.tether.agent.codemode.CodeModeOffer.Resume;
import dev.tether.execution.ExecutionAnswer;
import dev.tether.execution.ExecutionNotFoundException;
import dev.tether.execution.Executions;
import dev.tether.execution.ResumeAction;
import dev.tether.execution.ResumeAnywhere;
import dev.tether.execution.ResumeContentException;

/**
 * Executor's code mode ({@code execute}, {@code resume}) on MCP 2026-07-28. An {@code execute} that pauses answers
 * {@code input_required}: the approval, or the server's form or URL, is one input request, and the {@code requestState}
 * names the paused execution. The client's retry, with the user's answer in {@code inputResponses}, resumes it wherever
 * it is held ({@link ResumeAnywhere}), on whichever replica the retry reached. A client that declares no elicitation
 * cannot answer input requests: it gets the pause as Executor's model mode tells it, and the {@code resume} tool.
 */
final class StatelessCodeMode {

    private static final Logger log = LoggerFactory.getLogger(StatelessCodeMode.class);
    private static final String EXECUTE = "execute";
    private static final String RESUME = "resume";
    /** The one input request a paused execution makes: MCP allows several, a pause waits on one question. */
    static final String INPUT = "tether/pause";
    private static final Map<String, Object> NO_FIELDS = Map.of("type", "object", "properties", Map.of());
    private static final TypeRef<Map<String, Object>> OBJECT = new TypeRef<>() {
    };

    private final CodeModeOffer offer;
    private final Executions executions;
    private final ResumeAnywhere resumes;
    private final McpJsonMapper json;
    private final McpServer server;

    StatelessCodeMode(CodeModeOffer offer, Executions executions, ResumeAnywhere resumes, McpJsonMapper json,
            StatelessServers servers) {
        this.offer = offer;
        this.executions = executions;
        this.resumes = resumes;
        this.json = json;
        this.server = servers.server("executor", "1.0.0", new Tools());
    }

    McpServer server() {
        return server;
    }

    /** The tools this request's client gets: {@code resume} only when it cannot answer input requests. */
    private final class Tools implements McpAsyncToolRepository {

        @Override
        public Mono<ToolsPage> list(McpRequestContext context, @Nullable String cursor) {
            return offer.tools(!asks(context)).map(tools -> ToolsPage.of(tools.stream().map(StatelessCodeMode.this::tool).toList()));
        }

        @Override
        public Mono<McpAsyncTool> find(McpRequestContext context, String name) {
            boolean offered = EXECUTE.equals(name) || RESUME.equals(name) && !asks(context);
            if (!offered) {
                return Mono.empty();
            }
            return offer.tools(!asks(context))
                    .flatMapIterable(tools -> tools)
                    .filter(tool -> name.equals(tool.get("name")))
                    .next()
                    .map(tool -> McpAsyncTool.of(tool(tool), (ctx, request) -> (EXECUTE.equals(name) ? execute(ctx, request)
                            : resume(ctx, request)).map(McpAsyncResponse::<CallToolOutcome>result)));
        }
    }

    private McpSchema.Tool tool(Map<String, Object> listed) {
        return json.convertValue(listed, McpSchema.Tool.class);
    }

    // ---- execute ---------------------------------------------------------------------------------

    private Mono<CallToolOutcome> execute(McpRequestContext context, CallToolRequest request) {
        if (request.requestState() != null) {
            return retried(context, request);
        }
        Argument<String> code = CodeModeOffer.code(request.arguments());
        String refusal = code.refusal();
        if (refusal != null) {
            return Mono.just(result(refusal));
        }
        return failSafe(executions.execute(Objects.requireNonNull(code.value())).map(answer -> outcome(context, answer)));
    }

    /**
     * The retry of a paused {@code execute}: the SDK has checked the state's seal (this server's key, this caller, this
     * tool, not expired), so the execution it names is this caller's to resume, with the answer to its one question.
     */
    private Mono<CallToolOutcome> retried(McpRequestContext context, CallToolRequest request) {
        PauseState state = PauseState.read(json, request.requestState());
        Object given = request.inputResponses() == null ? null : request.inputResponses().get(INPUT);
        if (state == null || !(given instanceof Map<?, ?> response)) {
            return Mono.error(McpException.invalidParams(state == null
                    ? "requestState names no paused execution" : "inputResponses lacks the answer to '" + INPUT + "'"));
        }
        ResumeAction action = response.get("action") instanceof String word ? ResumeAction.parse(word).orElse(ResumeAction.CANCEL)
                : ResumeAction.CANCEL;
        @SuppressWarnings("unchecked")
        Map<String, Object> content = response.get("content") instanceof Map<?, ?> map ? (Map<String, Object>) map : null;
        return failSafe(resumes.resume(state.execution(), action, content)
                .map(answer -> outcome(context, answer))
                .onErrorResume(ExecutionNotFoundException.class, gone -> Mono.just(result(CodeModeOffer.noPausedExecution(state.execution()))))
                // the answer does not fit the form: ask again, saying why; the execution is still paused
                .onErrorResume(ResumeContentException.class, refused -> Mono.just(ask(state.execution(),
                        withMessage(state.interaction(), refused.getMessage() + "\n\n" + state.interaction().get("message"))))));
    }

    // ---- resume (a client that takes no questions) ------------------------------------------------

    private Mono<CallToolOutcome> resume(McpRequestContext context, CallToolRequest request) {
        Argument<Resume> resume = CodeModeOffer.resume(request.arguments());
        if (resume.refusal() != null || resume.value() == null) {
            return Mono.just(result(String.valueOf(resume.refusal())));
        }
        Resume asked = resume.value();
        ResumeAction action = ResumeAction.parse(asked.action()).orElseThrow();
        return failSafe(resumes.resume(asked.executionId(), action, asked.content())
                .map(answer -> outcome(context, answer))
                .onErrorResume(ExecutionNotFoundException.class, gone -> Mono.just(result(CodeModeOffer.noPausedExecution(asked.executionId()))))
                .onErrorResume(ResumeContentException.class, refused -> Mono.just(
                        result(CodeModeOffer.error(Objects.requireNonNull(refused.getMessage()))))));
    }

    // ---- answers ---------------------------------------------------------------------------------

    /** A completed execution as its result; a pause as an input request when the client can answer one. */
    private CallToolOutcome outcome(McpRequestContext context, ExecutionAnswer answer) {
        PauseState pause = PauseState.of(json, answer);
        if (pause == null || !asks(context)) {
            return result(CodeModeOffer.result(answer));
        }
        return ask(pause.execution(), question(context, pause.interaction()));
    }

    private InputRequiredResult ask(String executionId, Map<String, Object> interaction) {
        InputRequiredResult.Builder ask = InputRequiredResult.builder().requestState(new PauseState(executionId, interaction).write(json));
        if ("url".equals(interaction.get("mode"))) {
            ask.elicitUrl(INPUT, String.valueOf(interaction.get("message")), String.valueOf(interaction.get("url")));
        }
        else {
            Map<String, Object> schema = interaction.get("requestedSchema") instanceof Map<?, ?> fields && !fields.isEmpty()
                    ? json.convertValue(fields, OBJECT) : NO_FIELDS;
            ask.elicit(INPUT, ElicitFormRequest.builder(String.valueOf(interaction.get("message")), schema).build());
        }
        return ask.build();
    }

    /**
     * The pause's question as this client can take it: a URL to visit as a URL question where it takes those, else as
     * a form that names the URL (as Executor's native relay does); an approval or a server's form as a form.
     */
    private static Map<String, Object> question(McpRequestContext context, Map<String, Object> interaction) {
        Map<String, Object> question = new LinkedHashMap<>();
        String message = String.valueOf(interaction.get("message"));
        if ("url".equals(interaction.get("kind"))) {
            if (context.clientCapabilities().supportsElicitationUrl()) {
                question.put("mode", "url");
                question.put("message", message);
                question.put("url", interaction.get("url"));
                return question;
            }
            question.put("message", message + "\n\nPlease visit this URL:\n" + interaction.get("url")
                    + "\n\nClick accept once you have completed the flow.");
            question.put("requestedSchema", NO_FIELDS);
            return question;
        }
        question.put("message", message);
        question.put("requestedSchema", interaction.get("requestedSchema") instanceof Map<?, ?> schema ? schema : NO_FIELDS);
        return question;
    }

    private static Map<String, Object> withMessage(Map<String, Object> question, String message) {
        Map<String, Object> changed = new LinkedHashMap<>(question);
        changed.put("message", message);
        return changed;
    }

    /** Whether the client said it answers questions: a form is what every pause can be put as. */
    private static boolean asks(McpRequestContext context) {
        return context.clientCapabilities().supportsElicitationForm();
    }

    private CallToolResult result(String resultJson) {
        try {
            return json.readValue(resultJson, CallToolResult.class);
        } catch (IOException unreadable) {
            throw new IllegalStateException("code mode wrote a result that is no CallToolResult", unreadable);
        }
    }

    /** Executor's opaque answer to a failure of Tether's own, the cause logged under the same id, as in the handshake era. */
    private Mono<CallToolOutcome> failSafe(Mono<CallToolOutcome> call) {
        return call.onErrorResume(failed -> !(failed instanceof McpException), failed -> {
            String correlationId = String.format("%08x", ThreadLocalRandom.current().nextInt());
            log.error("MCP execute failed, correlation_id={}", correlationId, failed);
            return Mono.just(result(CodeModeOffer.internalError(correlationId)));
        });
    }

    /**
     * What a {@code requestState} holds (the SDK seals it): the paused execution, and the question it asks, so that a
     * retry whose answer does not fit can be asked again. Nothing in it grants anything: the execution id is only
     * reachable with the caller's own credential, which the seal is bound to.
     */
    record PauseState(String execution, Map<String, Object> interaction) {

        String write(McpJsonMapper json) {
            try {
                return json.writeValueAsString(Map.of("execution", execution, "interaction", interaction));
            } catch (IOException unwritable) {
                throw new IllegalStateException("cannot write a request state", unwritable);
            }
        }

        static @Nullable PauseState read(McpJsonMapper json, String opened) {
            try {
                Map<String, Object> state = json.readValue(opened, OBJECT);
                return state.get("execution") instanceof String id && state.get("interaction") instanceof Map<?, ?> interaction
                        ? new PauseState(id, json.convertValue(interaction, OBJECT)) : null;
            } catch (IOException | RuntimeException unreadable) {
                return null;
            }
        }

        /** The pause of an answer ({@code waiting_for_interaction}), or null when it completed. */
        static @Nullable PauseState of(McpJsonMapper json, ExecutionAnswer answer) {
            if (!"paused".equals(answer.status()) || answer.structured() == null) {
                return null;
            }
            try {
                Map<String, Object> paused = json.readValue(answer.structured(), OBJECT);
                return paused.get("executionId") instanceof String id && paused.get("interaction") instanceof Map<?, ?> interaction
                        ? new PauseState(id, json.convertValue(interaction, OBJECT)) : null;
            } catch (IOException unreadable) {
                return null;
            }
        }
    }
}
