/**
 * GraphQL sources: an endpoint introspected with graphql-java's introspection query (or its answer given as JSON)
 * becomes an integration whose root {@code query} and {@code mutation} fields are tools with generated operations,
 * called as HTTP requests with the connection's credential; mutations need approval.
 */
@NullMarked
package dev.tether.graphql;

import org.jspecify.annotations.NullMarked;
