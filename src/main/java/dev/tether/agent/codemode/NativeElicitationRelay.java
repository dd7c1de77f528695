package dev.tether.agent.codemode;

import java.util.LinkedHashMap;
import java.util.Map;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

import dev.tether.agent.AgentProperties;
import dev.tether.agent.codemode.CodeModeJson.Paused;
import dev.tether.agent.codemode.CodeModeSession.Answer;
import dev.tether.execution.ExecutionAnswer;
import dev.tether.execution.Executions;
import dev.tether.execution.ResumeAction;
import dev.tether.execution.ResumeContentException;

/**
 * Native elicitation ({@code ?elicitation_mode=native}), as Executor's relay does it: each question a paused execution
 * asks goes to the agent's client as {@code elicitation/create}, and the client's answer resumes the execution at once,
 * until it completes. A client that cannot take the question (no such capability, no stream, no answer in
 * {@code tether.agent.native-elicitation-timeout}) cancels it.
 */
@Component
final class NativeElicitationRelay {

    private static final Logger log = LoggerFactory.getLogger(NativeElicitationRelay.class);
    private static final String ELICIT = "elicitation/create";
    private static final Map<String, Object> NO_FIELDS = Map.of("type", "object", "properties", Map.of());

    private final Executions executions;
    private final AgentProperties properties;

    NativeElicitationRelay(Executions executions, AgentProperties properties) {
        this.executions = executions;
        this.properties = properties;
    }

    /** Until the execution completes: each question goes to the client, and its answer resumes the execution. */
    Mono<ExecutionAnswer> relay(CodeModeSession session, ExecutionAnswer answer) {
        Paused paused = CodeModeJson.paused(answer).orElse(null);
        if (paused == null) {
            return Mono.just(answer);
        }
        String id = paused.executionId();
        // The pause is the relay's until the client's answer resumes it: an agent that leaves meanwhile (cancels the
        // call, disconnects, ends the session) leaves nobody to answer, so the execution ends then, not at its expiry.
        return Mono.usingWhen(Mono.just(id),
                        question -> elicit(session, id, paused.interaction())
                                .flatMap(given -> executions.resume(id, given.action(), given.content())
                                        // content that does not match: the SDK's elicitInput fails, and Executor's relay cancels
                                        .onErrorResume(ResumeContentException.class,
                                                refused -> executions.resume(id, ResumeAction.CANCEL, null))),
                        question -> Mono.empty(),
                        (question, failed) -> executions.abandon(question),
                        executions::abandon)
                .flatMap(next -> relay(session, next));
    }

    /** Executor's {@code makeMcpElicitationHandler}: the question as the client can take it, or cancel. */
    private Mono<Answer> elicit(CodeModeSession session, String executionId, Map<String, Object> interaction) {
        String message = String.valueOf(interaction.get("message"));
        Map<String, Object> params = new LinkedHashMap<>();
        boolean url = "url".equals(interaction.get("kind"));
        if (url && session.urlQuestions()) {
            params.put("mode", "url");
            params.put("message", message);
            params.put("url", interaction.get("url"));
            params.put("elicitationId", executionId);
        }
        else {
            Object schema = interaction.get("requestedSchema");
            params.put("message", url ? message + "\n\nPlease visit this URL:\n" + interaction.get("url")
                    + "\n\nClick accept once you have completed the flow." : message);
            params.put("requestedSchema", url || !(schema instanceof Map<?, ?> fields) || fields.isEmpty() ? NO_FIELDS : schema);
            params.put("mode", "form");
            if (!session.formQuestions()) {
                log.info("MCP session {}: execution {} asks a question and the agent's client takes none; cancelled, as Executor does",
                        session.id(), executionId);
                return Mono.just(new Answer(ResumeAction.CANCEL, null));
            }
        }
        return session.ask(ELICIT, params, CodeModeJson::write)
                .timeout(properties.nativeElicitationTimeout())
                .map(NativeElicitationRelay::answerOf)
                .onErrorResume(failed -> {
                    log.info("MCP session {}: the client did not answer the question of execution {} ({}); cancelled",
                            session.id(), executionId, failed.toString());
                    return Mono.just(new Answer(ResumeAction.CANCEL, null));
                });
    }

    private static Answer answerOf(Map<String, Object> result) {
        ResumeAction action = result.get("action") instanceof String text ? ResumeAction.parse(text).orElse(ResumeAction.CANCEL)
                : ResumeAction.CANCEL;
        @SuppressWarnings("unchecked")
        Map<String, Object> content = result.get("content") instanceof Map<?, ?> map ? (Map<String, Object>) map : null;
        return new Answer(action, content);
    }
}
