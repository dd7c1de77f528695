package dev.tether.health;

import dev.tether.store.ConnectionKey;
import dev.tether.store.HealthVerdict;

/**
 * A verdict as it is reached, for the event stream and batch checks.
 *
 * @param generation the batch generation that asked for it, or 0 for a single check
 * @param key        the connection
 * @param verdict    its verdict
 */
public record HealthEvent(long generation, ConnectionKey key, HealthVerdict verdict) {
}
