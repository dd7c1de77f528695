package dev.tether.openapi;

import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.StringJoiner;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpMethod;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

import dev.tether.calls.SourceTools;
import dev.tether.http.AuthTemplates;
import dev.tether.http.HttpAnswer;
import dev.tether.http.HttpSourceClient;
import dev.tether.http.ToolResults;
import dev.tether.store.Connection;
import dev.tether.store.HttpSourceConfig;
import dev.tether.store.Integration;

/**
 * Calls OpenAPI operations as Executor 1.5.9 does: arguments by parameter name (or inside {@code path},
 * {@code query}, {@code headers}, {@code cookies} containers), {@code body} as the request body, the server from the
 * integration's {@code baseUrl}, else the operation's servers ({@code server: {url, variables}} chooses); the
 * integration's headers and query values and the connection's credential added. A 2xx answer is
 * {@code {ok: true, data, http: {status, headers}}}; 401/403 is {@code connection_rejected}, other statuses
 * {@code upstream_http_error}.
 */
@Component
final class OpenApiTools implements SourceTools {

    private static final Pattern TEMPLATE = Pattern.compile("\\{\\+?([^{}]+)}");
    private static final Map<String, List<String>> CONTAINERS = Map.of(
            "path", List.of("path", "pathParams", "params"),
            "query", List.of("query", "queryParams", "params"),
            "header", List.of("headers", "header"),
            "cookie", List.of("cookies", "cookie"));

    private final HttpSourceClient http;
    private final JsonMapper json;

    OpenApiTools(HttpSourceClient http, JsonMapper json) {
        this.http = http;
        this.json = json;
    }

    @Override
    public String kind() {
        return HttpSourceConfig.OPENAPI;
    }

    @Override
    @SuppressWarnings("unchecked")
    public Mono<Map<String, Object>> invoke(Integration integration, Map<String, Object> binding, AuthTemplates.Rendered auth,
            Connection connection, Map<String, Object> arguments) {
        return Mono.defer(() -> {
            HttpSourceConfig config = (HttpSourceConfig) integration.config();
            Request request;
            try {
                request = request(config, binding, arguments, auth);
            }
            catch (IllegalArgumentException invalid) {
                return Mono.just(ToolResults.fail("invalid_tool_arguments", invalid.getMessage(), null, null));
            }
            return http.exchange(request.method(), request.uri(), request.headers(), request.body())
                    .map(answer -> answer(integration, connection, answer));
        });
    }

    private record Request(HttpMethod method, URI uri, Map<String, String> headers, byte @Nullable [] body) {
    }

