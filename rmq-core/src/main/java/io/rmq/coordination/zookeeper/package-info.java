/**
 * The optional ZooKeeper coordinator of ORDERLY listeners (needs Apache Curator).
 * <p>
 * Types, parameters and return values are non-null unless annotated {@code @Nullable} (JSpecify).
 */
@NullMarked
package io.rmq.coordination.zookeeper;

import org.jspecify.annotations.NullMarked;
