/**
 * Which plugin recognises a URL ({@code POST /api/integrations/detect}): {@link dev.tether.detect.IntegrationDetector}
 * beans, one per plugin, asked in Executor's plugin order; the MCP one connects and probes as Executor's MCP plugin
 * does. OpenAPI and GraphQL recognisers plug in beside it from their own packages.
 */
@NullMarked
package dev.tether.detect;

import org.jspecify.annotations.NullMarked;
