/**
 * Credential providers as Executor's API shows them: where connections' values live (Tether's sealed credential
 * store is the one default provider), and their items by id and label, never values. Also answers the
 * {@code executor.coreTools.providers.*} built-ins.
 */
@NullMarked
package dev.tether.providers;

import org.jspecify.annotations.NullMarked;
