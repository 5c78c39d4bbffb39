package io.rmq.samples.redis;

import java.util.LinkedHashMap;
import java.util.Map;

import org.junit.jupiter.api.Test;

import org.springframework.boot.SpringApplication;
import org.springframework.core.env.AbstractEnvironment;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.SystemEnvironmentPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A configured Redis, in any of the forms Spring Boot accepts, means no embedded server. (The other branch, starting
 * one, is what {@code spring-boot:run} and {@code java -jar} do; tests never start it.)
 */
class EmbeddedRedisEnvironmentPostProcessorTest {

    @Test
    void hostSetInApplicationProperties() {
        assertNoEmbeddedRedis(postProcessed(new MapPropertySource("application", Map.of("spring.data.redis.host", "redis.example"))));
    }

    @Test
    void portOnly() {
        assertNoEmbeddedRedis(postProcessed(new MapPropertySource("application", Map.of("spring.data.redis.port", "6380"))));
    }

    @Test
    void clusterNodesAsAnIndexedList() {
        assertNoEmbeddedRedis(postProcessed(new MapPropertySource("application",
                Map.of("spring.data.redis.cluster.nodes[0]", "10.0.0.1:7000", "spring.data.redis.cluster.nodes[1]", "10.0.0.2:7000"))));
    }

    @Test
    void urlFromAnEnvironmentVariable() {
        assertNoEmbeddedRedis(postProcessed(new SystemEnvironmentPropertySource("systemEnvironment",
                Map.of("SPRING_DATA_REDIS_URL", "redis://user:secret@redis.example:6379"))));
    }

    @Test
    void portFromAPlaceholder() {
        Map<String, Object> props = new LinkedHashMap<>();
        props.put("spring.data.redis.port", "${REDIS_PORT}");
        props.put("REDIS_PORT", "7001");
        assertNoEmbeddedRedis(postProcessed(new MapPropertySource("application", props)));
    }

    /** Like a test's @DynamicPropertySource: added after the environment post-processors have run. */
    @Test
    void sentinelNodesAddedAfterPostProcessing() {
        ConfigurableEnvironment environment = postProcessed();
        environment.getPropertySources().addFirst(new MapPropertySource("dynamic",
                Map.of("spring.data.redis.sentinel.nodes", "10.0.0.1:26379", "spring.data.redis.sentinel.master", "mymaster")));
        assertNoEmbeddedRedis(environment);
    }

    @Test
    void otherPropertiesAreNeverAnswered() {
        ConfigurableEnvironment environment = postProcessed();
        assertThat(environment.getProperty("spring.data.redis.password")).isNull();
        assertThat(environment.getProperty("spring.data.redis.database")).isNull();
        assertThat(EmbeddedRedisEnvironmentPostProcessor.embeddedRedisPort(environment)).isEmpty();
    }

    private static ConfigurableEnvironment postProcessed(org.springframework.core.env.PropertySource<?>... sources) {
        ConfigurableEnvironment environment = new AbstractEnvironment() {
        };
        for (org.springframework.core.env.PropertySource<?> source : sources) {
            environment.getPropertySources().addLast(source);
        }
        new EmbeddedRedisEnvironmentPostProcessor().postProcessEnvironment(environment, new SpringApplication());
        assertThat(environment.getPropertySources().contains(EmbeddedRedisEnvironmentPostProcessor.PROPERTY_SOURCE_NAME))
                .isTrue();
        return environment;
    }

    private static void assertNoEmbeddedRedis(ConfigurableEnvironment environment) {
        Object host = environment.getPropertySources().get(EmbeddedRedisEnvironmentPostProcessor.PROPERTY_SOURCE_NAME)
                .getProperty("spring.data.redis.host");
        Object port = environment.getPropertySources().get(EmbeddedRedisEnvironmentPostProcessor.PROPERTY_SOURCE_NAME)
                .getProperty("spring.data.redis.port");
        assertThat(host).isNull();
        assertThat(port).isNull();
        assertThat(EmbeddedRedisEnvironmentPostProcessor.embeddedRedisPort(environment)).isEmpty();
    }
}
