package io.rmq.modulith;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

import io.rmq.modulith.shop.Orders;
import io.rmq.modulith.shop.ShopConfiguration;
import io.rmq.test.RedisTopology;
import io.rmq.test.TestPostgres;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * The shop example (io.rmq.modulith.shop) as an application on a real Redis and a real database: Modulith's JDBC
 * event publication registry on H2 (in memory) or PostgreSQL ({@link TestPostgres}), each context with keys and a
 * database of its own.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
@Import({ShopConfiguration.class, Orders.class})
public class ShopApp {

    static final String ORDERS_TABLE = "create table if not exists orders (id varchar(64) primary key,"
            + " customer varchar(64) not null, cents bigint not null)";

    @Bean
    Deliveries deliveries() {
        return new Deliveries();
    }

    @Bean
    InitializingBean ordersTable(JdbcTemplate jdbc) {
        return () -> jdbc.execute(ORDERS_TABLE);
    }

    /** Which database holds the orders and the registry. */
    enum Database {
        H2, POSTGRES;

        Map<String, String> properties() {
            return switch (this) {
                case H2 -> Map.of("spring.datasource.url", "jdbc:h2:mem:shop-" + UUID.randomUUID()
                        + ";DB_CLOSE_DELAY=-1");
                case POSTGRES -> Map.of("spring.datasource.url", TestPostgres.shared().newDatabase("shop"),
                        "spring.datasource.username", TestPostgres.USER);
            };
        }
    }

    /** Properties of a shop on {@code database} and Redis {@code redis}, with keys of its own. */
    static Map<String, String> properties(Database database, Map<String, String> redis) {
        Map<String, String> properties = new LinkedHashMap<>();
        properties.put("spring.main.banner-mode", "off");
        properties.put("spring.modulith.events.jdbc.schema-initialization.enabled", "true");
        properties.put("rmq.key-prefix", "shop-" + UUID.randomUUID().toString().substring(0, 8));
        properties.put("rmq.topics.order-placed.type", "FIXED_TIME");
        properties.put("rmq.topics.order-placed.slot-amount", "4");
        properties.put("rmq.topics.payment-timeout.type", "RANGE_MERGE");
        properties.put("rmq.topics.payment-timeout.slot-amount", "4");
        properties.putAll(database.properties());
        properties.putAll(redis);
        return properties;
    }

    static Map<String, String> properties(Database database, RedisTopology topology) {
        return properties(database, topology.springProperties());
    }

    static ConfigurableApplicationContext start(Map<String, String> properties) {
        return new SpringApplicationBuilder(ShopApp.class).web(WebApplicationType.NONE)
                .properties(properties.entrySet().stream().map(e -> e.getKey() + "=" + e.getValue())
                        .toArray(String[]::new))
                .run();
    }
}
