/**
 * Meters shared by several feature packages, built once and kept so that the hot path does not look them up.
 * Each feature still names and describes its own meters; this package only holds the shapes they share.
 */
@NullMarked
package dev.tether.metrics;

import org.jspecify.annotations.NullMarked;
