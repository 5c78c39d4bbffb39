package io.rmq.autoconfigure;

import java.util.List;

import io.lettuce.core.RedisURI;
import io.lettuce.core.SslOptions;
import io.lettuce.core.resource.ClientResources;
import io.rmq.redis.RedisClientSettings;
import io.rmq.redis.RmqRedisClient;
import org.springframework.boot.data.redis.autoconfigure.DataRedisConnectionDetails;
import org.springframework.boot.ssl.SslBundle;
import org.jspecify.annotations.Nullable;

/**
 * Translates Spring Boot's Redis connection details into RMQ's own Lettuce client: where Redis is (standalone,
 * Sentinel or Cluster, in Boot's order: Sentinel first, then Cluster), its credentials and database, and SSL (Boot's
 * bundle, or a {@code rediss://} URL). Everything else (timeouts, reconnect, topology refresh) is RMQ's, from
 * {@link RedisClientSettings}. Whatever fills the details works unchanged: {@code spring.data.redis.*}, Testcontainers'
 * and Docker Compose's service connections, a {@code DataRedisConnectionDetails} bean of the application's.
 */
final class RmqRedisClientFactory {

    private RmqRedisClientFactory() {
    }

    /**
     * @param details where Redis is
     * @param urlSsl  whether {@code spring.data.redis.url} says {@code rediss://} (Boot turns SSL on for it without a
     *                bundle)
     * @param shared  the application's client resources, or null (RMQ's client then has its own)
     */
    static RmqRedisClient create(DataRedisConnectionDetails details, boolean urlSsl, @Nullable ClientResources shared,
            RedisClientSettings settings) {
        SslBundle bundle = details.getSslBundle();
        boolean ssl = bundle != null || urlSsl;
        SslOptions sslOptions = bundle == null ? null : sslOptions(bundle);
        DataRedisConnectionDetails.Sentinel sentinel = details.getSentinel();
        if (sentinel != null) {
            RedisURI.Builder uri = RedisURI.builder().withSentinelMasterId(sentinel.getMaster())
                    .withDatabase(sentinel.getDatabase()).withSsl(ssl);
            authenticate(uri, details.getUsername(), details.getPassword());
            for (DataRedisConnectionDetails.Node node : sentinel.getNodes()) {
                RedisURI.Builder sentinelUri = RedisURI.builder().withHost(node.host()).withPort(node.port())
                        .withSsl(ssl);
                authenticate(sentinelUri, sentinel.getUsername(), sentinel.getPassword());
                uri.withSentinel(sentinelUri.build());
            }
            return RmqRedisClient.standalone(uri.build(), sslOptions, shared, settings);
        }
        DataRedisConnectionDetails.Cluster cluster = details.getCluster();
        if (cluster != null) {
            List<RedisURI> seeds = cluster.getNodes().stream().map(node -> {
                RedisURI.Builder uri = RedisURI.builder().withHost(node.host()).withPort(node.port()).withSsl(ssl);
                authenticate(uri, details.getUsername(), details.getPassword());
                return uri.build();
            }).toList();
            return RmqRedisClient.cluster(seeds, sslOptions, shared, settings);
        }
        if (details.getMasterReplica() != null) {
            throw new IllegalStateException("RMQ does not support a static master/replica Redis setup"
                    + " (spring.data.redis.masterreplica.*): use a standalone server, Sentinel or a Cluster, or set"
                    + " rmq.redis.connection=application to try the application's own client");
        }
        DataRedisConnectionDetails.Standalone standalone = details.getStandalone();
        if (standalone == null) {
            throw new IllegalStateException("The Redis connection details (" + details.getClass().getName()
                    + ") name no standalone server, Sentinel or Cluster for RMQ to connect to");
        }
        RedisURI.Builder uri = RedisURI.builder().withHost(standalone.getHost()).withPort(standalone.getPort())
                .withDatabase(standalone.getDatabase()).withSsl(ssl);
        authenticate(uri, details.getUsername(), details.getPassword());
        return RmqRedisClient.standalone(uri.build(), sslOptions, shared, settings);
    }

    private static void authenticate(RedisURI.Builder uri, @Nullable String username, @Nullable String password) {
        if (password == null || password.isEmpty()) {
            return;
        }
        if (username == null || username.isEmpty()) {
            uri.withPassword(password.toCharArray());
        }
        else {
            uri.withAuthentication(username, password.toCharArray());
        }
    }

    /** Key and trust material, ciphers and protocols of a Boot SSL bundle, as Boot gives them to its own client. */
    static SslOptions sslOptions(SslBundle bundle) {
        SslOptions.Builder builder = SslOptions.builder()
                .keyManager(bundle.getManagers().getKeyManagerFactory())
                .trustManager(bundle.getManagers().getTrustManagerFactory());
        org.springframework.boot.ssl.SslOptions options = bundle.getOptions();
        if (options.getCiphers() != null) {
            builder.cipherSuites(options.getCiphers());
        }
        if (options.getEnabledProtocols() != null) {
            builder.protocols(options.getEnabledProtocols());
        }
        return builder.build();
    }

    /** Where the details point, for comparing with the application's connection factory. */
    static String address(DataRedisConnectionDetails details) {
        if (details.getSentinel() != null) {
            return "master '" + details.getSentinel().getMaster() + "'";
        }
        if (details.getCluster() != null) {
            return "cluster " + details.getCluster().getNodes().stream().map(n -> n.host() + ":" + n.port()).sorted()
                    .toList();
        }
        DataRedisConnectionDetails.Standalone standalone = details.getStandalone();
        return standalone == null ? "?" : standalone.getHost() + ":" + standalone.getPort();
    }
}
