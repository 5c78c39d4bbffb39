package io.rmq.spring.dashboard;

import java.util.LinkedHashMap;
import java.util.Map;

import org.springframework.http.MediaType;
import org.springframework.util.ClassUtils;
import org.springframework.web.servlet.function.RouterFunction;
import org.springframework.web.servlet.function.RouterFunctions;
import org.springframework.web.servlet.function.ServerRequest;
import org.springframework.web.servlet.function.ServerResponse;

/** The dashboard's routes in a Servlet (Spring MVC) application. */
public final class RmqDashboardWebMvc {

    private static final boolean CSRF_PRESENT = ClassUtils.isPresent(
            "org.springframework.security.web.csrf.CsrfToken", RmqDashboardWebMvc.class.getClassLoader());

    private RmqDashboardWebMvc() {
    }

    public static RouterFunction<ServerResponse> routes(RmqDashboard dashboard) {
        String path = dashboard.path();
        return RouterFunctions.route()
                .GET(path, request -> page(dashboard, request))
                .GET(path + "/", request -> page(dashboard, request))
                .GET(path + "/{asset:dashboard\\.(?:js|css)}", request -> asset(dashboard, request.pathVariable("asset")))
                .GET(path + "/api/csrf", RmqDashboardWebMvc::csrf)
                .GET(path + "/api/**", request -> reply(dashboard.get(dashboard.route(pathOf(request)),
                        name -> request.param(name).orElse(null))))
                .POST(path + "/api/**", request -> reply(dashboard.post(dashboard.route(pathOf(request)),
                        request.body(String.class), who(request))))
                .build();
    }

    /** Who sends a POST, for the audit line: the principal's name (else anonymous) and the client's address. */
    private static String who(ServerRequest request) {
        String name = request.principal().map(java.security.Principal::getName).orElse("anonymous");
        return request.remoteAddress().map(a -> name + " from " + a.getHostString()).orElse(name);
    }

    private static String pathOf(ServerRequest request) {
        return request.requestPath().pathWithinApplication().value();
    }

    private static ServerResponse page(RmqDashboard dashboard, ServerRequest request) {
        return ServerResponse.ok().contentType(new MediaType("text", "html", java.nio.charset.StandardCharsets.UTF_8))
                .header("Content-Security-Policy", RmqDashboard.CONTENT_SECURITY_POLICY)
                .header("Cache-Control", "no-store").header("X-Content-Type-Options", "nosniff")
                .body(dashboard.page(request.requestPath().contextPath().value()));
    }

    private static ServerResponse asset(RmqDashboard dashboard, String name) {
        RmqDashboard.Asset asset = dashboard.asset(name);
        if (asset == null) {
            return ServerResponse.notFound().build();
        }
        return ServerResponse.ok().contentType(MediaType.parseMediaType(asset.contentType()))
                .header("Cache-Control", "no-cache").header("X-Content-Type-Options", "nosniff").body(asset.content());
    }

    private static ServerResponse reply(RmqDashboard.Reply reply) {
        return ServerResponse.status(reply.status()).contentType(MediaType.APPLICATION_JSON)
                .header("Cache-Control", "no-store").body(RmqDashboard.json(reply.body()));
    }

    /** The request's CSRF token (Spring Security's filter put it there), for the page to send with its POSTs. */
    private static ServerResponse csrf(ServerRequest request) {
        Map<String, Object> token = CSRF_PRESENT ? SecurityCsrf.token(request) : Map.of();
        return reply(new RmqDashboard.Reply(200, token));
    }

    /** Loaded only when Spring Security is on the class path. */
    private static final class SecurityCsrf {

        static Map<String, Object> token(ServerRequest request) {
            Object attribute = request.attribute(org.springframework.security.web.csrf.CsrfToken.class.getName())
                    .orElse(null);
            if (attribute instanceof org.springframework.security.web.csrf.CsrfToken token) {
                Map<String, Object> out = new LinkedHashMap<>();
                out.put("headerName", token.getHeaderName());
                out.put("token", token.getToken());
                return out;
            }
            return Map.of();
        }
    }
}
