/**
 * Executor's web UI, served from a directory on the API's origin: the page the desktop app shows. Its files go out
 * as they are (hashed {@code /assets/*} cached for a year, {@code index.html} never), every app route gets
 * {@code index.html}, and a missing file is a plain 404. The UI itself is Executor's build; nothing of it lives here.
 */
@NullMarked
package dev.tether.webui;

import org.jspecify.annotations.NullMarked;
