package dev.tether.mcp;

import java.util.concurrent.atomic.AtomicReference;

/**
 * Carries the JSON-RPC id of a request from the transport back to the call that sent it, through the Reactor
 * context. The SDK forgets a cancelled request without telling the server; with the id we can send
 * {@code notifications/cancelled} ourselves.
 */
final class RequestIdSlot extends AtomicReference<Object> {
}
