package io.rmq.readme;

// tag::quickstart-payload[]
public record OrderRef(String id) {
}
// end::quickstart-payload[]
