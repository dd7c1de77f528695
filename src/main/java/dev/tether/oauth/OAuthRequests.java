package dev.tether.oauth;

import java.util.List;
import java.util.Optional;

import dev.tether.api.input.Bounds;
import dev.tether.api.input.Inputs;
import dev.tether.api.input.InvalidInputException;
import dev.tether.store.Owner;

/**
 * The bodies of Executor's OAuth routes that built-ins are twins of, each checked as the route checks it: the
 * controllers ({@code api.OAuthController}, {@code api.OAuthClientsController}) read them from HTTP, {@link OAuthBuiltins}
 * from a built-in's arguments, and both answer a wrong field with the same {@link InvalidInputException}.
 */
public final class OAuthRequests {

    private OAuthRequests() {
    }

    /** Body of {@code POST /api/oauth/start}, the arguments of {@code executor.coreTools.oauth.start}. */
    public record StartRequest(String client, String clientOwner, String owner, String name, String integration, String template,
            String identityLabel, String redirectUri) {

        public OAuthFlows.Start checked() {
            Bounds.check(this);
            return new OAuthFlows.Start(Inputs.requireText(client, "client"), Inputs.owner(clientOwner, "clientOwner"),
                    Inputs.owner(owner, "owner"), Inputs.requireText(name, "name"), Inputs.requireText(integration, "integration"),
                    Inputs.requireText(template, "template"), Inputs.optional(identityLabel));
        }
    }

    /** Body of {@code POST /api/oauth/cancel}, the arguments of {@code executor.coreTools.oauth.cancel}. */
    public record CancelRequest(String state) {

        /** The flow's {@code state}. */
        public String checked() {
            Bounds.check(this);
            return Inputs.requireText(state, "state");
        }
    }

    /** Body of {@code POST /api/oauth/clients}, the arguments of {@code executor.coreTools.oauth.clients.create}. */
    public record CreateClientRequest(String owner, String slug, String authorizationUrl, String tokenUrl, String grant, String clientId,
            String clientSecret, String resource) {

        public OAuthClients.NewClient checked() {
            Bounds.check(this);
            return new OAuthClients.NewClient(Inputs.owner(owner, "owner"), slugOf(slug), Inputs.requireText(authorizationUrl, "authorizationUrl"),
                    Inputs.requireText(tokenUrl, "tokenUrl"), Inputs.requireText(grant, "grant"), Inputs.requireText(clientId, "clientId"),
                    required(clientSecret, "clientSecret"), Inputs.optional(resource));
        }
    }

    /** Body of {@code POST /api/oauth/clients/register-dynamic}, the arguments of {@code …oauth.clients.registerDynamic}. */
    public record RegisterDynamicRequest(String owner, String slug, String registrationEndpoint, String authorizationUrl, String tokenUrl,
            String resource, List<String> scopes, List<String> tokenEndpointAuthMethodsSupported, String clientName,
            String redirectUri, String originIntegration) {

        public OAuthClients.DynamicRegistration checked() {
            Bounds.check(this);
            return new OAuthClients.DynamicRegistration(Inputs.owner(owner, "owner"), slugOf(slug),
                    Inputs.requireText(registrationEndpoint, "registrationEndpoint"),
                    Inputs.requireText(authorizationUrl, "authorizationUrl"), Inputs.requireText(tokenUrl, "tokenUrl"),
                    Inputs.optional(resource), required(scopes, "scopes"), Optional.ofNullable(tokenEndpointAuthMethodsSupported),
                    Inputs.optional(clientName), Inputs.optional(originIntegration));
        }
    }

    /** Body of {@code DELETE /api/oauth/clients/{slug}}. */
    public record RemoveClientRequest(String owner) {

        /** The client's owner. */
        public Owner checked() {
            Bounds.check(this);
            return Inputs.owner(owner, "owner");
        }
    }

    /** The arguments of {@code executor.coreTools.oauth.clients.remove}: what the route takes in its path and body. */
    public record RemoveClientArguments(String owner, String slug) {
    }

    /** Body of {@code POST /api/oauth/probe}, the arguments of {@code executor.coreTools.oauth.probe}. */
    public record ProbeRequest(String url) {

        /** The URL to probe. */
        public String checked() {
            Bounds.check(this);
            return Inputs.requireText(url, "url");
        }
    }

    /** What {@link OAuthClients#createClient} refuses as an {@link IllegalArgumentException} is the body's fault. */
    public static InvalidInputException refused(IllegalArgumentException refused) {
        return InvalidInputException.decode(refused.getMessage());
    }

    private static String slugOf(String value) {
        String slug = Inputs.requireText(value, "slug");
        if (!slug.matches("[A-Za-z0-9][A-Za-z0-9._-]*")) {
            throw InvalidInputException.decode("`slug` may hold letters, digits, '.', '_' and '-', and start with a letter or digit");
        }
        return slug;
    }

    private static <T> T required(T value, String field) {
        if (value == null) {
            throw InvalidInputException.decode("`" + field + "` is required");
        }
        return value;
    }
}
