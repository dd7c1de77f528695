package dev.tether.oauth;

import java.util.LinkedHashMap;
import java.util.Map;

import tools.jackson.databind.json.JsonMapper;

import dev.tether.views.Views.ConnectionView;

/**
 * The page the browser shows after an OAuth authorization: whether it worked, that the window may be closed, and
 * the outcome handed to the window that opened it the ways Executor's web UI listens for (a message to the
 * opener, a broadcast channel, local storage) under Executor's message type. Every value from the URL or the
 * authorization server is escaped for where it goes.
 */
public final class CallbackPage {

    private static final String MESSAGE_TYPE = "executor:oauth-result";

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private CallbackPage() {
    }

    /**
     * Executor's popup message of a flow's outcome: {@code executor:oauth-result}, with the connection or the error.
     * The page hands it to the window that opened it; {@code GET /api/oauth/await/{sessionId}} answers it as JSON.
     */
    public static Map<String, Object> message(OAuthFlows.Outcome outcome) {
        Map<String, Object> payload = new LinkedHashMap<>();
        payload.put("type", MESSAGE_TYPE);
        payload.put("ok", outcome.ok());
        payload.put("sessionId", outcome.state());
        outcome.connection().ifPresentOrElse(connection -> {
            ConnectionView view = OAuthViews.connection(connection);
            payload.put("owner", view.owner());
            payload.put("name", view.name());
            payload.put("integration", view.integration());
            payload.put("template", view.template());
            payload.put("provider", view.provider());
            payload.put("address", view.address());
            payload.put("identityLabel", view.identityLabel());
            payload.put("expiresAt", view.expiresAt());
            payload.put("oauthClient", view.oauthClient());
            payload.put("oauthClientOwner", view.oauthClientOwner());
            payload.put("oauthScope", view.oauthScope());
        }, () -> {
            payload.put("error", outcome.error());
            outcome.details().filter(details -> !details.equals(outcome.error())).ifPresent(details -> payload.put("errorDetails", details));
        });
        return payload;
    }

    /** The page, with {@code payload} (a {@link #message}) for the window that opened it. */
    public static String render(Map<String, Object> payload) {
        boolean ok = Boolean.TRUE.equals(payload.get("ok"));
        String title = ok ? "Connected" : "Connection failed";
        String message = ok ? "Authentication complete. You may close this window."
                : payload.get("error") + ". You may close this window and try again.";
        Object details = payload.get("errorDetails");
        String detailsHtml = details == null ? ""
                : "<details><summary>Details</summary><pre>" + html(String.valueOf(details)) + "</pre></details>";
        return """
                <!doctype html>
                <html lang="en">
                <head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>%s</title>
                <style>body{font-family:system-ui,sans-serif;display:flex;align-items:center;justify-content:center;min-height:100vh;margin:0}
                main{text-align:center;max-width:420px;padding:24px}h1{font-size:18px}p{color:#555}pre{white-space:pre-wrap;text-align:left;font-size:12px}</style>
                </head>
                <body><main><h1>%s</h1><p>%s</p>%s</main>
                <script>
                (function(){var p=%s;var c="%s";
                try{if(window.opener)window.opener.postMessage(p,window.location.origin)}catch(e){}
                try{if("BroadcastChannel" in window){var b=new BroadcastChannel(c);b.postMessage(p);setTimeout(function(){b.close()},100)}}catch(e){}
                try{localStorage.setItem(c,JSON.stringify(p))}catch(e){}
                if(p.ok)setTimeout(function(){window.close()},400);})();
                </script>
                </body></html>
                """.formatted(html(title), html(title), html(message), detailsHtml, script(payload), MESSAGE_TYPE);
    }

    private static String html(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;").replace("'", "&#39;");
    }

    /** JSON that cannot end the script element or open a comment in it. */
    private static String script(Object value) {
        return JSON.writeValueAsString(value).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
                .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029");
    }
}
