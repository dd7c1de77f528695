package dev.tether.replicas.forwarding;

import java.util.Map;

/**
 * What a replica asks a connection's owner at {@code POST /api/replicas/calls} ({@link PeerToolCalls#callTool}): the
 * call, and whether its caller hears progress and can answer questions.
 */
public record PeerCall(String address, Map<String, Object> args, boolean progress, boolean questions) {
}
