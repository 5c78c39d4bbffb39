package io.rmq.core;

/**
 * How strictly a stored body is read as a listener's payload type ({@link BodyCodec}); sending is the same either way.
 */
public enum PayloadMapping {

    /**
     * A body that lacks a required property of the type, or has one of the wrong shape, fails with a
     * {@link RmqPayloadMismatchException} naming the type and the property (a listener's message then goes to the dead
     * queue at once). Required are, at any depth (the elements of {@code List<T>}, the values of {@code Map<K, T>},
     * the properties of a generic {@code Envelope<T>}):
     * <ul>
     * <li>every creator property (a record component, a {@code @JsonCreator} parameter): absent or {@code null}
     *     fails;</li>
     * <li>every non-primitive property a bean-style class sets through a setter or field: still {@code null} after
     *     reading (absent with no initial value, or sent as {@code null}) fails; a primitive cannot tell absent from
     *     zero and is not checked;</li>
     * </ul>
     * except a property that is {@code Optional}, annotated {@code @Nullable} (any annotation of that simple name:
     * JSpecify, Jakarta, Spring), {@code @JsonProperty(isRequired = OptBoolean.FALSE)}, has a
     * {@code @JsonProperty(defaultValue = …)}, {@code @JsonSetter(nulls = …)}, {@code @JacksonInject},
     * {@code @JsonAnySetter} or {@code @JsonUnwrapped}. Kotlin classes keep jackson-module-kotlin's rules (a non-null
     * parameter without a default is required). A property the type does not know is accepted (unless the
     * application's mapper fails on unknown properties); the mapper's modules, naming strategy and coercions apply.
     */
    STRICT,

    /**
     * The application's mapper as it is configured (Spring Boot's: an absent property reads as {@code null}, an
     * unknown one is ignored); a body of the wrong shape still fails with a {@link RmqPayloadMismatchException}.
     */
    LENIENT
}
