package dev.tether.authserver;

import java.io.IOException;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.stereotype.Component;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.filter.OncePerRequestFilter;

/** Counts requests to the token endpoint, so that a test can tell how often a client asked for a token. */
@Component
@Order(Ordered.HIGHEST_PRECEDENCE)
@RestController
public class TokenRequests extends OncePerRequestFilter {

    private final AtomicInteger count = new AtomicInteger();

    @Override
    protected void doFilterInternal(HttpServletRequest request, HttpServletResponse response, FilterChain chain)
            throws ServletException, IOException {
        if (request.getMethod().equals("POST") && request.getRequestURI().equals("/oauth2/token")) {
            count.incrementAndGet();
        }
        chain.doFilter(request, response);
    }

    @GetMapping("/token-requests")
    Map<String, Integer> count() {
        return Map.of("count", count.get());
    }
}
