package io.rmq.producer;

/**
 * The outcome of one send.
 *
 * @param topic  topic name
 * @param slot   the slot the message went to
 * @param merged true when an identical body was already waiting and this send merged into it
 */
public record SendResult(String topic, int slot, boolean merged) {
}
