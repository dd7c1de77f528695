package dev.tether.graphql;

import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.StringJoiner;

import org.springframework.http.HttpMethod;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.calls.SourceTools;
import dev.tether.http.HttpSourceClient;
import dev.tether.http.AuthTemplates;
import dev.tether.http.HttpAnswer;
import dev.tether.http.ToolResults;
import dev.tether.store.Connection;
import dev.tether.store.HttpSourceConfig;
import dev.tether.store.Integration;

/**
 * Calls GraphQL fields as Executor 1.5.9 does: the tool's operation is posted with the arguments (by variable name,
 * or inside {@code variables}) as its variables. An answer with {@code errors} is {@code graphql_errors}; a 401/403
 * is {@code connection_rejected}; another non-2xx is {@code graphql_http_error}; otherwise {@code {ok: true, data}}.
 */
@Component
final class GraphqlTools implements SourceTools {

    private final HttpSourceClient http;
    private final JsonMapper json;

    GraphqlTools(HttpSourceClient http, JsonMapper json) {
        this.http = http;
        this.json = json;
    }

    @Override
    public String kind() {
        return HttpSourceConfig.GRAPHQL;
    }

    @Override
    @SuppressWarnings("unchecked")
    public Mono<Map<String, Object>> invoke(Integration integration, Map<String, Object> binding, AuthTemplates.Rendered auth,
            Connection connection, Map<String, Object> arguments) {
        return Mono.defer(() -> {
            HttpSourceConfig config = (HttpSourceConfig) integration.config();
            Map<String, Object> variables = new LinkedHashMap<>();
            for (Object name : (List<Object>) Objects.requireNonNull(binding.get("variableNames"))) {
                if (arguments.get(name) != null) {
                    variables.put((String) name, arguments.get(name));
                }
            }
            if (arguments.get("variables") instanceof Map<?, ?> given) {
                variables.putAll((Map<String, Object>) given);
            }
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("query", binding.get("operationString"));
            if (!variables.isEmpty()) {
                body.put("variables", variables);
            }
            Map<String, String> query = new LinkedHashMap<>(config.queryParams());
            query.putAll(auth.queryParams());
            Map<String, String> headers = new LinkedHashMap<>(config.headers());
            headers.put("Content-Type", "application/json");
            headers.putIfAbsent("Accept", "application/graphql-response+json, application/json");
            headers.putAll(auth.headers());
            URI uri = withQuery(URI.create((String) config.settings().get("endpoint")), query);
            return http.exchange(HttpMethod.POST, uri, headers, json.writeValueAsBytes(body))
                    .map(answer -> answer(integration, answer));
        });
    }

    private Map<String, Object> answer(Integration integration, HttpAnswer answer) {
        Object parsed = null;
        if (answer.body().length > 0) {
            try {
                parsed = json.readValue(answer.body(), Object.class);
            }
            catch (RuntimeException notJson) {
                parsed = answer.text();
            }
        }
        Object data = parsed instanceof Map<?, ?> map ? map.get("data") : null;
        Object errors = parsed instanceof Map<?, ?> map ? map.get("errors") : null;
        if (errors instanceof List<?> list && !list.isEmpty()) {
            String message = list.get(0) instanceof Map<?, ?> first && first.get("message") instanceof String m ? m
                    : "GraphQL request returned errors";
            return ToolResults.fail("graphql_errors", message, null, Map.of("errors", list));
        }
        if (!answer.ok()) {
            Map<String, Object> details = new LinkedHashMap<>();
            details.put("status", answer.status());
            details.put("data", data);
            details.put("errors", errors);
            if (answer.status() == 401 || answer.status() == 403) {
                return ToolResults.fail("connection_rejected", "Upstream rejected credentials for GraphQL integration \""
                        + integration.slug() + "\" with HTTP " + answer.status()
                        + ". Re-authenticate or update the connection before retrying this tool.", answer.status(), details);
            }
            return ToolResults.fail("graphql_http_error", "GraphQL request failed with HTTP " + answer.status(), answer.status(), details);
        }
        Map<String, Object> ok = new LinkedHashMap<>();
        ok.put("ok", true);
        ok.put("data", data);
        return ok;
    }

    /** The endpoint with the query values added to those it has. */
    static URI withQuery(URI endpoint, Map<String, String> values) {
        if (values.isEmpty()) {
            return endpoint;
        }
        StringJoiner query = new StringJoiner("&");
        values.forEach((name, value) -> query.add(encode(name) + "=" + encode(value)));
        String text = endpoint.toString();
        return URI.create(text + (endpoint.getRawQuery() == null ? "?" : "&") + query);
    }

    private static String encode(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
    }
}
