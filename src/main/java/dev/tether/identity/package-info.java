/**
 * Who is asking: the {@link dev.tether.identity.Principal} (tenant, subject, role and how it proved itself) that every
 * request carries from the authentication filter on, in the Reactor context ({@link dev.tether.identity.Principals}),
 * and the rules a principal's rows and actions obey ({@link dev.tether.identity.Principal#sees},
 * {@link dev.tether.identity.Principal#mayWrite}). The store applies them where rows are read and written; this
 * package knows no HTTP and no table, so that the store, the calls and the executions below the API can all depend on it.
 */
@NullMarked
package dev.tether.identity;

import org.jspecify.annotations.NullMarked;
