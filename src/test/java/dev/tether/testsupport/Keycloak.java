package dev.tether.testsupport;

import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The real Keycloak the OIDC tests sign in to: {@code TETHER_TEST_KEYCLOAK_URL} ({@code http://host:port}), realm {@code tether}
 * from {@code src/test/resources/keycloak/tether-realm.json}, its master admin {@code TETHER_TEST_KEYCLOAK_ADMIN} /
 * {@code _PASSWORD} (default {@code kcadmin}); {@code .ci/run} starts it. Tokens come the way a CLI or an agent gets them
 * (the password grant of client {@code tether}); a browser's sign-in is walked by hand, its login form posted as a
 * person would.
 */
public record Keycloak(String url, String adminUser, String adminPassword) {

    public static final String REALM = "tether";
    public static final String CLIENT = "tether";
    public static final String CLIENT_SECRET = "tether-test-secret";
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final Pattern FORM_ACTION = Pattern.compile("<form[^>]*id=\"kc-form-login\"[^>]*action=\"([^\"]+)\"");

    public static Optional<Keycloak> fromEnvironment() {
        String url = System.getenv("TETHER_TEST_KEYCLOAK_URL");
        if (url == null || url.isBlank()) {
            return Optional.empty();
        }
        return Optional.of(new Keycloak(url.endsWith("/") ? url.substring(0, url.length() - 1) : url,
                System.getenv().getOrDefault("TETHER_TEST_KEYCLOAK_ADMIN", "kcadmin"),
                System.getenv().getOrDefault("TETHER_TEST_KEYCLOAK_ADMIN_PASSWORD", "kcadmin")));
    }

    public String issuer() {
        return url + "/realms/" + REALM;
    }

    /** A user's tokens by the password grant ({@code <name>-pass}), as a CLI gets them: the answer's JSON. */
    public JsonNode tokens(String user) {
        return JSON.readTree(post(issuer() + "/protocol/openid-connect/token", Map.of("grant_type", "password", "client_id", CLIENT,
                "client_secret", CLIENT_SECRET, "username", user, "password", user + "-pass", "scope", "openid"), null));
    }

    /** A user's access token (a JWT whose audience is {@code tether}). */
    public String accessToken(String user) {
        return tokens(user).path("access_token").asString();
    }

    /** Enables or disables a user, as the realm's administrator does in the console. */
    public void enabled(String user, boolean enabled) {
        String admin = JSON.readTree(post(url + "/realms/master/protocol/openid-connect/token", Map.of("grant_type", "password",
                "client_id", "admin-cli", "username", adminUser, "password", adminPassword), null)).path("access_token").asString();
        JsonNode found = JSON.readTree(get(url + "/admin/realms/" + REALM + "/users?exact=true&username=" + user, admin));
        String id = found.get(0).path("id").asString();
        send(HttpRequest.newBuilder(URI.create(url + "/admin/realms/" + REALM + "/users/" + id)).header("Authorization", "Bearer " + admin)
                .header("Content-Type", "application/json").PUT(HttpRequest.BodyPublishers.ofString("{\"enabled\":" + enabled + "}")));
    }

    /**
     * A browser's sign-in to a daemon's web UI, walked by hand: {@code /api/auth/login} sends it to Keycloak's login page,
     * whose form is posted with the user's password; Keycloak sends it back to {@code /api/auth/callback}, which sets the
     * session cookie. Emits the cookie's value.
     */
    public String signIn(int daemonPort, String user) {
        return signIn(daemonPort, daemonPort, user);
    }

    /**
     * As {@link #signIn(int, String)}, begun on the daemon at {@code loginPort} and ended on the one at {@code callbackPort}:
     * replicas behind a load balancer with no sticky sessions, the browser's return landing on another than its start.
     */
    public String signIn(int loginPort, int callbackPort, String user) {
        int daemonPort = loginPort;
        // Cookies by hand: Keycloak marks its session cookies Secure, which a browser sends to http://127.0.0.1 (a secure
        // context) and Java's cookie manager does not.
        HttpClient browser = HttpClient.newBuilder().followRedirects(HttpClient.Redirect.NEVER).connectTimeout(Duration.ofSeconds(10)).build();
        Map<String, String> jar = new java.util.LinkedHashMap<>();
        HttpResponse<String> login = send(browser, HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + daemonPort
                + "/api/auth/login?return=/")).GET());
        String toKeycloak = login.headers().firstValue("location").orElseThrow(() -> new AssertionError("no redirect: " + login.body()));
        HttpResponse<String> page = kept(jar, send(browser, withCookies(jar, HttpRequest.newBuilder(URI.create(toKeycloak)).GET())));
        Matcher action = FORM_ACTION.matcher(page.body());
        if (!action.find()) {
            throw new AssertionError("Keycloak's login page has no login form: " + page.statusCode());
        }
        String form = Map.of("username", user, "password", user + "-pass", "credentialId", "").entrySet().stream()
                .map(e -> e.getKey() + "=" + URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8)).collect(Collectors.joining("&"));
        HttpResponse<String> posted = kept(jar, send(browser, withCookies(jar, HttpRequest.newBuilder(URI.create(action.group(1)
                        .replace("&amp;", "&")))
                .header("Content-Type", "application/x-www-form-urlencoded").POST(HttpRequest.BodyPublishers.ofString(form)))));
        String back = posted.headers().firstValue("location").orElseThrow(() -> new AssertionError("Keycloak did not send the browser"
                + " back (" + posted.statusCode() + ")"));
        HttpResponse<String> callback = send(browser, HttpRequest.newBuilder(URI.create(back.replace(":" + loginPort + "/",
                ":" + callbackPort + "/"))).GET());
        if (callback.statusCode() != 302) {
            throw new AssertionError("the callback answered " + callback.statusCode() + ": " + callback.body());
        }
        return callback.headers().allValues("set-cookie").stream().filter(cookie -> cookie.startsWith("tether_session="))
                .map(cookie -> cookie.substring("tether_session=".length(), cookie.indexOf(';')))
                .findFirst().orElseThrow(() -> new AssertionError("no session cookie: " + callback.headers().map()));
    }

    private static HttpRequest.Builder withCookies(Map<String, String> jar, HttpRequest.Builder request) {
        if (!jar.isEmpty()) {
            request.header("Cookie", jar.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining("; ")));
        }
        return request;
    }

    private static HttpResponse<String> kept(Map<String, String> jar, HttpResponse<String> response) {
        for (String cookie : response.headers().allValues("set-cookie")) {
            String pair = cookie.split(";", 2)[0];
            int equals = pair.indexOf('=');
            if (equals > 0) {
                jar.put(pair.substring(0, equals).strip(), pair.substring(equals + 1).strip());
            }
        }
        return response;
    }

    private static String post(String url, Map<String, String> form, String bearer) {
        String body = form.entrySet().stream().map(e -> e.getKey() + "=" + URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8))
                .collect(Collectors.joining("&"));
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url)).header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(body));
        if (bearer != null) {
            request.header("Authorization", "Bearer " + bearer);
        }
        return send(request).body();
    }

    private static String get(String url, String bearer) {
        return send(HttpRequest.newBuilder(URI.create(url)).header("Authorization", "Bearer " + bearer).GET()).body();
    }

    private static HttpResponse<String> send(HttpRequest.Builder request) {
        HttpResponse<String> response = send(HttpClient.newHttpClient(), request);
        if (response.statusCode() >= 400) {
            throw new AssertionError(response.statusCode() + " from Keycloak: " + response.body());
        }
        return response;
    }

    private static HttpResponse<String> send(HttpClient client, HttpRequest.Builder request) {
        try {
            return client.send(request.timeout(TIMEOUT).build(), HttpResponse.BodyHandlers.ofString());
        }
        catch (IOException ex) {
            throw new java.io.UncheckedIOException(ex);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }

    /** The condition behind {@link RequiresKeycloak}: {@link Prerequisites}' rule, Keycloak being the piece. */
    public static final class Condition implements ExecutionCondition {

        @Override
        public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
            return Prerequisites.condition(fromEnvironment().isPresent(), "no Keycloak for the users' tests (TETHER_TEST_KEYCLOAK_URL unset)",
                    ".ci/run starts one on port 8180 with realm tether", context);
        }
    }
}
