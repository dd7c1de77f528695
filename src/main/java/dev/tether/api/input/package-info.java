/**
 * Request input checks shared by the controllers: strict JSON decoding, slugs, owners and connection keys,
 * size bounds, and server configurations as the API accepts them. Every refusal is an
 * {@link dev.tether.api.input.InvalidInputException} carrying Executor's tag and a message naming the field.
 */
@NullMarked
package dev.tether.api.input;

import org.jspecify.annotations.NullMarked;
