/**
 * Tool catalogs: a sync lists a server's tools on its pooled session (single flight per connection, bounded in
 * parallel), keeps the stored catalog when a sync fails, honours TTLs and {@code list_changed}, and tells
 * listeners when a catalog changed.
 */
@NullMarked
package dev.tether.catalog;

import org.jspecify.annotations.NullMarked;
