package dev.tether.agent.codemode;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import dev.tether.agent.AgentProperties;
import dev.tether.execution.Executions;
import dev.tether.identity.Principals;

/**
 * The sessions of {@code /mcp}, by the id {@code initialize} handed out. Kept in memory as Executor keeps them: a
 * restarted daemon answers an old id with 404, and the agent's client starts a new session, as MCP has it. Bounded:
 * beyond {@code tether.agent.max-sessions} the session used longest ago ends. A session that ends takes its paused
 * executions with it (nobody else may resume them), rather than leaving them to their expiry. A session is its
 * user's: another user who names its id finds none, as if it did not exist.
 */
@Component
final class CodeModeSessions implements DisposableBean {

    private final int limit;
    private final Executions executions;
    /** In access order, so that the eldest entry is the session used longest ago. */
    private final LinkedHashMap<String, CodeModeSession> sessions = new LinkedHashMap<>(16, 0.75f, true);

    CodeModeSessions(AgentProperties properties, Executions executions) {
        this.limit = properties.maxSessions();
        this.executions = executions;
    }

    /** Keeps {@code session} for {@code subject}; completes once the one it pushed out, if any, has ended. */
    Mono<Void> add(CodeModeSession session, String subject) {
        CodeModeSession evicted = null;
        synchronized (sessions) {
            sessions.put(key(session.id(), subject), session);
            if (sessions.size() > limit) {
                Map.Entry<String, CodeModeSession> eldest = sessions.entrySet().iterator().next();
                evicted = sessions.remove(eldest.getKey());
            }
        }
        return evicted == null ? Mono.empty() : ended(evicted);
    }

    /** The session of this id that {@code subject} started; empty for another user's. */
    Optional<CodeModeSession> find(String id, String subject) {
        synchronized (sessions) {
            return Optional.ofNullable(sessions.get(key(id, subject)));
        }
    }

    /** Ends {@code subject}'s session; false when it has none by this id. */
    Mono<Boolean> end(String id, String subject) {
        return Mono.defer(() -> {
            CodeModeSession ended;
            synchronized (sessions) {
                ended = sessions.remove(key(id, subject));
            }
            return ended == null ? Mono.just(false) : ended(ended).thenReturn(true);
        });
    }

    /** Ids are random, subjects any text: a line break keeps the two apart. */
    private static String key(String id, String subject) {
        return subject + "\n" + id;
    }

    /**
     * Ends a session and closes what it left paused: as the daemon, since a session pushed out by another user's new one
     * is ended in that user's request, and its executions are not theirs to see.
     */
    private Mono<Void> ended(CodeModeSession session) {
        session.end();
        return Flux.fromIterable(session.takeAllPaused()).flatMap(executions::abandon).then().contextWrite(Principals.asDaemon());
    }

    @Override
    public void destroy() {
        Map<String, CodeModeSession> all;
        synchronized (sessions) {
            all = new LinkedHashMap<>(sessions);
            sessions.clear();
        }
        all.values().forEach(CodeModeSession::end);
    }
}
