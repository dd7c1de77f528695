package dev.tether.session;

import java.util.Optional;

import dev.tether.mcp.BearerToken;
import dev.tether.store.Connection;

/** Where a connection's sessions get an OAuth bearer token from: the oauth package, for connections it authorized. */
public interface BearerTokens {

    /** None at all: for pools wired by hand without OAuth. */
    BearerTokens NONE = connection -> Optional.empty();

    /** The token source of a connection made by an OAuth flow; empty for any other. */
    Optional<BearerToken> bearer(Connection connection);
}
