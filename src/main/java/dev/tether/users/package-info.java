/**
 * The users of a shared gateway: who is asking ({@code Authentication}, which gives every request its
 * {@link dev.tether.identity.Principal}), personal API tokens ({@code ApiTokens}), the audit trail ({@code AuditTrail})
 * and, in {@code oidc} mode, sign-in through an OpenID Connect provider. What a principal may see and change is decided
 * where rows are read and written ({@code store.storage.OwnerScope}), not here.
 */
@NullMarked
package dev.tether.users;

import org.jspecify.annotations.NullMarked;
