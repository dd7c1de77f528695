/**
 * Bootstrap of the daemon process: the data dir (created owner-only before Spring starts), the instance-wide
 * {@code tether.*} settings, checks shared by every properties record, the management port's address, and
 * start-up failures reported as one clear line instead of a stack trace, and the title, version and security the
 * daemon's OpenAPI document ({@code /api/docs}) gives its API.
 */
@NullMarked
package dev.tether.daemon;

import org.jspecify.annotations.NullMarked;
