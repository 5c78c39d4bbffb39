package io.rmq.readme;

// tag::end-ordering[]
import io.rmq.Rmq;
import org.springframework.stereotype.Component;

@Component
public class LedgerOrdering {

    private final Rmq rmq;   // the engine behind RmqTemplate, a bean of the auto-configuration

    public LedgerOrdering(Rmq rmq) {
        this.rmq = rmq;
    }

    /** Once no ORDERLY listener of the topic runs anywhere: from now on it is consumed CONCURRENT. */
    public long stopOrdering(String topic) {
        return rmq.admin().endOrdering(topic);   // how many taken messages went back to the store
    }
}
// end::end-ordering[]
