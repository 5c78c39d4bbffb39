package io.rmq.core;

import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.util.List;

import tools.jackson.core.JacksonException;
import tools.jackson.core.JsonToken;
import tools.jackson.databind.exc.InvalidNullException;
import tools.jackson.databind.exc.MismatchedInputException;
import tools.jackson.databind.exc.UnrecognizedPropertyException;
import org.jspecify.annotations.Nullable;

/**
 * A body that is JSON but does not match the payload type it is read as: a required property is missing or null, a
 * property (or the body itself) has the wrong shape, or a property is unknown to a mapper that rejects those. The
 * message names the type and the property, never the body's content ({@link #reason} adds it where bodies may be
 * shown): {@code payload does not match io.shop.OrderRef: missing required property 'id'}. Retrying cannot help: a
 * listener's message goes to the dead queue at once.
 */
public class RmqPayloadMismatchException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final transient Type payloadType;
    private final String property;
    private final String problem;

    /**
     * @param payloadType the type the body was read as
     * @param property    the path of the property at fault ({@code id}, {@code items[2].id}), empty for the body itself
     * @param problem     what is wrong, naming the property
     */
    public RmqPayloadMismatchException(Type payloadType, String property, String problem, @Nullable Throwable cause) {
        super("payload does not match " + payloadType.getTypeName() + ": " + problem, cause);
        this.payloadType = payloadType;
        this.property = property;
        this.problem = problem;
    }

    public Type payloadType() {
        return payloadType;
    }

    /** The path of the property at fault ({@code id}, {@code items[2].id}, {@code [0].id}); empty for the body. */
    public String property() {
        return property;
    }

    /** What is wrong, naming the property: {@code missing required property 'id'}. */
    public String problem() {
        return problem;
    }

    /**
     * The message with the body's first {@code bodyChars} characters in it ({@code payload {"orderId":7} does not
     * match …}), or, with {@code bodyChars} 0, its size only ({@code payload of 13 bytes does not match …}).
     */
    public String reason(byte[] body, int bodyChars) {
        String shown;
        if (bodyChars > 0) {
            String text = new String(body, StandardCharsets.UTF_8);
            shown = text.length() > bodyChars ? text.substring(0, bodyChars) + "..." : text;
        }
        else {
            shown = "of " + body.length + " bytes";
        }
        return "payload " + shown + " does not match " + payloadType.getTypeName() + ": " + problem;
    }

    /**
     * Describes Jackson's mismatch in terms of the payload: the property by its JSON path, the problem in words that
     * do not quote the body (Jackson's own messages may: {@code from String "SECRET"}).
     */
    static RmqPayloadMismatchException of(Type payloadType, MismatchedInputException ex) {
        String path = path(ex.getPath());
        String named = "'" + path + "'";
        String message = ex.getOriginalMessage() == null ? "" : ex.getOriginalMessage();
        String problem;
        if (ex instanceof StrictPayloadModule.MissingPropertyException) {
            problem = "required property " + named + " is missing or null";
        }
        else if (message.startsWith("Missing required creator property") || message.startsWith("Missing creator property")) {
            problem = "missing required property " + named;
        }
        else if (ex instanceof InvalidNullException) {
            problem = "required property " + named + " is null";
        }
        else if (ex instanceof UnrecognizedPropertyException) {
            problem = "unknown property " + named;
        }
        else if (message.startsWith("Cannot map `null` into type")) {
            problem = "property " + named + " is missing or null, which primitive " + simpleName(ex.getTargetType())
                    + " cannot take";
        }
        else {
            String found = describe(ex.getCurrentToken());
            String expected = ex.getTargetType() == null ? null : simpleName(ex.getTargetType());
            String what = found == null || expected == null ? "" : ": " + found + " where " + expected + " is expected";
            problem = (path.isEmpty() ? "the body" : "property " + named) + " has the wrong shape" + what;
        }
        return new RmqPayloadMismatchException(payloadType, path, problem, ex);
    }

    /** The JSON path of Jackson's reference chain: {@code item.id}, {@code [2].id}, {@code lines[0].sku}. */
    private static String path(List<JacksonException.Reference> references) {
        StringBuilder path = new StringBuilder();
        for (JacksonException.Reference reference : references) {
            if (reference.getPropertyName() != null) {
                if (!path.isEmpty()) {
                    path.append('.');
                }
                path.append(reference.getPropertyName());
            }
            else if (reference.getIndex() >= 0) {
                path.append('[').append(reference.getIndex()).append(']');
            }
        }
        return path.toString();
    }

    private static String simpleName(@Nullable Class<?> type) {
        return type == null ? "?" : type.getSimpleName();
    }

    private static @Nullable String describe(@Nullable JsonToken token) {
        if (token == null) {
            return null;
        }
        return switch (token) {
            case START_OBJECT -> "an object";
            case START_ARRAY -> "an array";
            case VALUE_STRING -> "a string";
            case VALUE_NUMBER_INT -> "an integer";
            case VALUE_NUMBER_FLOAT -> "a decimal number";
            case VALUE_TRUE, VALUE_FALSE -> "a boolean";
            case VALUE_NULL -> "null";
            default -> null;
        };
    }
}
