package io.rmq.guide;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.rmq.consumer.RmqBatchFailure;
import io.rmq.spring.RmqHeaders;
import io.rmq.spring.annotation.RmqListener;
import org.springframework.messaging.handler.annotation.Header;

/** The listener guide's batch listener: the events that could not be indexed fail alone. */
public class OrderIndexing {

    public record OrderEvent(String id) {
    }

    final Search search = new Search();

    // tag::listener-batch[]
    @RmqListener(topic = "order-events", batch = "true", batchSize = "100")
    void onEvents(List<OrderEvent> events, @Header(RmqHeaders.ATTEMPT) List<Integer> attempts) {
        List<Integer> failed = search.indexAll(events);          // positions that could not be indexed
        if (!failed.isEmpty()) {
            throw new RmqBatchFailure("not indexed", null, failed.stream().mapToInt(i -> i).toArray());
        }
    }
    // end::listener-batch[]

    /** Stands for a search index: the events of {@link #failOnce} fail their first indexing; counts the tries. */
    static class Search {
        final Set<String> failOnce = ConcurrentHashMap.newKeySet();
        final Map<String, Integer> tries = new ConcurrentHashMap<>();

        List<Integer> indexAll(List<OrderEvent> events) {
            List<Integer> failed = new ArrayList<>();
            for (int i = 0; i < events.size(); i++) {
                String id = events.get(i).id();
                tries.merge(id, 1, Integer::sum);
                if (failOnce.remove(id)) {
                    failed.add(i);
                }
            }
            return failed;
        }
    }
}
