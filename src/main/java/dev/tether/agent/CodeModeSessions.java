package dev.tether.agent;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.stereotype.Component;

/**
 * The sessions of {@code /mcp}, by the id {@code initialize} handed out. Kept in memory as Executor keeps them: a
 * restarted daemon answers an old id with 404, and the agent's client starts a new session, as MCP has it. Bounded:
 * beyond {@code tether.agent.max-sessions} the session used longest ago ends.
 */
@Component
final class CodeModeSessions implements DisposableBean {

    private final int limit;
    /** In access order, so that the eldest entry is the session used longest ago. */
    private final LinkedHashMap<String, CodeModeSession> sessions = new LinkedHashMap<>(16, 0.75f, true);

    CodeModeSessions(AgentProperties properties) {
        this.limit = properties.maxSessions();
    }

    void add(CodeModeSession session) {
        CodeModeSession evicted = null;
        synchronized (sessions) {
            sessions.put(session.id(), session);
            if (sessions.size() > limit) {
                Map.Entry<String, CodeModeSession> eldest = sessions.entrySet().iterator().next();
                evicted = sessions.remove(eldest.getKey());
            }
        }
        if (evicted != null) {
            evicted.end();
        }
    }

    Optional<CodeModeSession> find(String id) {
        synchronized (sessions) {
            return Optional.ofNullable(sessions.get(id));
        }
    }

    boolean end(String id) {
        CodeModeSession ended;
        synchronized (sessions) {
            ended = sessions.remove(id);
        }
        if (ended != null) {
            ended.end();
        }
        return ended != null;
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
