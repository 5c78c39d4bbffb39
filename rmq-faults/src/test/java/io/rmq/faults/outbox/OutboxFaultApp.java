package io.rmq.faults.outbox;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;

import io.rmq.Rmq;
import io.rmq.modulith.RmqEventExternalizationTransport;
import io.rmq.producer.SendResult;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.modulith.events.EventExternalizationConfiguration;
import org.springframework.modulith.events.Externalized;
import org.springframework.modulith.events.RoutingTarget;
import org.springframework.transaction.annotation.Transactional;

/**
 * The application JVM of the outbox scenario ({@link OutboxFaultScenariosTest}): with {@code --faults.outbox.place=N}
 * it commits N reminder rows, each with an {@code @Externalized} event in Modulith's JDBC registry, and prints
 * {@code COMMITTED <id>} after each commit. With {@code --faults.outbox.block-sends=true} RMQ's transport prints
 * {@code SEND-BLOCKED <id>} and blocks before it sends anything, so the scenario can kill -9 it exactly between the
 * commit and the send. Prints {@code READY} when done; a {@code STOP} line on stdin closes it.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class OutboxFaultApp {

    public static final String TOPIC = "outbox-fault";

    @Externalized(TOPIC + "::#{id()}")
    public record Reminder(String id) {
    }

    public static class Reminders {

        private final JdbcTemplate jdbc;
        private final ApplicationEventPublisher events;

        Reminders(JdbcTemplate jdbc, ApplicationEventPublisher events) {
            this.jdbc = jdbc;
            this.events = events;
        }

        @Transactional
        public void remind(String id) {
            jdbc.update("insert into reminders (id) values (?)", id);
            events.publishEvent(new Reminder(id));
        }
    }

    @Bean
    Reminders reminders(JdbcTemplate jdbc, ApplicationEventPublisher events) {
        return new Reminders(jdbc, events);
    }

    @Bean
    EventExternalizationConfiguration eventExternalizationConfiguration() {
        return EventExternalizationConfiguration.defaults(OutboxFaultApp.class.getPackageName()).build();
    }

    /** RMQ's transport, replaced (its auto-configuration backs off) to hold the sends where the scenario wants. */
    @Bean
    RmqEventExternalizationTransport rmqEventExternalizationTransport(Rmq rmq,
            EventExternalizationConfiguration configuration, BeanFactory beanFactory, Environment environment) {
        boolean block = environment.getProperty("faults.outbox.block-sends", Boolean.class, false);
        return new RmqEventExternalizationTransport(rmq, configuration, beanFactory, false) {
            @Override
            public CompletableFuture<SendResult> externalize(Object payload, RoutingTarget target) {
                if (block) {
                    print("SEND-BLOCKED " + ((Reminder) payload).id());
                    try {
                        new CountDownLatch(1).await(); // until kill -9
                    }
                    catch (InterruptedException ex) {
                        Thread.currentThread().interrupt();
                    }
                    return CompletableFuture.failedFuture(new IllegalStateException("blocked send interrupted"));
                }
                return super.externalize(payload, target);
            }
        };
    }

    public static void main(String[] args) throws Exception {
        ConfigurableApplicationContext context = new SpringApplicationBuilder(OutboxFaultApp.class)
                .web(WebApplicationType.NONE).run(args);
        context.getBean(JdbcTemplate.class)
                .execute("create table if not exists reminders (id varchar(64) primary key)");
        Reminders reminders = context.getBean(Reminders.class);
        int place = context.getEnvironment().getProperty("faults.outbox.place", Integer.class, 0);
        for (int i = 0; i < place; i++) {
            String id = "r-" + i;
            reminders.remind(id);
            print("COMMITTED " + id);
        }
        print("READY");
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = stdin.readLine()) != null && !line.equals("STOP")) {
            // wait for STOP (or the parent's end)
        }
        context.close();
        print("STOPPED");
    }

    private static synchronized void print(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