    @SuppressWarnings("unchecked")
    private Request request(HttpSourceConfig config, Map<String, Object> binding, Map<String, Object> args,
            AuthTemplates.Rendered auth) {
        String method = (String) Objects.requireNonNull(binding.get("method"));
        List<Map<String, Object>> parameters = (List<Map<String, Object>>) Objects.requireNonNull(binding.get("parameters"));
        String path = (String) Objects.requireNonNull(binding.get("pathTemplate"));
        Map<String, String> headers = new LinkedHashMap<>(config.headers());
        StringJoiner query = new StringJoiner("&");
        config.queryParams().forEach((name, value) -> query.add(encode(name) + "=" + encode(value)));
        StringJoiner cookies = new StringJoiner("; ");
        for (Map<String, Object> parameter : parameters) {
            String name = (String) Objects.requireNonNull(parameter.get("name"));
            String in = (String) Objects.requireNonNull(parameter.get("in"));
            Object value = value(args, name, in);
            if (value == null) {
                if (Boolean.TRUE.equals(parameter.get("required")) && in.equals("path")) {
                    throw new IllegalArgumentException("Missing required path parameter: " + name);
                }
                continue;
            }
            switch (in) {
                case "path" -> {
                    String encoded = Boolean.TRUE.equals(parameter.get("allowReserved")) ? reservedAware(text(value)) : encode(text(value));
                    path = path.replace("{" + name + "}", encoded).replace("{+" + name + "}", encoded);
                }
                case "query" -> {
                    if (value instanceof List<?> list) {
                        boolean explode = !Boolean.FALSE.equals(parameter.get("explode"));
                        if (explode) {
                            list.forEach(item -> query.add(encode(name) + "=" + encode(text(item))));
                        }
                        else {
                            String separator = switch (String.valueOf(parameter.get("style"))) {
                                case "spaceDelimited" -> " ";
                                case "pipeDelimited" -> "|";
                                default -> ",";
                            };
                            query.add(encode(name) + "=" + encode(String.join(separator, list.stream().map(OpenApiTools::text).toList())));
                        }
                    }
                    else {
                        query.add(encode(name) + "=" + encode(text(value)));
                    }
                }
                case "header" -> headers.put(name, text(value));
                default -> cookies.add(name + "=" + encode(text(value)));
            }
        }
        Matcher left = TEMPLATE.matcher(path);
        StringBuilder resolved = new StringBuilder();
        while (left.find()) {
            Object value = args.get(left.group(1));
            if (value == null) {
                throw new IllegalArgumentException("Unresolved path parameters: " + left.group(1));
            }
            left.appendReplacement(resolved, Matcher.quoteReplacement(encode(text(value))));
        }
        left.appendTail(resolved);
        path = resolved.toString();
        if (cookies.length() > 0) {
            headers.put("Cookie", cookies.toString());
        }
        headers.putAll(auth.headers());
        auth.queryParams().forEach((name, value) -> query.add(encode(name) + "=" + encode(value)));

        byte @Nullable [] body = null;
        Map<String, Object> requestBody = (Map<String, Object>) binding.get("requestBody");
        if (requestBody != null && args.get("body") != null) {
            String contentType = args.get("contentType") instanceof String chosen ? chosen
                    : (String) Objects.requireNonNull(requestBody.get("contentType"));
            headers.put("Content-Type", contentType);
            body = body(contentType, args.get("body"));
        }
        else if (requestBody != null && Boolean.TRUE.equals(requestBody.get("required"))) {
            throw new IllegalArgumentException("Missing required request body: give `body`");
        }
        headers.putIfAbsent("Accept", "application/json, */*;q=0.5");
        String base = server(config, binding, args);
        String url = base.replaceAll("/+$", "") + (path.startsWith("/") ? path : "/" + path)
                + (query.length() > 0 ? "?" + query : "");
        URI uri;
        try {
            uri = URI.create(url);
        }
        catch (IllegalArgumentException bad) {
            throw new IllegalArgumentException("The request address made from the arguments is not a valid URL");
        }
        if (uri.getHost() == null || !List.of("http", "https").contains(String.valueOf(uri.getScheme()).toLowerCase(Locale.ROOT))) {
            throw new IllegalArgumentException("The operation's server is not an http(s) address: " + base);
        }
        return new Request(HttpMethod.valueOf(method.toUpperCase(Locale.ROOT)), uri, headers, body);
    }

