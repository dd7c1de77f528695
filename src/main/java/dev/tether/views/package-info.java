/**
 * Executor's JSON shapes for integrations, connections, health verdicts and tool items, shared by the REST
 * routes and the built-in tools that answer the same data, so each shape is written once.
 */
@NullMarked
package dev.tether.views;

import org.jspecify.annotations.NullMarked;
