package io.rmq.spring.dashboard;

import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

import org.springframework.http.MediaType;
import org.springframework.util.ClassUtils;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The dashboard's routes in a Reactive (WebFlux) application. RMQ's admin calls wait for Redis, so they run on the
 * bounded-elastic scheduler, never on an event-loop thread.
 */
public final class RmqDashboardWebFlux {

    private static final boolean CSRF_PRESENT = ClassUtils.isPresent(
            "org.springframework.security.web.server.csrf.CsrfToken", RmqDashboardWebFlux.class.getClassLoader());

    private RmqDashboardWebFlux() {
    }

    public static RouterFunction<ServerResponse> routes(RmqDashboard dashboard) {
        String path = dashboard.path();
        return RouterFunctions.route()
                .GET(path, request -> page(dashboard, request))
                .GET(path + "/", request -> page(dashboard, request))
                .GET(path + "/{asset:dashboard\\.(?:js|css)}", request -> asset(dashboard, request.pathVariable("asset")))
                .GET(path + "/api/csrf", RmqDashboardWebFlux::csrf)
                .GET(path + "/api/**", request -> {
                    String route = dashboard.route(pathOf(request));
                    return Mono.fromCallable(() -> dashboard.get(route, name -> request.queryParam(name).orElse(null)))
                            .subscribeOn(Schedulers.boundedElastic()).flatMap(RmqDashboardWebFlux::reply);
                })
                .POST(path + "/api/**", request -> {
                    String route = dashboard.route(pathOf(request));
                    Mono<String> who = request.principal().map(java.security.Principal::getName)
                            .defaultIfEmpty("anonymous").map(name -> request.remoteAddress()
                                    .map(a -> name + " from " + a.getHostString()).orElse(name));
                    return request.bodyToMono(String.class).defaultIfEmpty("").zipWith(who)
                            .publishOn(Schedulers.boundedElastic())
                            .map(sent -> dashboard.post(route, sent.getT1(), sent.getT2()))
                            .flatMap(RmqDashboardWebFlux::reply);
                })
                .build();
    }

    private static String pathOf(ServerRequest request) {
        return request.requestPath().pathWithinApplication().value();
    }

    private static Mono<ServerResponse> page(RmqDashboard dashboard, ServerRequest request) {
        return ServerResponse.ok().contentType(new MediaType("text", "html", StandardCharsets.UTF_8))
                .header("Content-Security-Policy", RmqDashboard.CONTENT_SECURITY_POLICY)
                .header("Cache-Control", "no-store").header("X-Content-Type-Options", "nosniff")
                .bodyValue(dashboard.page(request.requestPath().contextPath().value()));
    }

    private static Mono<ServerResponse> asset(RmqDashboard dashboard, String name) {
        RmqDashboard.Asset asset = dashboard.asset(name);
        if (asset == null) {
            return ServerResponse.notFound().build();
        }
        return ServerResponse.ok().contentType(MediaType.parseMediaType(asset.contentType()))
                .header("Cache-Control", "no-cache").header("X-Content-Type-Options", "nosniff")
                .bodyValue(new String(asset.content(), StandardCharsets.UTF_8));
    }

    private static Mono<ServerResponse> reply(RmqDashboard.Reply reply) {
        return ServerResponse.status(reply.status()).contentType(MediaType.APPLICATION_JSON)
                .header("Cache-Control", "no-store").bodyValue(RmqDashboard.json(reply.body()));
    }

    private static Mono<ServerResponse> csrf(ServerRequest request) {
        Mono<Map<String, Object>> token = CSRF_PRESENT ? SecurityCsrf.token(request) : Mono.just(Map.of());
        return token.defaultIfEmpty(Map.of()).flatMap(t -> reply(new RmqDashboard.Reply(200, t)));
    }

    /** Loaded only when Spring Security is on the class path; its CSRF filter leaves a Mono of the token. */
    private static final class SecurityCsrf {

        @SuppressWarnings("unchecked")
        static Mono<Map<String, Object>> token(ServerRequest request) {
            Object attribute = request.attribute(org.springframework.security.web.server.csrf.CsrfToken.class.getName())
                    .orElse(null);
            if (attribute instanceof Mono<?> mono) {
                return ((Mono<org.springframework.security.web.server.csrf.CsrfToken>) mono).map(token -> {
                    Map<String, Object> out = new LinkedHashMap<>();
                    out.put("headerName", token.getHeaderName());
                    out.put("token", token.getToken());
                    return out;
                });
            }
            return Mono.just(Map.of());
        }
    }
}