    @SuppressWarnings("unchecked")
    private static String server(HttpSourceConfig config, Map<String, Object> binding, Map<String, Object> args) {
        if (config.settings().get("baseUrl") instanceof String baseUrl && !baseUrl.isBlank()) {
            return baseUrl;
        }
        List<Map<String, Object>> servers = (List<Map<String, Object>>) Objects.requireNonNull(binding.get("servers"));
        Map<String, Object> choice = args.get("server") instanceof Map<?, ?> c ? (Map<String, Object>) c : Map.of();
        Map<String, Object> server = servers.stream()
                .filter(s -> Objects.requireNonNull(s.get("url")).equals(choice.get("url"))).findFirst()
                .orElse(servers.isEmpty() ? null : servers.get(0));
        if (server == null) {
            String source = (String) config.settings().get("sourceUrl");
            if (source == null) {
                throw new IllegalArgumentException("The spec names no server and the source has no baseUrl");
            }
            return URI.create(source).resolve("/").toString();
        }
        String url = (String) Objects.requireNonNull(server.get("url"));
        Map<String, Object> variables = server.get("variables") instanceof Map<?, ?> v ? (Map<String, Object>) v : Map.of();
        Map<String, Object> given = choice.get("variables") instanceof Map<?, ?> g ? (Map<String, Object>) g : Map.of();
        for (Map.Entry<String, Object> variable : variables.entrySet()) {
            Object value = given.get(variable.getKey()) != null ? given.get(variable.getKey())
                    : ((Map<String, Object>) variable.getValue()).get("default");
            url = url.replace("{" + variable.getKey() + "}", String.valueOf(value));
        }
        if (!url.contains("://")) {
            String source = (String) config.settings().get("sourceUrl");
            if (source == null) {
                throw new IllegalArgumentException("The spec's server `" + url + "` is relative and the source has no baseUrl");
            }
            url = URI.create(source).resolve(url).toString();
        }
        return url;
    }

    @SuppressWarnings("unchecked")
    private static @Nullable Object value(Map<String, Object> args, String name, String in) {
        if (args.get(name) != null) {
            return args.get(name);
        }
        for (String container : CONTAINERS.getOrDefault(in, List.of())) {
            if (args.get(container) instanceof Map<?, ?> nested && ((Map<String, Object>) nested).get(name) != null) {
                return nested.get(name);
            }
        }
        return null;
    }

    @SuppressWarnings("unchecked")
    private byte[] body(String contentType, Object body) {
        String type = contentType.toLowerCase(Locale.ROOT);
        if (type.contains("json")) {
            return json.writeValueAsBytes(body);
        }
        if (type.startsWith("application/x-www-form-urlencoded") && body instanceof Map<?, ?> form) {
            StringJoiner fields = new StringJoiner("&");
            ((Map<String, Object>) form).forEach((name, value) -> fields.add(encode(name) + "=" + encode(text(value))));
            return fields.toString().getBytes(StandardCharsets.UTF_8);
        }
        return (body instanceof String text ? text : json.writeValueAsString(body)).getBytes(StandardCharsets.UTF_8);
    }

    private Map<String, Object> answer(Integration integration, Connection connection, HttpAnswer answer) {
        Object data = data(answer);
        if (answer.ok()) {
            return ToolResults.ok(data, answer);
        }
        if (answer.status() == 401 || answer.status() == 403) {
            return ToolResults.fail("connection_rejected", "Upstream rejected credentials for \"" + integration.slug()
                    + "\" with HTTP " + answer.status() + ". Re-authenticate or update the connection \""
                    + connection.key().name() + "\" before retrying this tool.", answer.status(), data);
        }
        return ToolResults.fail("upstream_http_error", ToolResults.upstreamMessage(data, answer.status()), answer.status(), data);
    }

    private @Nullable Object data(HttpAnswer answer) {
        if (answer.body().length == 0) {
            return null;
        }
        if (answer.json()) {
            try {
                return json.readValue(answer.body(), Object.class);
            }
            catch (RuntimeException notJson) {
                return answer.text();
            }
        }
        return answer.text();
    }

    private static String text(Object value) {
        return value instanceof String text ? text : value instanceof Map<?, ?> || value instanceof List<?>
                ? tools.jackson.databind.json.JsonMapper.shared().writeValueAsString(value) : String.valueOf(value);
    }

    private static String encode(String value) {
        return URLEncoder.encode(value, StandardCharsets.UTF_8).replace("+", "%20");
    }

    private static String reservedAware(String value) {
        StringBuilder out = new StringBuilder();
        value.codePoints().forEach(c -> {
            String ch = new String(Character.toChars(c));
            out.append(ch.matches("[A-Za-z0-9\\-._~:/?#\\[\\]@!$&'()*+,;=]") ? ch : encode(ch));
        });
        return out.toString();
    }
}
