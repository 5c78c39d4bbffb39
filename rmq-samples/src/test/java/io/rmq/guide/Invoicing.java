package io.rmq.guide;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.rmq.spring.RmqHeaders;
import io.rmq.spring.annotation.RmqListener;
import org.springframework.messaging.handler.annotation.Header;

/** The listener guide's repeated {@code @RmqListener}: one method, two containers, compiled so it cannot rot. */
public class Invoicing {

    final Archive archive = new Archive();

    // tag::repeated-listener[]
    @RmqListener(topic = "invoices", type = "FIXED_TIME")                   // id invoicing.archive
    @RmqListener(topic = "credit-notes", type = "FIXED_TIME", concurrency = "2")   // id invoicing.archive-2
    void archive(String document, @Header(RmqHeaders.TOPIC) String topic) {
        archive.store(topic, document);
    }
    // end::repeated-listener[]

    /** Stands for the document archive: records what was stored, by topic. */
    static class Archive {
        final List<String> stored = new CopyOnWriteArrayList<>();

        void store(String topic, String document) {
            stored.add(topic + ":" + document);
        }
    }
}
