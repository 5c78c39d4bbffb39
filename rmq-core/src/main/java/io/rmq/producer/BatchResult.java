package io.rmq.producer;

/**
 * The outcome of a batch send.
 *
 * @param sent  messages in the batch
 * @param added messages that were new; {@code sent - added} merged into identical waiting bodies (or repeated
 *              within the batch)
 */
public record BatchResult(int sent, long added) {

    public long merged() {
        return sent - added;
    }
}
