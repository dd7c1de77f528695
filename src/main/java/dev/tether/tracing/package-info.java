/**
 * A request's way, seen at run time: the few spans Tether adds to those of Micrometer Tracing's HTTP server and client
 * (a session's lease, a child's start and teardown, a tool call's JSON-RPC round trip), and the rule that nothing is
 * recorded while no exporter is configured. Spring Boot's OpenTelemetry bridge makes the spans and propagates W3C
 * {@code traceparent} over the peer hop; export goes to Zipkin when {@code management.tracing.export.zipkin.enabled}.
 */
@NullMarked
package dev.tether.tracing;

import org.jspecify.annotations.NullMarked;
