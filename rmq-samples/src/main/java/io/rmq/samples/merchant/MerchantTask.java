package io.rmq.samples.merchant;

/**
 * "Re-render the pictures of this merchant's item": the body of a {@code merchant-tasks} message. The tier is not in
 * the body: it decides the priority at send time, so a task re-sent after its merchant's upgrade is the same body,
 * merges, and takes the new priority.
 */
public record MerchantTask(String merchant, long itemId) {
}
