package dev.tether.calls;

/** No stored tool has this address. */
public final class ToolNotFoundException extends RuntimeException {

    private final String address;

    public ToolNotFoundException(String address, String why) {
        super("no tool at address '" + address + "': " + why);
        this.address = address;
    }

    public String address() {
        return address;
    }
}
