package io.rmq.engine;

import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;

/** Captures a generic type for tests: {@code new TypeRef<List<Order>>() { }.type()}. */
abstract class TypeRef<T> {

    Type type() {
        return ((ParameterizedType) getClass().getGenericSuperclass()).getActualTypeArguments()[0];
    }
}
