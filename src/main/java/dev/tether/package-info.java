/**
 * Tether: a drop-in backend for the Executor daemon that runs MCP servers as stdio children without leaking a
 * process or a container. Only the Spring Boot entry point lives here; every job has a package of its own
 * (see {@code docs/architecture.md} for the request path from {@code api} down to {@code process}).
 */
@NullMarked
package dev.tether;

import org.jspecify.annotations.NullMarked;
