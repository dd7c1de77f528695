package dev.tether.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;

import org.junit.jupiter.api.Test;

/** Trusted proxies as operators write them: addresses and CIDR ranges, IP literals only, never a name to look up. */
class AddressRangeTest {

    @Test
    void aRangeHoldsTheAddressesItsPrefixCovers() {
        AddressRange private10 = AddressRange.parse("p", "10.0.0.0/8");
        assertThat(private10.contains(address("10.200.3.4"))).isTrue();
        assertThat(private10.contains(address("11.0.0.1"))).isFalse();
        AddressRange odd = AddressRange.parse("p", "192.168.4.0/22");
        assertThat(odd.contains(address("192.168.7.255"))).isTrue();
        assertThat(odd.contains(address("192.168.8.0"))).isFalse();
        assertThat(AddressRange.parse("p", "203.0.113.7").contains(address("203.0.113.7"))).isTrue();
        assertThat(AddressRange.parse("p", "203.0.113.7").contains(address("203.0.113.8"))).isFalse();
        assertThat(AddressRange.parse("p", "0.0.0.0/0").contains(address("8.8.8.8"))).isTrue();
        assertThat(AddressRange.parse("p", "fd00::/8").contains(address("fd12::1"))).isTrue();
        assertThat(AddressRange.parse("p", "::1").contains(address("::1"))).isTrue();
        assertThat(AddressRange.parse("p", "::1").contains(address("127.0.0.1"))).as("another family").isFalse();
    }

    @Test
    void anythingButAnAddressOrARangeStopsTheStartNamingTheSetting() {
        for (String bad : new String[] {"", "proxy.example.com", "10.0.0.0/33", "300.1.1.1", "10.0.0.0/x", "::1/129", "localhost"}) {
            assertThatThrownBy(() -> AddressRange.parse("tether.server.trusted-proxies", bad)).as(bad)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("tether.server.trusted-proxies");
        }
    }

    @Test
    void onlyLiteralsAreAddresses() {
        assertThat(AddressRange.literal("[2001:db8::1]")).hasValue(address("2001:db8::1"));
        assertThat(AddressRange.literal("198.51.100.4")).hasValue(address("198.51.100.4"));
        assertThat(AddressRange.literal("unknown")).isEmpty();
        assertThat(AddressRange.literal("_hidden")).isEmpty();
        assertThat(AddressRange.literal("999.1.1.1")).as("not an address, and not looked up").isEmpty();
        assertThat(AddressRange.literal(":::::")).isEmpty();
    }

    private static InetAddress address(String literal) {
        return AddressRange.literal(literal).orElseThrow();
    }
}
