package io.rmq.modulith.shop;

// docs/outbox.md's example, imports included; compiled so it cannot rot
// tag::outbox-service[]
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

@Service
public class Orders {

    private final JdbcTemplate jdbc;
    private final ApplicationEventPublisher events;

    public Orders(JdbcTemplate jdbc, ApplicationEventPublisher events) {
        this.jdbc = jdbc;
        this.events = events;
    }

    /**
     * The order row and both events' publications commit together (Modulith writes them to its registry in this
     * transaction); RMQ gets the events after the commit, and again after a crash until Redis has taken them.
     */
    @Transactional
    public void place(String orderId, String customer, long cents) {
        jdbc.update("insert into orders (id, customer, cents) values (?, ?, ?)", orderId, customer, cents);
        events.publishEvent(new OrderPlaced(orderId, customer, cents));
        events.publishEvent(new PaymentDue(orderId));
    }
}
// end::outbox-service[]
