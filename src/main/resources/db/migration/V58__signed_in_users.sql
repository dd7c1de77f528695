-- Users who signed in through the OIDC provider: their role as the provider last said, and their refresh token (sealed,
-- as every secret), with which a replica asks the provider every tether.identity.oidc.revalidate whether they may still
-- come in. A user the provider refuses is marked disabled; their API tokens and sessions stop with it.
CREATE TABLE identity_user (
    subject         VARCHAR(255)  NOT NULL PRIMARY KEY,
    name            VARCHAR(255),
    email           VARCHAR(320),
    role            VARCHAR(16)   NOT NULL,
    refresh_token   VARCHAR,
    signed_in_at    BIGINT        NOT NULL,
    checked_at      BIGINT        NOT NULL,
    disabled_at     BIGINT,
    disabled_reason VARCHAR(1000)
);

-- Web UI sessions after a sign-in: the cookie holds a random id, the table its SHA-256 only.
CREATE TABLE web_session (
    id_hash    VARCHAR(64)  NOT NULL PRIMARY KEY,
    subject    VARCHAR(255) NOT NULL,
    role       VARCHAR(16)  NOT NULL,
    name       VARCHAR(255),
    created_at BIGINT       NOT NULL,
    expires_at BIGINT       NOT NULL
);
CREATE INDEX web_session_subject ON web_session (subject);

-- Sign-ins in flight, by their state: redeemable once, for ten minutes, on whichever replica the browser comes back to.
CREATE TABLE sign_in (
    state        VARCHAR(64)   NOT NULL PRIMARY KEY,
    nonce        VARCHAR(64)   NOT NULL,
    verifier     VARCHAR(128)  NOT NULL,
    return_to    VARCHAR(2048) NOT NULL,
    redirect_uri VARCHAR(2048) NOT NULL,
    created_at   BIGINT        NOT NULL
);
