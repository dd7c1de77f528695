package dev.tether.graphql;

import java.util.List;
import java.util.Map;

import org.jspecify.annotations.Nullable;

import dev.tether.api.input.Bounds;
import dev.tether.api.input.Inputs;
import dev.tether.api.input.ServerConfigs;
import dev.tether.api.input.Slugs;
import dev.tether.graphql.GraphqlSources.AddIntegration;

/**
 * The bodies of Executor's GraphQL routes that built-ins are twins of, each checked as the route checks it: the
 * controller ({@code api.GraphqlController}) reads them from HTTP, {@link GraphqlBuiltins} from a built-in's arguments.
 */
public final class GraphqlRequests {

    private GraphqlRequests() {
    }

    /** Body of {@code POST /api/graphql/integrations}, the arguments of {@code executor.graphql.addIntegration}. */
    public record AddRequest(String endpoint, String slug, String name, @Nullable String introspectionJson, Map<String, String> headers,
            Map<String, String> queryParams, List<Object> authenticationTemplate) {

        public AddIntegration checked() {
            // The introspection answer is a document, bounded by tether.http.max-document-size where it is read.
            Bounds.check(new AddRequest(endpoint, slug, name, null, headers, queryParams, authenticationTemplate));
            String checkedEndpoint = Inputs.requireText(endpoint, "endpoint");
            ServerConfigs.checkHttpUrl(checkedEndpoint);
            String checkedSlug = slug == null || slug.isBlank() ? null : Slugs.check(slug);
            return new AddIntegration(checkedEndpoint, checkedSlug, name, introspectionJson, Inputs.headerMap(headers, "headers"),
                    Inputs.stringMap(queryParams, "queryParams"), authenticationTemplate);
        }
    }
}
