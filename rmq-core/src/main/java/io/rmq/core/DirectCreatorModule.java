package io.rmq.core;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;

import tools.jackson.databind.BeanDescription;
import tools.jackson.databind.DeserializationConfig;
import tools.jackson.databind.DeserializationContext;
import tools.jackson.databind.deser.ValueInstantiator;
import tools.jackson.databind.deser.ValueInstantiators;
import tools.jackson.databind.deser.std.StdValueInstantiator;
import tools.jackson.databind.introspect.AnnotatedConstructor;
import tools.jackson.databind.module.SimpleModule;

/**
 * Calls the creator constructor of records and {@code @JsonCreator} classes through reflection's cached accessor
 * instead of Jackson's {@code MethodHandle.invokeWithArguments}, which builds a spreader on every call, a large part
 * of decoding a small record payload (BENCHMARKS.md). Anything unusual (factory methods,
 * custom instantiators, inaccessible constructors) keeps Jackson's own instantiator; failures are handed back to it
 * so errors read exactly as Jackson reports them.
 */
final class DirectCreatorModule extends SimpleModule {

    DirectCreatorModule() {
        super("rmq-direct-creator");
    }

    @Override
    public void setupModule(SetupContext context) {
        super.setupModule(context);
        context.addValueInstantiators(new ValueInstantiators.Base() {
            @Override
            public ValueInstantiator modifyValueInstantiator(DeserializationConfig config,
                    BeanDescription.Supplier beanDesc, ValueInstantiator defaultInstantiator) {
                return direct(defaultInstantiator);
            }
        });
    }

    static ValueInstantiator direct(ValueInstantiator instantiator) {
        if (instantiator.getClass() != StdValueInstantiator.class || !instantiator.canCreateFromObjectWith()
                || !(((StdValueInstantiator) instantiator).getWithArgsCreator() instanceof AnnotatedConstructor creator)) {
            return instantiator;
        }
        Constructor<?> constructor = creator.getAnnotated();
        if (!constructor.canAccess(null) && !constructor.trySetAccessible()) {
            return instantiator;
        }
        return new DirectInstantiator((StdValueInstantiator) instantiator, constructor);
    }

    private static final class DirectInstantiator extends StdValueInstantiator {

        private final Constructor<?> constructor;

        DirectInstantiator(StdValueInstantiator source, Constructor<?> constructor) {
            super(source);
            this.constructor = constructor;
        }

        @Override
        public Object createFromObjectWith(DeserializationContext context, Object[] args) {
            try {
                return constructor.newInstance(args);
            }
            catch (InvocationTargetException ex) {
                // the constructor ran and threw: report it as Jackson's own path would, without running it again
                // (its side effects must not happen twice)
                return context.handleInstantiationProblem(getValueClass(), args, rewrapCtorProblem(context,
                        ex.getCause() == null ? ex : ex.getCause()));
            }
            catch (ReflectiveOperationException | IllegalArgumentException ex) {
                // refused before the constructor ran (arguments, access): Jackson's path handles it as configured
                return super.createFromObjectWith(context, args);
            }
        }
    }
}
