/**
 * OpenAPI sources: a spec (OpenAPI 3.0/3.1 or Swagger 2.0, read with swagger-parser, internal references only)
 * becomes an integration whose operations are tools named and approved as Executor names and approves them, and
 * whose calls are HTTP requests made with the connection's credential.
 */
@NullMarked
package dev.tether.openapi;

import org.jspecify.annotations.NullMarked;
