package io.rmq.core.internal;

import java.util.zip.CRC32;
import org.jspecify.annotations.Nullable;

/**
 * Routes a message to a slot: {@code CRC32(slotBasis ?: body) & (slotAmount - 1)}.
 */
public final class SlotRouter {

    private SlotRouter() {
    }

    /** The slot of a serialized body sent with {@code slotBasis} (null: the body is the basis). */
    public static int slot(byte[] member, @Nullable String slotBasis, int slotAmount) {
        return slot(slotBasis == null ? member : slotBasis.getBytes(java.nio.charset.StandardCharsets.UTF_8), slotAmount);
    }

    public static int slot(byte[] basis, int slotAmount) {
        if (slotAmount == 1) {
            return 0;
        }
        CRC32 crc = new CRC32();
        crc.update(basis, 0, basis.length);
        return (int) (crc.getValue() & (slotAmount - 1));
    }
}
