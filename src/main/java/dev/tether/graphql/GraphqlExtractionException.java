package dev.tether.graphql;

/** An introspection answer that gives no usable tools: not a schema, or no root query or mutation fields. */
public final class GraphqlExtractionException extends RuntimeException {

    public GraphqlExtractionException(String message) {
        super(message);
    }

    public GraphqlExtractionException(String message, Throwable cause) {
        super(message, cause);
    }
}
