package io.rmq.core;

import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;

import tools.jackson.databind.JavaType;
import tools.jackson.databind.MapperFeature;
import tools.jackson.databind.ObjectReader;
import tools.jackson.databind.ObjectWriter;
import tools.jackson.databind.SerializationFeature;
import tools.jackson.databind.json.JsonMapper;

/**
 * Turns bodies into the bytes that are a message's identity, and back. {@code byte[]} and {@code String} are stored
 * as they are; anything else as canonical JSON (properties and map keys sorted, no indentation) so that equal
 * objects serialize byte-identically and merge.
 */
public final class BodyCodec {

    private final JsonMapper mapper;
    /** Readers per payload type: resolving the type and its deserializer once, not per message. */
    private final java.util.Map<Type, ObjectReader> readers = new java.util.concurrent.ConcurrentHashMap<>();
    /** Writers per body class, likewise: the serializer is found once, not on every send. */
    private final java.util.Map<Class<?>, ObjectWriter> writers = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * @param mapper the application's mapper (its modules and settings are kept); canonical ordering is forced on a
     *               copy
     */
    public BodyCodec(JsonMapper mapper) {
        this.mapper = mapper.rebuild()
                .enable(MapperFeature.SORT_PROPERTIES_ALPHABETICALLY)
                .disable(MapperFeature.SORT_CREATOR_PROPERTIES_FIRST)
                .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS)
                .disable(SerializationFeature.INDENT_OUTPUT)
                .addModule(new DirectCreatorModule())
                .build();
    }

    public BodyCodec() {
        this(JsonMapper.builder().findAndAddModules().build());
    }

    public byte[] encode(Object body) {
        if (body == null) {
            throw new RmqInvalidArgumentException("body", null, "must not be null");
        }
        if (body instanceof byte[] bytes) {
            return bytes;
        }
        if (body instanceof String text) {
            return text.getBytes(StandardCharsets.UTF_8);
        }
        try {
            ObjectWriter writer = writers.get(body.getClass());
            if (writer == null) {
                writer = writers.computeIfAbsent(body.getClass(), mapper::writerFor);
            }
            return writer.writeValueAsBytes(body);
        }
        catch (RuntimeException ex) {
            throw new RmqInvalidArgumentException("body", body.getClass().getName(),
                    "must be serializable to JSON: " + ex.getMessage());
        }
    }

    /**
     * Converts stored bytes to {@code type}; {@code byte[]} and {@code String} get the bytes as they are.
     *
     * @throws RuntimeException when the bytes cannot be read as {@code type} (the caller dead-letters the message)
     */
    @SuppressWarnings("unchecked")
    public <T> T decode(byte[] body, Type type) {
        if (type == byte[].class) {
            return (T) body;
        }
        if (type == String.class || type == CharSequence.class) {
            return (T) new String(body, StandardCharsets.UTF_8);
        }
        return reader(type).readValue(body);
    }

    /**
     * Resolves the deserializer for {@code type} now rather than at the first message: building it takes tens of
     * milliseconds in a fresh JVM (measured: the first messages of a delay benchmark ~100 ms late without this).
     */
    public void prepare(Type type) {
        if (type != byte[].class && type != String.class && type != CharSequence.class) {
            reader(type);
        }
    }

    private ObjectReader reader(Type type) {
        ObjectReader reader = readers.get(type);
        if (reader == null) {
            JavaType javaType = mapper.constructType(type);
            reader = readers.computeIfAbsent(type, t -> mapper.readerFor(javaType));
        }
        return reader;
    }

    public JsonMapper mapper() {
        return mapper;
    }
}
