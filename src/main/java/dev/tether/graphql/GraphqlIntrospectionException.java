package dev.tether.graphql;

/** An endpoint that could not be introspected: unreachable, refusing, or not answering as a GraphQL server. */
public final class GraphqlIntrospectionException extends RuntimeException {

    public GraphqlIntrospectionException(String message) {
        super(message);
    }

    public GraphqlIntrospectionException(String message, Throwable cause) {
        super(message, cause);
    }
}
