package io.rmq.admin;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/** What the admin views share. Stateless. */
final class Views {

    private Views() {
    }

    /** Headers as a view keeps them: never null, unmodifiable, in the order they were sent. */
    static Map<String, String> headers(@Nullable Map<String, String> headers) {
        return headers == null || headers.isEmpty() ? Map.of()
                : Collections.unmodifiableMap(new LinkedHashMap<>(headers));
    }
}
