package dev.tether.calls;

import java.util.Optional;

import dev.tether.store.ConnectionKey;
import dev.tether.store.Owner;

/** A parsed tool address: {@code tools.<integration>.<owner>.<connection>.<tool>}. */
record ToolAddress(ConnectionKey connection, String tool) {

    static ToolAddress parse(String address) {
        String[] parts = address == null ? new String[0] : address.split("\\.");
        if (parts.length != 5 || !parts[0].equals("tools")) {
            throw new ToolNotFoundException(String.valueOf(address), "expected tools.<integration>.<owner>.<connection>.<tool>");
        }
        Optional<Owner> owner = Owner.parse(parts[2]);
        if (owner.isEmpty()) {
            throw new ToolNotFoundException(address, "owner must be org or user, was " + parts[2]);
        }
        return new ToolAddress(new ConnectionKey(owner.get(), parts[1], parts[3]), parts[4]);
    }
}
